package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"pgregory.net/rapid"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
)

// The differential test: for random stored movies and random commands, the
// domain's decision (domain.Execute) and DynamoDB Local's evaluation of the
// store's condition expression must agree, and an accepted write must store
// exactly the domain's next movie. This is what keeps the conditions a
// translation of the domain's rules rather than a second, drifting copy.

// A small pool of IDs makes matches, mismatches and reuse all likely.
var idPool = []string{
	"0123456789abcdef0123456789abcdef",
	"fedcba9876543210fedcba9876543210",
	"00000000000000000000000000000001",
}

var users = []domain.User{{ID: "u1", Name: "Ada"}, {ID: "u2", Name: "Brian"}}

// genNow is whole milliseconds: the stored precision.
var genNow = t0.Add(123 * time.Millisecond)

// genOffset clusters times around the expiry boundary (-1ms, 0, +1ms).
func genOffset(t *rapid.T, label string) time.Duration {
	return time.Duration(rapid.SampledFrom([]int{-60000, -1001, -1, 0, 1, 1000, 60000}).Draw(t, label)) * time.Millisecond
}

func genLease(t *rapid.T) *domain.Lease {
	if rapid.IntRange(0, 3).Draw(t, "noLease") == 0 {
		return nil
	}
	kind := rapid.SampledFrom([]domain.LeaseKind{domain.LeaseAnalysis, domain.LeaseTracing}).Draw(t, "kind")
	u := rapid.SampledFrom(users).Draw(t, "holder")
	expires := genNow.Add(genOffset(t, "expiresIn"))
	return &domain.Lease{
		Kind: kind, ID: rapid.SampledFrom(idPool).Draw(t, "leaseID"), UserID: u.ID, UserName: u.Name,
		AcquiredAt: expires.Add(-10 * time.Second), HeartbeatAt: expires.Add(-5 * time.Second), ExpiresAt: expires,
		Claimed: kind == domain.LeaseTracing && rapid.Bool().Draw(t, "claimed"), FromFrame: rapid.IntRange(0, 120).Draw(t, "leaseFrom"),
	}
}

func genMarkers(t *rapid.T, label string) []domain.Marker {
	n := rapid.IntRange(0, 3).Draw(t, label+"Count")
	out := make([]domain.Marker, n)
	for i := range out {
		out[i] = domain.Marker{ID: fmt.Sprintf("m%d", i), Label: "pt", X: float64(rapid.IntRange(0, 8).Draw(t, label+"X")) / 8, Y: 0.25}
	}
	return out
}

func genMovie(t *rapid.T, id string) domain.Movie {
	frames := rapid.IntRange(1, 120).Draw(t, "frameCount")
	start := rapid.IntRange(0, frames-1).Draw(t, "trimStart")
	m := domain.Movie{
		ID: id, Title: "t", FrameCount: frames, FrameRate: 25,
		Status: rapid.SampledFrom([]domain.Status{domain.StatusReady, domain.StatusTracing, domain.StatusTraced, domain.StatusFailed,
			domain.StatusAwaitingUpload, domain.StatusIngestFailed}).Draw(t, "status"),
		Settings: domain.Settings{
			Markers:         genMarkers(t, "stored"),
			Trim:            domain.Trim{Start: start, End: rapid.IntRange(start+1, frames).Draw(t, "trimEnd")},
			CaptureInterval: rapid.IntRange(1, 5).Draw(t, "interval"),
		},
		Lease:       genLease(t),
		Progress:    domain.Progress{FramesWritten: rapid.IntRange(0, 10).Draw(t, "written"), TotalFrames: 10},
		CleanBefore: rapid.IntRange(0, frames).Draw(t, "cleanBefore"),
		Version:     rapid.Int64Range(1, 1000).Draw(t, "version"),
		UpdatedAt:   t0,
	}
	if rapid.Bool().Draw(t, "hasUpload") {
		m.Upload = &domain.Upload{FileName: "a.mp4", ContentType: "video/mp4", SizeBytes: 10,
			ExpiresAt: t0.Add(time.Duration(rapid.IntRange(0, 30).Draw(t, "uploadExpiresS")) * time.Second)}
	}
	if rapid.Bool().Draw(t, "hasVideo") {
		m.Video = &domain.Video{Width: 4, Height: 3, Codec: "h264", DurationSeconds: 1.5}
	}
	if rapid.Bool().Draw(t, "hasLastJob") {
		m.LastJob = &domain.JobRecord{JobID: idPool[0], Status: domain.StatusTraced, UserID: "u1", UserName: "Ada", StartedAt: t0, FinishedAt: t0, Frames: 3}
	}
	return m
}

func genCommand(t *rapid.T, stored *domain.Lease) domain.Command {
	id := func(label string) string { return rapid.SampledFrom(idPool).Draw(t, label) }
	now := genNow
	d := time.Duration(rapid.IntRange(1, 20).Draw(t, "durationS")) * time.Second
	user := rapid.SampledFrom(users).Draw(t, "user")
	fence := func() domain.JobFence { return domain.JobFence{JobID: id("jobID"), Now: now} }
	// A worker's job snapshot is the lease it claimed; reuse the stored one
	// when it is a tracing lease, as a real worker would.
	job := domain.Lease{Kind: domain.LeaseTracing, ID: id("jobID"), UserID: "u1", UserName: "Ada", AcquiredAt: t0, FromFrame: 3}
	if stored != nil && stored.Kind == domain.LeaseTracing && rapid.Bool().Draw(t, "ownJob") {
		job = *stored
	}
	frame := rapid.IntRange(0, 130).Draw(t, "frame")
	switch rapid.IntRange(0, 14).Draw(t, "command") {
	case 12:
		return domain.CompleteIngest{FrameCount: rapid.IntRange(1, 130).Draw(t, "ingestFrames"), FrameRate: 29.97, Now: now,
			Video: domain.Video{Width: 640, Height: 480, Codec: "h264", DurationSeconds: 4.2}}
	case 13:
		return domain.FailIngest{Summary: "not a video file", Now: now}
	case 14:
		return domain.ExpireUpload{Now: now}
	case 0:
		return domain.OpenAnalysis{LeaseID: id("leaseID"), User: user, Now: now, Duration: d}
	case 1:
		return domain.Heartbeat{LeaseID: id("leaseID"), Now: now, Duration: d}
	case 2:
		return domain.Release{LeaseID: id("leaseID"), Now: now}
	case 3:
		return domain.EditMarkers{LeaseID: id("leaseID"), Now: now, Markers: genMarkers(t, "new")}
	case 4:
		start := rapid.IntRange(0, 125).Draw(t, "newTrimStart")
		return domain.EditTrim{LeaseID: id("leaseID"), Now: now, Trim: domain.Trim{Start: start, End: start + rapid.IntRange(1, 10).Draw(t, "newTrimLen")}}
	case 5:
		return domain.EditCaptureInterval{LeaseID: id("leaseID"), Now: now, Interval: rapid.IntRange(1, 9).Draw(t, "newInterval")}
	case 6:
		lease := rapid.SampledFrom(append([]string{""}, idPool...)).Draw(t, "traceLeaseID")
		return domain.StartTrace{LeaseID: lease, JobID: id("newJobID"), User: user, FromFrame: frame, Now: now, Duration: d}
	case 7:
		return domain.ClaimJob{JobID: id("jobID"), Now: now, Duration: d}
	case 8:
		return domain.BeginTrace{JobFence: fence(), Duration: d, CleanBefore: frame, TotalFrames: 40}
	case 9:
		return domain.RenewJob{JobFence: fence(), Duration: d, FramesWritten: frame}
	case 10:
		return domain.CompleteJob{Job: job, Now: now, FramesWritten: frame, CleanBefore: frame}
	default:
		return domain.FailJob{Job: job, Now: now, FramesWritten: frame, Summary: "marker m0 lost at /var/task/trace.go:42 token=abc"}
	}
}

func TestConditionsAgreeWithTheDomain(t *testing.T) {
	s, client, tables := newStore(t)
	ctx := context.Background()
	var n atomic.Int64
	var accepted, refusedCount atomic.Int64
	rapid.Check(t, func(t *rapid.T) {
		id := fmt.Sprintf("d%d", n.Add(1))
		var stored *domain.Movie
		if rapid.IntRange(0, 9).Draw(t, "exists") > 0 {
			m := genMovie(t, id)
			putRaw(t, client, tables.Movies, m)
			stored = &m
		}
		var storedLease *domain.Lease
		if stored != nil {
			storedLease = stored.Lease
		}
		cmd := genCommand(t, storedLease)

		want, wantErr := domain.Execute(stored, cmd)
		got, gotErr := s.Commit(ctx, id, cmd)
		if errors.Is(gotErr, dynamo.ErrDisagreement) {
			t.Fatalf("%T: %v", cmd, gotErr)
		}
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%T on %+v (lease %+v):\n domain: %v\n dynamo: %v", cmd, stored, storedLease, wantErr, gotErr)
		}
		if wantErr != nil {
			refusedCount.Add(1)
			if domain.ErrorCode(wantErr) != domain.ErrorCode(gotErr) {
				t.Fatalf("%T: domain refused with %v, dynamo with %v", cmd, wantErr, gotErr)
			}
			if stored != nil {
				requireStored(t, s, *stored)
			}
			return
		}
		accepted.Add(1)
		if !reflect.DeepEqual(events.NewMovieItem(got), events.NewMovieItem(want)) {
			t.Fatalf("%T wrote\n %+v\nthe domain says\n %+v", cmd, events.NewMovieItem(got), events.NewMovieItem(want))
		}
		requireStored(t, s, want)
	})
	t.Logf("differential: %d accepted, %d refused", accepted.Load(), refusedCount.Load())
	if accepted.Load() == 0 || refusedCount.Load() == 0 {
		t.Fatalf("generator is lopsided: %d accepted, %d refused", accepted.Load(), refusedCount.Load())
	}
}

// putRaw stores a movie exactly as given, whatever its state.
func putRaw(t *rapid.T, client *dynamodb.Client, table string, m domain.Movie) {
	item, err := events.MarshalMovie(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &table, Item: item}); err != nil {
		t.Fatal(err)
	}
}

func requireStored(t *rapid.T, s *dynamo.MovieStore, want domain.Movie) {
	got, err := s.Get(context.Background(), want.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(events.NewMovieItem(got), events.NewMovieItem(want)) {
		t.Fatalf("stored\n %+v\nwant\n %+v", events.NewMovieItem(got), events.NewMovieItem(want))
	}
}
