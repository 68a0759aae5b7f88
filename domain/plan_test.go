package domain_test

import (
	"testing"

	"github.com/movietrace/tracinglocks/domain"
)

func TestPlanTrace(t *testing.T) {
	movie := func(start, end, interval, clean int) domain.Movie {
		m := newMovie(t)
		m.Settings.Trim = domain.Trim{Start: start, End: end}
		m.Settings.CaptureInterval = interval
		m.CleanBefore = clean
		return m
	}
	job := func(from int) domain.Lease { return domain.Lease{Kind: domain.LeaseTracing, ID: job1, FromFrame: from} }
	for _, tc := range []struct {
		name  string
		m     domain.Movie
		from  int
		want  domain.TracePlan
		first []int // the first frames of the plan
	}{
		{
			name: "a first trace covers the whole trim and clears everything",
			m:    movie(0, 1000, 1, 0), from: 0,
			want: domain.TracePlan{ClearFrom: 0, From: 0, End: 1000, Interval: 1, Frames: 1000},
		},
		{
			name: "retracing from F with CleanBefore above F starts at F",
			m:    movie(0, 1000, 1, 1000), from: 400,
			want: domain.TracePlan{ClearFrom: 400, From: 400, End: 1000, Interval: 1, Frames: 600, Kept: 400},
		},
		{
			name: "retracing from F with CleanBefore below F starts at CleanBefore: frames after it may be a dead job's",
			m:    movie(0, 1000, 1, 250), from: 400,
			want: domain.TracePlan{ClearFrom: 250, From: 250, End: 1000, Interval: 1, Frames: 750, Kept: 250},
		},
		{
			name: "retracing from F == CleanBefore starts at F",
			m:    movie(0, 1000, 1, 400), from: 400,
			want: domain.TracePlan{ClearFrom: 400, From: 400, End: 1000, Interval: 1, Frames: 600, Kept: 400},
		},
		{
			name: "an off-grid F is aligned up to the grid that begins at Trim.Start; clearing starts at F",
			m:    movie(10, 110, 7, 110), from: 20,
			// grid 10, 17, 24, ...; 20 is off-grid, so 24 is the first frame.
			want:  domain.TracePlan{ClearFrom: 20, From: 24, End: 110, Interval: 7, Frames: 13, Kept: 2},
			first: []int{24, 31, 38},
		},
		{
			name: "an on-grid F is kept",
			m:    movie(10, 110, 7, 110), from: 24,
			want: domain.TracePlan{ClearFrom: 24, From: 24, End: 110, Interval: 7, Frames: 13, Kept: 2},
		},
		{
			name: "retracing from Trim.Start clears from frame 0: frames of an older, wider trim go too",
			m:    movie(100, 200, 10, 200), from: 100,
			want: domain.TracePlan{ClearFrom: 0, From: 100, End: 200, Interval: 10, Frames: 10},
		},
		{
			name: "CleanBefore below Trim.Start means retracing the whole trim and clearing from 0",
			m:    movie(100, 200, 10, 30), from: 150,
			want: domain.TracePlan{ClearFrom: 0, From: 100, End: 200, Interval: 10, Frames: 10},
		},
		{
			name: "the frame count rounds up: the last grid frame below End is traced",
			m:    movie(0, 10, 3, 0), from: 0,
			want:  domain.TracePlan{ClearFrom: 0, From: 0, End: 10, Interval: 3, Frames: 4},
			first: []int{0, 3, 6, 9},
		},
		{
			name: "an interval longer than the trim traces only Trim.Start",
			m:    movie(5, 10, 100, 0), from: 5,
			want:  domain.TracePlan{ClearFrom: 0, From: 5, End: 10, Interval: 100, Frames: 1},
			first: []int{5},
		},
		{
			name: "an interval longer than the rest of the trim traces nothing after an off-grid F",
			m:    movie(5, 10, 100, 10), from: 7,
			want: domain.TracePlan{ClearFrom: 7, From: 105, End: 10, Interval: 100, Frames: 0, Kept: 1},
		},
		{
			name: "a zero interval (never stored) is treated as 1",
			m:    movie(0, 4, 0, 4), from: 2,
			want: domain.TracePlan{ClearFrom: 2, From: 2, End: 4, Interval: 1, Frames: 2, Kept: 2},
		},
		{
			name: "a one-frame trim from its only frame",
			m:    movie(999, 1000, 1, 1000), from: 999,
			want: domain.TracePlan{ClearFrom: 0, From: 999, End: 1000, Interval: 1, Frames: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := domain.PlanTrace(tc.m, job(tc.from))
			if got != tc.want {
				t.Fatalf("PlanTrace = %+v\n          want %+v", got, tc.want)
			}
			requirePlanSound(t, tc.m, job(tc.from), got)
			for i, f := range tc.first {
				if got.FrameAt(i) != f {
					t.Fatalf("FrameAt(%d) = %d, want %d", i, got.FrameAt(i), f)
				}
			}
		})
	}
}

// requirePlanSound checks what every plan owes, whatever the movie: it never
// starts after the requested frame or after CleanBefore (so no frame of a dead
// job survives), every frame is on the grid inside the trim, and ClearFrom is
// at or below the first traced frame.
func requirePlanSound(tb TB, m domain.Movie, job domain.Lease, p domain.TracePlan) {
	tb.Helper()
	s := m.Settings
	interval := max(s.CaptureInterval, 1)
	start := max(min(job.FromFrame, m.CleanBefore), s.Trim.Start)
	switch {
	case p.ClearFrom > start:
		tb.Fatalf("plan %+v clears from %d, after the dirty frame %d", p, p.ClearFrom, start)
	case p.ClearFrom > m.CleanBefore:
		tb.Fatalf("plan %+v clears from %d, above CleanBefore %d", p, p.ClearFrom, m.CleanBefore)
	case p.From < start || p.From >= start+interval:
		tb.Fatalf("plan %+v starts at %d, want the first grid frame at or after %d", p, p.From, start)
	case (p.From-s.Trim.Start)%interval != 0:
		tb.Fatalf("plan %+v starts off the grid of trim %+v", p, s.Trim)
	case p.Frames < 0 || p.Frames > 0 && p.FrameAt(p.Frames-1) >= s.Trim.End || p.FrameAt(p.Frames) < s.Trim.End:
		tb.Fatalf("plan %+v does not cover the grid below %d exactly", p, s.Trim.End)
	case p.End != s.Trim.End || p.Interval != interval:
		tb.Fatalf("plan %+v, trim %+v interval %d", p, s.Trim, interval)
	}
}
