package main

import (
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

func TestExtrapolate(t *testing.T) {
	d := deployed{BudgetSeconds: 600, TimeoutSeconds: 900, MemoryMB: 2048, TmpMB: 512, S3ReadMBps: 75, VCPUs: 1,
		PerGBSecond: 0.0000133334, PerRequest: 0.2e-6, PerPUT: 0.005 / 1000, PerGET: 0.0004 / 1000, PerGBMonth: 0.023}
	// The first range decides (its preamble: 4 s), the second reads the
	// decision; each ends 5 s past its budget.
	twoRanges := func(cpu time.Duration) measured {
		r := rangeFigures{ChildCPU: cpu, Took: 25 * time.Second,
			S3: s3Counts{ChunkPUTs: 150, ChunkPUTBytes: 300e6, UploadGETs: 5}}
		first := r
		first.Took += 4 * time.Second
		return measured{Frames: 18000, SourceBytes: 600e6, Budget: 20 * time.Second, Ranges: []rangeFigures{first, r},
			Pre: preamble{CPU: 4 * time.Second, Wall: 4 * time.Second, ReadBytes: 1200e6}}
	}
	tests := []struct {
		name           string
		m              measured
		invocations    int
		perFrame       float64 // s
		lambdaSeconds  float64
		rangeWall      float64
		puts, gets     float64
		storageUSDWant float64
	}{
		// 6x the clip; work (120 - 4) / 18,000 s a frame; the preamble, in
		// the first range only, at an hour reads 7.2 GB: 96 s at 75 MB/s
		// (more than its 24 CPU-s); GETs 10 x 6.
		{"a remux", twoRanges(60 * time.Second), 2, 116.0 / 18000, 96 + 2*5 + 696, 96 + 600 + 5, 1801, 60, 7.2 * 0.023},
		{"an encoding", twoRanges(500 * time.Second), 10, 996.0 / 18000, 96 + 10*5 + 5976, 96 + 600 + 5, 1801, 60, 7.2 * 0.023},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*max(1, math.Abs(b)) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := extrapolate(tt.m, d)
			if h.Invocations != tt.invocations || !near(h.WorkPerFrame, tt.perFrame) || !near(h.LambdaSeconds, tt.lambdaSeconds) ||
				!near(h.RangeWall, tt.rangeWall) || !near(h.PUTs, tt.puts) || !near(h.GETs, tt.gets) || !near(h.StorageUSD, tt.storageUSDWant) {
				t.Errorf("extrapolate = %+v", h)
			}
			if want := tt.lambdaSeconds * 2 * d.PerGBSecond; !near(h.GBSeconds, tt.lambdaSeconds*2) || !near(h.LambdaUSD, want+float64(tt.invocations)*d.PerRequest) {
				t.Errorf("GB-s %v USD %v", h.GBSeconds, h.LambdaUSD)
			}
			writeHour(io.Discard, tt.m, d) // prints without a panic
		})
	}
}

// A clip whose ranges cost nothing beyond their preambles is one
// invocation, not a division by zero.
func TestExtrapolateWithoutWork(t *testing.T) {
	m := measured{Frames: 100, SourceBytes: 1, Budget: time.Second, Ranges: []rangeFigures{{}},
		Pre: preamble{CPU: time.Second}}
	h := extrapolate(m, deployed{BudgetSeconds: 600, VCPUs: 1, S3ReadMBps: 75, MemoryMB: 2048})
	if h.Invocations != 1 || h.WorkPerFrame != 0 || math.IsNaN(h.LambdaSeconds) {
		t.Errorf("%+v", h)
	}
}

// A /tmp peak near the whole upload (the remux running ahead) grows with
// the movie: it is judged at an hour; a peak of a few chunks is not.
func TestTmpVerdictScalesWhatFollowsTheMovie(t *testing.T) {
	d := deployed{BudgetSeconds: 600, VCPUs: 1, S3ReadMBps: 75, MemoryMB: 2048, TmpMB: 512, TimeoutSeconds: 900, MaxMessage: 1}
	for _, tt := range []struct {
		tmp  int64
		want string
	}{{60e6, "not growing with the movie -> fits"}, {600e6, "at an hour -> DOES NOT FIT"}} {
		m := measured{Frames: 18000, SourceBytes: 606e6, Budget: time.Minute,
			Ranges: []rangeFigures{{ChildCPU: time.Minute, Peaks: peaks{tmpBytes: tt.tmp}}}}
		var b strings.Builder
		writeHour(&b, m, d)
		if !strings.Contains(b.String(), tt.want) {
			t.Errorf("peak %d: %s", tt.tmp, b.String())
		}
	}
}
