// Command simhour simulates, on the local stack, the ingest of a 1-hour
// 1080p30 movie (issue 22's measure) with a shorter clip and a scaled-down
// INGEST_INVOCATION_SECONDS, and extrapolates its figures to 108,000 frames
// with the arithmetic printed: invocations, Lambda GB-seconds and dollars at
// the deployed function's memory and budget, S3 requests and storage, and a
// verdict for each Lambda limit (duration, memory, /tmp, payload).
//
//	make sim-hour SIM_MINUTES=10 SIM_BUDGET=20 SIM_RENDITION=copy
//
// It generates the clip (clip.go), starts functions/local/stack in this
// process with its S3 endpoint behind a counting proxy (s3count.go),
// creates the movie through the API (POST /movies), PUTs the file to the
// presigned URL as the page does, and waits until the movie is ready. Each
// range (one ingest invocation, continued through the upload queue) is
// measured between the ingest's log records (ranges.go): its wall time,
// the CPU of the ffmpeg/ffprobe children (getrusage, so the machine's load
// does not count) and of this process, the peak RSS of the children and
// the bytes under the ingest's TMPDIR (sampled from /proc, sample.go), the
// bytes it read of the upload and the chunks it wrote. Run it under the
// emulators (make sim-hour does).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/ingest"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/video"
	"github.com/movietrace/tracinglocks/functions/local/emulators"
	"github.com/movietrace/tracinglocks/functions/local/stack"
)

// aws is the deployed ingest (infra/stack: TestDeployedIsTheStack) and the
// prices used (AWS's public price lists for us-east-1, arm64 Lambda).
var aws = deployed{
	BudgetSeconds: ingest.DefaultBudget.Seconds(), TimeoutSeconds: 900, MemoryMB: 2048, TmpMB: 512,
	MaxUploadBytes: 16 << 30, MaxMessage: 256 << 10,
	PerGBSecond: 0.0000133334, PerRequest: 0.20 / 1e6, PerPUT: 0.005 / 1000, PerGET: 0.0004 / 1000, PerGBMonth: 0.023,
	S3ReadMBps: 75, VCPUs: 1,
}

func main() {
	minutes := flag.Int("minutes", 10, "the clip's length in minutes (1080p30)")
	budget := flag.Int("budget", 20, "INGEST_INVOCATION_SECONDS of the simulation (1-900)")
	kind := flag.String("rendition", "copy", "copy: a camera-like H.264 with a closed GOP of 60 (remuxed); x264: H.264 with x264's default keyframes (encoded)")
	dir := flag.String("dir", "", "where the clips are kept (default .tools/sim)")
	wait := flag.Duration("wait", 3*time.Hour, "how long to wait for the ingest")
	flag.Parse()
	if err := run(*minutes, *budget, *kind, *dir, *wait); err != nil {
		fmt.Fprintln(os.Stderr, "sim-hour:", err)
		os.Exit(1)
	}
}

func loadavg() [3]float64 {
	var l [3]float64
	data, _ := os.ReadFile("/proc/loadavg")
	for i, f := range strings.Fields(string(data)) {
		if i < 3 {
			l[i], _ = strconv.ParseFloat(f, 64)
		}
	}
	return l
}

func run(minutes, budget int, kind, dir string, wait time.Duration) error {
	ddb, sqs, s3 := os.Getenv(envvar.DynamoDBEndpoint), os.Getenv(envvar.SQSEndpoint), os.Getenv(envvar.S3Endpoint)
	if ddb == "" || sqs == "" {
		return fmt.Errorf("%s and %s are not set: run it with make sim-hour", envvar.DynamoDBEndpoint, envvar.SQSEndpoint)
	}
	if s3 == "" {
		s3 = sqs
	}
	if budget < 1 || budget > 900 {
		return fmt.Errorf("-budget %d: 1-900 seconds", budget)
	}
	if dir == "" {
		tools, err := emulators.ToolsDir()
		if err != nil {
			return err
		}
		dir = filepath.Join(tools, "sim")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	clip, err := makeClip(ctx, dir, kind, minutes)
	if err != nil {
		return err
	}
	src, err := os.Stat(clip)
	if err != nil {
		return err
	}
	// The ingest's temporary files go where the sampler looks, and its
	// budget is the simulation's.
	tmp, err := os.MkdirTemp(dir, "tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for k, v := range map[string]string{"TMPDIR": tmp, envvar.IngestInvocationSeconds: strconv.Itoa(budget)} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}

	counter, err := startS3Counter(s3)
	if err != nil {
		return err
	}
	defer counter.close()
	samp := &sampler{tmp: tmp}
	stopSampling := make(chan struct{})
	defer close(stopSampling)
	go samp.run(stopSampling, 100*time.Millisecond)
	rec := newRecorder(counter, samp)
	st, err := stack.Start(ctx, stack.Options{DynamoDBEndpoint: ddb, SQSEndpoint: sqs, S3Endpoint: counter.URL,
		Prefix: fmt.Sprintf("simhour-%d", time.Now().UnixNano()), NoSeed: true, Log: slog.New(rec),
		MaxUploadBytes: max(src.Size(), httpapi.DefaultMaxUploadBytes)})
	if err != nil {
		return err
	}
	defer st.Stop()

	m := measured{Kind: kind, SourceBytes: src.Size(), Budget: time.Duration(budget) * time.Second, LoadStart: loadavg()}
	fmt.Printf("sim-hour: %s (%d bytes), INGEST_INVOCATION_SECONDS=%d, load average %.2f %.2f %.2f\n",
		filepath.Base(clip), src.Size(), budget, m.LoadStart[0], m.LoadStart[1], m.LoadStart[2])
	id, err := upload(ctx, st.URL, clip, src.Size(), rec)
	if err != nil {
		return err
	}
	began := time.Now()
	if err := waitReady(ctx, st.URL, id, rec); err != nil {
		return err
	}
	m.UploadToReady = time.Since(began)
	m.LoadEnd = loadavg()
	m.Ranges = rec.figures()
	row, err := st.Movies.Get(ctx, id)
	if err != nil || row.Video == nil {
		return fmt.Errorf("the ready movie: %+v %v", row, err)
	}
	m.Frames, m.ChunkFrames, m.Rendition = row.FrameCount, row.Video.ChunkFrames, row.Video.Rendition
	if m.Pre, err = measurePreamble(ctx, st, id, counter); err != nil {
		return err
	}
	report(os.Stdout, m, clip, ingest.ContinuationBody(id), rec.planned["why"])
	return nil
}

// upload creates the movie through the API and PUTs the file to the
// presigned URL, as the page does; the recorder's first window starts when
// the PUT is answered.
func upload(ctx context.Context, base, path string, size int64, rec *recorder) (string, error) {
	body, _ := json.Marshal(map[string]any{"title": "sim-hour " + filepath.Base(path), "fileName": filepath.Base(path),
		"contentType": "video/mp4", "sizeBytes": size})
	var created struct {
		Movie  struct{ ID string } `json:"movie"`
		Upload struct {
			Method  string            `json:"method"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"upload"`
	}
	if err := api(ctx, http.MethodPost, base+"movies", body, http.StatusCreated, &created); err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	put, err := http.NewRequestWithContext(ctx, created.Upload.Method, created.Upload.URL, f)
	if err != nil {
		return "", err
	}
	put.ContentLength = size
	for k, v := range created.Upload.Headers {
		put.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(put)
	if err != nil {
		return "", err
	}
	msg, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("PUT the upload: %s %s", res.Status, msg)
	}
	rec.start()
	return created.Movie.ID, nil
}

func api(ctx context.Context, method, url string, body []byte, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Dev-User", "dev-simhour")
	req.Header.Set("X-Dev-User-Name", "sim-hour")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != want {
		return fmt.Errorf("%s %s: %s %s", method, url, res.Status, data)
	}
	return json.Unmarshal(data, out)
}

// waitReady polls GET /movies/{id} as the page does, printing its
// progress, until the movie is ready (or failed).
func waitReady(ctx context.Context, base, id string, rec *recorder) error {
	last := time.Now()
	for {
		var m struct {
			Status        string `json:"status"`
			IngestFailure string `json:"ingestFailure"`
			Progress      struct {
				FramesWritten int `json:"framesWritten"`
				TotalFrames   int `json:"totalFrames"`
			} `json:"progress"`
		}
		if err := api(ctx, http.MethodGet, base+"movies/"+id, nil, http.StatusOK, &m); err != nil {
			return err
		}
		switch m.Status {
		case "awaiting_upload":
		case "ready":
			<-rec.done // the last range's figures are taken
			return nil
		default:
			return fmt.Errorf("the movie is %s: %s", m.Status, m.IngestFailure)
		}
		if time.Since(last) > 30*time.Second {
			last = time.Now()
			fmt.Printf("sim-hour: %s frames %d of %d, %d ranges so far, load average %.2f\n", time.Now().UTC().Format("15:04:05"),
				m.Progress.FramesWritten, m.Progress.TotalFrames, len(rec.figures()), loadavg()[0])
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready in time: %w", ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// measurePreamble runs what the first range runs before its first frame
// (the ingest's decision: video.ProbeWithTiming, media.PlanRendition) once
// more on the stored upload.
func measurePreamble(ctx context.Context, st *stack.Stack, id string, counter *s3Counter) (preamble, error) {
	url, err := st.Files.UploadURL(ctx, id, time.Hour)
	if err != nil {
		return preamble{}, err
	}
	counter.take()
	c0, _ := rusage(syscall.RUSAGE_CHILDREN)
	began := time.Now()
	info, _, err := video.ProbeWithTiming(ctx, url)
	if err != nil {
		return preamble{}, err
	}
	_ = media.PlanRendition(ctx, url, info, 0)
	c1, _ := rusage(syscall.RUSAGE_CHILDREN)
	n := counter.take()
	return preamble{CPU: c1 - c0, Wall: time.Since(began), ReadBytes: n.UploadReadBytes, GETs: n.UploadGETs}, nil
}

func report(w io.Writer, m measured, clip, continuation, why string) {
	fmt.Fprintf(w, "\n## sim-hour: %d-minute 1080p30 clip, rendition %s (chunks of %d frames), INGEST_INVOCATION_SECONDS=%.0f\n\n",
		m.Frames/1800, m.Rendition, m.ChunkFrames, m.Budget.Seconds())
	fmt.Fprintf(w, "Clip: %s, %d bytes, %d frames (%s). ", filepath.Base(clip), m.SourceBytes, m.Frames, clipCommand(m.Kind))
	if why != "" {
		fmt.Fprintf(w, "Encoded because: %s. ", why)
	}
	fmt.Fprintf(w, "Upload to ready: %.1f s in %d ranges; load average %.2f %.2f %.2f at the start, %.2f %.2f %.2f at the end (2-core machine; CPU seconds are getrusage user+system, independent of load; wall seconds are not).\n\n",
		m.UploadToReady.Seconds(), len(m.Ranges), m.LoadStart[0], m.LoadStart[1], m.LoadStart[2], m.LoadEnd[0], m.LoadEnd[1], m.LoadEnd[2])
	writeRanges(w, m)
	fmt.Fprintf(w, "\n(wall s: the invocation's own time from its log; window: since the previous range ended, queue latency included; ffmpeg CPU: the children that exited in the window; Go CPU: this whole process, i.e. the local stack and this tool's S3 counting proxy, an upper bound of the ingest's own; RSS and tmp sampled every 100 ms from /proc.)\n")
	aws := aws
	aws.ContinueSize = len(continuation)
	writeHour(w, m, aws)
	fmt.Fprintf(w, "\nAssumed, not measured: per-core speed of Lambda's arm64 (Graviton) equal to this machine's; %.2f vCPU counted (Lambda gives %.0f MB / 1769 = %.2f); S3 read rate %.0f MB/s. Prices (us-east-1): Lambda arm64 USD %.10f per GB-s and USD 0.20 per million requests, S3 Standard USD 0.005 per 1,000 PUTs, USD 0.0004 per 1,000 GETs, USD 0.023 per GB-month.\n",
		aws.VCPUs, aws.MemoryMB, aws.MemoryMB/1769, aws.S3ReadMBps, aws.PerGBSecond)
}
