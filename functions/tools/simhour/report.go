package main

import (
	"fmt"
	"io"
	"math"
	"time"
)

// hourFrames is the movie of issue 22's measure: one hour at 30 fps.
const hourFrames = 108000

// deployed is what the extrapolation assumes of AWS: the ingest function
// as infra/stack declares it (checked by TestDeployedIsTheStack) and the
// published prices it uses (us-east-1, read 2026-12; stated in the output).
type deployed struct {
	BudgetSeconds  float64 // INGEST_INVOCATION_SECONDS in AWS (not set: ingest.DefaultBudget)
	TimeoutSeconds float64 // the function's timeout
	MemoryMB       float64 // the function's memory
	TmpMB          float64 // its /tmp (ephemeral storage; infra sets none: Lambda's default)
	MaxUploadBytes int64   // MOVIE_MAX_BYTES in AWS (infra/stack.MovieMaxBytes)
	MaxMessage     int     // SQS's largest message, the continuation's limit
	// Prices, USD.
	PerGBSecond  float64 // Lambda arm64 duration
	PerRequest   float64 // Lambda request
	PerPUT       float64 // S3 Standard PUT
	PerGET       float64 // S3 Standard GET
	PerGBMonth   float64 // S3 Standard storage
	S3ReadMBps   float64 // assumed S3 read rate of one ffmpeg stream in Lambda (not measured here)
	VCPUs        float64 // vCPUs the extrapolation counts on (Lambda gives MemoryMB/1769)
	ContinueSize int     // bytes of a continuation message (ingest.ContinuationBody)
}

// preamble is what every range does before its first frame, measured on
// the uploaded file once more after the ingest: video.Probe (which counts
// packets: a read of the whole file) and media.PlanRendition (for H.264,
// a demux of every packet with its checksum: another whole read), both
// over the presigned GET.
type preamble struct {
	CPU, Wall time.Duration
	ReadBytes int64
	GETs      int
}

// measured is one simulation's outcome.
type measured struct {
	Kind               string
	Rendition          string // what the row says
	ChunkFrames        int
	Frames             int
	SourceBytes        int64
	Budget             time.Duration // INGEST_INVOCATION_SECONDS of the simulation
	Ranges             []rangeFigures
	Pre                preamble
	UploadToReady      time.Duration
	LoadStart, LoadEnd [3]float64 // load averages at the start and the end
}

func (m measured) totals() (t rangeFigures) {
	for _, r := range m.Ranges {
		t.ChildCPU += r.ChildCPU
		t.GoCPU += r.GoCPU
		t.Took += r.Took
		t.S3.add(r.S3)
		t.Peaks.childHWM = max(t.Peaks.childHWM, r.Peaks.childHWM)
		t.Peaks.childSum = max(t.Peaks.childSum, r.Peaks.childSum)
		t.Peaks.total = max(t.Peaks.total, r.Peaks.total)
		t.Peaks.selfRSS = max(t.Peaks.selfRSS, r.Peaks.selfRSS)
		t.Peaks.tmpBytes = max(t.Peaks.tmpBytes, r.Peaks.tmpBytes)
		t.ChildMaxKB = max(t.ChildMaxKB, r.ChildMaxKB)
		t.Remuxed += r.Remuxed
	}
	return t
}

func mb(n int64) float64 { return float64(n) / 1e6 }

// writeRanges prints the per-range table.
func writeRanges(w io.Writer, m measured) {
	fmt.Fprintln(w, "| range | frames | remuxed chunks | wall s (took) | window s | ffmpeg CPU s | Go CPU s | peak child RSS MB | peak RSS all MB | peak tmp MB | upload GETs | upload MB read | x upload | chunk PUTs | chunk MB |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i, r := range m.Ranges {
		remuxed := "?"
		if r.RemuxKnown {
			remuxed = fmt.Sprint(r.Remuxed)
		}
		fmt.Fprintf(w, "| %d | %d-%d | %s | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f | %.1f | %d | %.1f | %.2f | %d | %.1f |\n",
			i+1, r.From, r.To, remuxed, r.Took.Seconds(), r.Window.Seconds(), r.ChildCPU.Seconds(), r.GoCPU.Seconds(),
			mb(r.Peaks.childHWM), mb(r.Peaks.total), mb(r.Peaks.tmpBytes), r.S3.UploadGETs, mb(r.S3.UploadReadBytes),
			float64(r.S3.UploadReadBytes)/float64(m.SourceBytes), r.S3.ChunkPUTs, mb(r.S3.ChunkPUTBytes))
	}
	t := m.totals()
	fmt.Fprintf(w, "| all %d | %d | %d+ | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f | %.1f | %d | %.1f | %.2f | %d | %.1f |\n",
		len(m.Ranges), m.Frames, t.Remuxed, t.Took.Seconds(), m.UploadToReady.Seconds(), t.ChildCPU.Seconds(), t.GoCPU.Seconds(),
		mb(t.Peaks.childHWM), mb(t.Peaks.total), mb(t.Peaks.tmpBytes), t.S3.UploadGETs, mb(t.S3.UploadReadBytes),
		float64(t.S3.UploadReadBytes)/float64(m.SourceBytes), t.S3.ChunkPUTs, mb(t.S3.ChunkPUTBytes))
}

// hour is the extrapolation to hourFrames.
type hour struct {
	Scale                     float64 // hourFrames / frames
	WorkPerFrame              float64 // CPU-s per frame, the ranges' CPU without the first range's preamble
	PreCPU, PreBytes, PreWall float64 // the preamble at an hour (s, bytes, s): the first range's only
	MaxPreWall                float64 // the preamble of a MOVIE_MAX_BYTES upload, s
	FramesPerRange            float64
	Invocations               int
	RangeWall                 float64 // one range's wall in AWS, s
	Tail                      float64 // a range's wall past budget and preamble, measured, s
	LambdaSeconds, GBSeconds  float64
	LambdaUSD                 float64
	PUTs, GETs                float64
	S3RequestUSD              float64
	SourceBytes, ChunkBytes   float64
	StorageUSD                float64 // per month
	PeakTotal, PeakTmp        int64   // measured, bytes
}

func extrapolate(m measured, d deployed) hour {
	t := m.totals()
	h := hour{Scale: float64(hourFrames) / float64(m.Frames)}
	// Only the first range decides (probe and plan: the preamble) and
	// records it; the later ones read the record (media.Decision).
	work := max(t.ChildCPU.Seconds()-m.Pre.CPU.Seconds(), 0)
	h.WorkPerFrame = work / float64(m.Frames)
	h.PreCPU = m.Pre.CPU.Seconds() * h.Scale
	h.PreBytes = float64(m.Pre.ReadBytes) * h.Scale
	h.PreWall = max(h.PreCPU, h.PreBytes/(d.S3ReadMBps*1e6))
	if m.SourceBytes > 0 {
		big := float64(d.MaxUploadBytes) / float64(m.SourceBytes)
		h.MaxPreWall = max(m.Pre.CPU.Seconds()*big, float64(m.Pre.ReadBytes)*big/(d.S3ReadMBps*1e6))
	}
	for i, r := range m.Ranges {
		pre := 0.0
		if i == 0 {
			pre = m.Pre.Wall.Seconds()
		}
		h.Tail = max(h.Tail, r.Took.Seconds()-m.Budget.Seconds()-pre)
	}
	h.FramesPerRange = math.Inf(1)
	if h.WorkPerFrame > 0 {
		h.FramesPerRange = d.BudgetSeconds * d.VCPUs / h.WorkPerFrame
	}
	h.Invocations = max(1, int(math.Ceil(hourFrames/h.FramesPerRange)))
	workWall := hourFrames * h.WorkPerFrame / d.VCPUs
	h.RangeWall = h.PreWall + min(d.BudgetSeconds, workWall) + h.Tail
	h.LambdaSeconds = h.PreWall + float64(h.Invocations)*h.Tail + workWall
	h.GBSeconds = h.LambdaSeconds * d.MemoryMB / 1024
	h.LambdaUSD = h.GBSeconds*d.PerGBSecond + float64(h.Invocations)*d.PerRequest
	h.PUTs = float64(t.S3.ChunkPUTs)*h.Scale + 1
	// The remux's GETs follow its windows, so the frames.
	h.GETs = float64(t.S3.UploadGETs) * h.Scale
	h.S3RequestUSD = h.PUTs*d.PerPUT + h.GETs*d.PerGET
	h.SourceBytes = float64(m.SourceBytes) * h.Scale
	h.ChunkBytes = float64(t.S3.ChunkPUTBytes) * h.Scale
	h.StorageUSD = (h.SourceBytes + h.ChunkBytes) / 1e9 * d.PerGBMonth
	h.PeakTotal, h.PeakTmp = t.Peaks.total, t.Peaks.tmpBytes
	return h
}

func verdict(ok bool) string {
	if ok {
		return "fits"
	}
	return "DOES NOT FIT"
}

// writeHour prints the extrapolation with its arithmetic and a verdict per
// limit.
func writeHour(w io.Writer, m measured, d deployed) hour {
	h := extrapolate(m, d)
	t := m.totals()
	fmt.Fprintf(w, "\nOne hour of 1080p30 = %d frames = %.1f x this clip's %d frames.\n", hourFrames, h.Scale, m.Frames)
	fmt.Fprintf(w, "- Preamble of the first range only (media.Decide: one ffprobe over the presigned GET, measured once on this upload; later ranges read the recorded decision): %.2f CPU-s, %.1f MB read (%.2f x the upload), %d GETs; at an hour x %.1f: %.1f CPU-s and %.0f MB, so %.1f s of wall (the larger of CPU and bytes / %.0f MB/s, an assumed S3 read rate, not measured)\n",
		m.Pre.CPU.Seconds(), mb(m.Pre.ReadBytes), float64(m.Pre.ReadBytes)/float64(m.SourceBytes), m.Pre.GETs, h.Scale, h.PreCPU, h.PreBytes/1e6, h.PreWall, d.S3ReadMBps)
	fmt.Fprintf(w, "- Work per frame: (%.1f ffmpeg/ffprobe CPU-s - one preamble %.2f) / %d frames = %.2f ms per frame\n",
		t.ChildCPU.Seconds(), m.Pre.CPU.Seconds(), m.Frames, 1000*h.WorkPerFrame)
	fmt.Fprintf(w, "- Frames per range at INGEST_INVOCATION_SECONDS=%.0f on %.2f vCPU: %.0f x %.2f / %.4f = %.0f; invocations = ceil(%d / %.0f) = %d\n",
		d.BudgetSeconds, d.VCPUs, d.BudgetSeconds, d.VCPUs, h.WorkPerFrame, h.FramesPerRange, hourFrames, h.FramesPerRange, h.Invocations)
	fmt.Fprintf(w, "- The first range's wall (the longest): preamble %.1f + work <= %.0f + tail %.1f (measured: a range's wall past its budget and preamble) = %.1f s\n",
		h.PreWall, d.BudgetSeconds, h.Tail, h.RangeWall)
	fmt.Fprintf(w, "- Lambda: %.1f + %d x %.1f + %d x %.4f / %.2f = %.0f s; x %.3f GB = %.0f GB-s; x USD %.10f + %d x USD %.7f = USD %.4f\n",
		h.PreWall, h.Invocations, h.Tail, hourFrames, h.WorkPerFrame, d.VCPUs, h.LambdaSeconds, d.MemoryMB/1024, h.GBSeconds, d.PerGBSecond,
		h.Invocations, d.PerRequest, h.LambdaUSD)
	fmt.Fprintf(w, "- S3 requests: %.0f PUTs (%d chunk PUTs x %.1f + the upload's) x USD %.6f + %.0f GETs (%d of the upload x %.1f) x USD %.7f = USD %.4f\n",
		h.PUTs, t.S3.ChunkPUTs, h.Scale, d.PerPUT, h.GETs, t.S3.UploadGETs, h.Scale, d.PerGET, h.S3RequestUSD)
	fmt.Fprintf(w, "- Storage: upload %.2f GB + rendition %.2f GB (%.2f x the source) = USD %.3f a month at USD %.3f/GB-month\n",
		h.SourceBytes/1e9, h.ChunkBytes/1e9, h.ChunkBytes/h.SourceBytes, h.StorageUSD, d.PerGBMonth)
	fmt.Fprintln(w, "\nLambda limits:")
	fmt.Fprintf(w, "- Duration (%.0f s per invocation): a range runs %.1f s at an hour -> %s; here the longest range took %.1f s with a budget of %.0f s\n",
		d.TimeoutSeconds, h.RangeWall, verdict(h.RangeWall <= d.TimeoutSeconds), maxTook(m), m.Budget.Seconds())
	fmt.Fprintf(w, "- Memory (%.0f MB): peak RSS of this process (the whole local stack) + its ffmpeg/ffprobe children at one moment %.0f MB (largest child %.0f MB; getrusage ru_maxrss of the children %.0f MB) -> %s\n",
		d.MemoryMB, mb(h.PeakTotal), mb(t.Peaks.childHWM), float64(t.ChildMaxKB)/1000*1.024, verdict(float64(h.PeakTotal) <= d.MemoryMB*(1<<20)))
	// A peak near the whole upload follows the rest of the movie (the remux
	// running ahead of its proof): it grows with the movie's length.
	tmpHour, how := float64(h.PeakTmp), "bounded by a few chunks, not growing with the movie"
	if float64(h.PeakTmp) > float64(m.SourceBytes)/2 {
		tmpHour, how = tmpHour*h.Scale, fmt.Sprintf("about the whole upload, so it grows with the movie: x %.1f = %.0f MB at an hour", h.Scale, tmpHour*h.Scale/1e6)
	}
	fmt.Fprintf(w, "- /tmp (%.0f MB): peak %.1f MB under the ingest's TMPDIR, %s -> %s\n",
		d.TmpMB, mb(h.PeakTmp), how, verdict(tmpHour <= d.TmpMB*(1<<20)))
	fmt.Fprintf(w, "- Payload: the continuation message is %d bytes (SQS and asynchronous payloads: %d) -> %s; the upload is read by URL, never carried in a payload\n",
		d.ContinueSize, d.MaxMessage, verdict(d.ContinueSize <= d.MaxMessage))
	fmt.Fprintf(w, "- Not a Lambda limit: the hour's upload is %.2f GB; MOVIE_MAX_BYTES in AWS is %.2f GB -> %s\n",
		h.SourceBytes/1e9, float64(d.MaxUploadBytes)/1e9, verdict(h.SourceBytes <= float64(d.MaxUploadBytes)))
	// The largest upload's first range reads it whole before its first
	// chunk, which must be done by the hard deadline (a minute before the
	// timeout: ingest.hardDeadline).
	fmt.Fprintf(w, "- The first range of a MOVIE_MAX_BYTES upload: preamble %.2f x %.2f GB / %.0f MB/s = %.0f s, before its first chunk, by the hard deadline at %.0f s -> %s\n",
		float64(m.Pre.ReadBytes)/float64(max(m.SourceBytes, 1)), float64(d.MaxUploadBytes)/1e9, d.S3ReadMBps, h.MaxPreWall, d.TimeoutSeconds-60,
		verdict(h.MaxPreWall+h.Tail <= d.TimeoutSeconds-60))
	return h
}

func maxTook(m measured) float64 {
	var s float64
	for _, r := range m.Ranges {
		s = max(s, r.Took.Seconds())
	}
	return s
}
