package benchcmp_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/functions/testkit/awscount"
	"github.com/movietrace/tracinglocks/functions/testkit/proof/benchcmp"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

func newEnv(tb testing.TB) *benchcmp.Env {
	tb.Helper()
	counter := &awscount.Counter{}
	client := testenv.DynamoDB(tb, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, counter.APIOption) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env, err := benchcmp.NewEnv(ctx, client, counter, testenv.UniqueName(tb, "cmp"), 200*time.Millisecond, true)
	if err != nil {
		tb.Fatal(err)
	}
	return env
}

// TestRequestsPerOperation pins the request counts the README's table
// reports: one request per transition here; the anchors' two for an
// acquisition and a poll per refresh period for a takeover.
func TestRequestsPerOperation(t *testing.T) {
	env := newEnv(t)
	rows, err := env.Run(context.Background(), env.Scenarios(3, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := benchcmp.Print(os.Stdout, rows); err != nil {
		t.Fatal(err)
	}
	wantAnchors := []float64{2, 1, 1, 1}
	for i, r := range rows {
		if r.Project.Requests != 1 {
			t.Errorf("%s: this project made %.2f requests per operation, want 1", r.Op, r.Project.Requests)
		}
		switch {
		case i < len(wantAnchors) && r.Anchors.Requests != wantAnchors[i]:
			t.Errorf("%s: anchors made %.2f requests, want %.0f", r.Op, r.Anchors.Requests, wantAnchors[i])
		case i == len(wantAnchors) && (r.Anchors.Requests < 3 || r.Anchors.Wall < env.ShortLease):
			t.Errorf("%s: anchors took over with %.0f requests in %s, want polls over a full lease", r.Op, r.Anchors.Requests, r.Anchors.Wall)
		}
	}
}

// BenchmarkSideBySide runs every scenario on both sides, reporting
// requests/op next to ns/op:
//
//	go test -run '^$' -bench SideBySide ./functions/testkit/proof/benchcmp
func BenchmarkSideBySide(b *testing.B) {
	env := newEnv(b)
	for _, s := range env.Scenarios(0, 0) {
		for _, side := range []struct {
			name string
			run  benchcmp.Side
		}{{"project", s.Project}, {"anchors", s.Anchors}} {
			b.Run(s.Name+"/"+side.name, func(b *testing.B) {
				ctx := context.Background()
				requests := 0
				b.ResetTimer()
				for i := range b.N {
					b.StopTimer()
					op, err := side.run(ctx, i)
					if err != nil {
						b.Fatal(err)
					}
					before := env.Counter.Total()
					b.StartTimer()
					err = op()
					b.StopTimer()
					requests += env.Counter.Total() - before
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
			})
		}
	}
}
