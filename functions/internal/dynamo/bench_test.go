package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/testkit/awscount"
)

// BenchmarkRequestsPerTransition reports DynamoDB requests per uncontended
// transition (the "requests/op" metric; the goal is 1 for each) and wall time
// against DynamoDB Local. Setup requests are excluded from the count.
//
//	make bench  (or: go test -run '^$' -bench RequestsPerTransition ./functions/internal/dynamo)
func BenchmarkRequestsPerTransition(b *testing.B) {
	_, raw, tables := newStore(b)
	var counter awscount.Counter
	client := dynamodb.New(raw.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, counter.APIOption)
	})
	s := dynamo.NewMovieStore(client, tables.Movies)
	ctx := context.Background()
	seq := 0
	movie := func(b *testing.B) string {
		b.Helper()
		seq++
		id := fmt.Sprintf("b%d", seq)
		createMovie(b, s, id)
		return id
	}
	open := func(b *testing.B, id string, now time.Time) string {
		b.Helper()
		l := newID(b)
		apply(b, s, id, domain.OpenAnalysis{LeaseID: l, User: alice, Now: now, Duration: lease})
		return l
	}

	// measure runs setup untimed and uncounted, then op timed and counted.
	measure := func(b *testing.B, setup func(i int) func()) {
		b.Helper()
		requests := 0
		b.ResetTimer()
		for i := range b.N {
			b.StopTimer()
			op := setup(i)
			before := counter.Total()
			b.StartTimer()
			op()
			b.StopTimer()
			requests += counter.Total() - before
		}
		b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
	}

	b.Run("acquire", func(b *testing.B) {
		measure(b, func(int) func() {
			id, l := movie(b), newID(b)
			return func() { apply(b, s, id, domain.OpenAnalysis{LeaseID: l, User: alice, Now: t0, Duration: lease}) }
		})
	})
	b.Run("heartbeat", func(b *testing.B) {
		id := movie(b)
		l := open(b, id, t0)
		measure(b, func(i int) func() {
			now := t0.Add(time.Duration(i) * time.Millisecond)
			return func() { apply(b, s, id, domain.Heartbeat{LeaseID: l, Now: now, Duration: lease}) }
		})
	})
	b.Run("release", func(b *testing.B) {
		id := movie(b)
		measure(b, func(int) func() {
			l := open(b, id, t0)
			return func() {
				if ok, err := s.Release(ctx, id, domain.Release{LeaseID: l, Now: t0}); !ok || err != nil {
					b.Fatalf("release: %v %v", ok, err)
				}
			}
		})
	})
	b.Run("edit", func(b *testing.B) {
		id := movie(b)
		l := open(b, id, t0)
		measure(b, func(i int) func() {
			return func() {
				apply(b, s, id, domain.EditCaptureInterval{LeaseID: l, Now: t0, Interval: 1 + i%5})
			}
		})
	})
	b.Run("start_trace", func(b *testing.B) {
		measure(b, func(int) func() {
			id := movie(b)
			l, job := open(b, id, t0), newID(b)
			return func() {
				apply(b, s, id, domain.StartTrace{LeaseID: l, JobID: job, User: alice, FromFrame: 0, Now: t0, Duration: lease})
			}
		})
	})
	b.Run("stale_takeover", func(b *testing.B) {
		measure(b, func(int) func() {
			id := movie(b)
			open(b, id, t0)
			l := newID(b)
			return func() {
				apply(b, s, id, domain.OpenAnalysis{LeaseID: l, User: bob, Now: t0.Add(lease), Duration: lease})
			}
		})
	})
}
