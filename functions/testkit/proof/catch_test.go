package proof_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/testkit/proof"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/schema"
)

// The checks are only worth something if they fail on a broken protocol.
// These tests break it on purpose, in two ways: fabricated histories with
// one forbidden step each, and a real run against a store that does the
// read-check-write the design rejects (a consistent read, the domain's
// decision, then an unconditional put).

const (
	leaseA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	leaseB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	jobJ   = "0123456789abcdef0123456789abcdef"
)

var (
	base  = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	ada   = domain.User{ID: "u1", Name: "Ada"}
	brian = domain.User{ID: "u2", Name: "Brian"}
	lease = time.Second
)

// fab builds a history one sequential operation at a time (each returns
// before the next is called).
type fab struct {
	tb    testing.TB
	h     *proof.History
	state domain.Movie
	clock int64
}

func newFab(tb testing.TB) *fab {
	m, err := domain.NewMovie("fab", "Fabricated", proof.FrameCount, 25, base)
	if err != nil {
		tb.Fatal(err)
	}
	m.Settings.Markers = []domain.Marker{{ID: "m0", Label: "tip", X: 0.5, Y: 0.5}}
	return &fab{tb: tb, state: m, h: &proof.History{
		MovieID: "fab", Base: base, Initial: m,
		Config: proof.Config{Browsers: 2, Workers: 1, Lease: lease, Skews: make([]time.Duration, 3)},
	}}
}

func (f *fab) record(client int, call proof.Call, out proof.Outcome) {
	f.h.Ops = append(f.h.Ops, proof.Op{ID: len(f.h.Ops), Client: client, Call: call, Out: out, Start: f.clock, End: f.clock + 5})
	f.clock += 10
}

// legit runs a command as the store would.
func (f *fab) legit(client int, cmd domain.Command) {
	next, err := domain.Execute(&f.state, cmd)
	if err != nil {
		e, _ := domain.AsError(err)
		f.record(client, proof.Call{Kind: proof.KindCommand, Cmd: cmd}, proof.Outcome{Refusal: e})
		return
	}
	f.state = next
	f.record(client, proof.Call{Kind: proof.KindCommand, Cmd: cmd}, proof.Outcome{Movie: &next})
}

// forced commits a command whatever its precondition says.
func (f *fab) forced(client int, cmd domain.Command) {
	next := domain.Apply(cmd, f.state)
	f.state = next
	f.record(client, proof.Call{Kind: proof.KindCommand, Cmd: cmd}, proof.Outcome{Movie: &next})
}

func (f *fab) frame(client int, now time.Time, frame int, token string, accepted bool) {
	out := proof.Outcome{}
	if !accepted {
		out.Refusal = &domain.Error{Code: domain.CodeLeaseLost, Message: "the lease is no longer held", Holder: f.state.Holder(now)}
	}
	f.record(client, proof.Call{Kind: proof.KindFrame, Fence: domain.JobFence{JobID: jobJ, Now: now}, Frame: frame, Token: token}, out)
	if accepted {
		f.h.Frames = append(f.h.Frames, proof.StoredFrame{Frame: frame, JobID: jobJ, Token: token})
	}
}

func (f *fab) read(m domain.Movie) {
	f.record(0, proof.Call{Kind: proof.KindRead}, proof.Outcome{Movie: &m})
}

func (f *fab) done() *proof.History {
	f.h.Final = f.state
	return f.h
}

func at(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }

// startJob opens Analyze as Ada, starts job J and claims it.
func (f *fab) startJob() {
	f.legit(0, domain.OpenAnalysis{LeaseID: leaseA, User: ada, Now: at(10), Duration: lease})
	f.legit(0, domain.StartTrace{LeaseID: leaseA, JobID: jobJ, User: ada, FromFrame: 0, Now: at(20), Duration: lease})
	f.legit(2, domain.ClaimSegment{JobID: jobJ, Now: at(30), Duration: lease})
}

func TestChecksCatchFabricatedViolations(t *testing.T) {
	cases := []struct {
		name         string
		build        func(f *fab)
		wantIllegal  bool
		wantViolated string // a substring of some violation; "" wants none
	}{
		{"a legal history passes", func(f *fab) {
			f.startJob()
			f.frame(2, at(40), 0, "t1", true)
			f.legit(1, domain.OpenAnalysis{LeaseID: leaseB, User: brian, Now: at(50), Duration: lease}) // refused: tracing
			f.legit(1, domain.OpenAnalysis{LeaseID: leaseB, User: brian, Now: at(1100), Duration: lease})
			f.frame(2, at(1200), 1, "t2", false)
			f.legit(2, domain.CompleteJob{Job: *f.state.Lease, Now: at(1210), FramesWritten: 1}) // refused: fenced
			f.read(f.state)
		}, false, ""},
		{"a write with an unknown outcome that landed", func(f *fab) {
			cmd := domain.OpenAnalysis{LeaseID: leaseA, User: ada, Now: at(10), Duration: lease}
			next := domain.Apply(cmd, f.state)
			f.state = next
			f.record(0, proof.Call{Kind: proof.KindCommand, Cmd: cmd}, proof.Outcome{Unknown: true, Err: "connection reset"})
			f.read(next)
			f.legit(0, domain.Heartbeat{LeaseID: leaseA, Now: at(20), Duration: lease})
		}, false, ""},
		{"a write with an unknown outcome that did not land", func(f *fab) {
			f.record(0, proof.Call{Kind: proof.KindCommand, Cmd: domain.OpenAnalysis{LeaseID: leaseA, User: ada, Now: at(10), Duration: lease}}, proof.Outcome{Unknown: true, Err: "timeout"})
			f.legit(1, domain.OpenAnalysis{LeaseID: leaseB, User: brian, Now: at(20), Duration: lease})
		}, false, ""},
		{"two live analysis leases", func(f *fab) {
			f.legit(0, domain.OpenAnalysis{LeaseID: leaseA, User: ada, Now: at(10), Duration: lease})
			f.forced(1, domain.OpenAnalysis{LeaseID: leaseB, User: brian, Now: at(20), Duration: lease})
		}, true, "two live leases"},
		{"an edit without the lease", func(f *fab) {
			f.legit(0, domain.OpenAnalysis{LeaseID: leaseA, User: ada, Now: at(10), Duration: lease})
			f.forced(1, domain.EditCaptureInterval{LeaseID: leaseB, Now: at(20), Interval: 3})
		}, true, "without the live analysis lease"},
		{"an old page's release removes the tracing lease", func(f *fab) {
			f.startJob()
			f.forced(0, domain.Release{LeaseID: leaseA, Now: at(40)})
		}, true, "a release removed"},
		{"a job completes after its lease was replaced", func(f *fab) {
			f.startJob()
			job := *f.state.Lease
			f.legit(1, domain.OpenAnalysis{LeaseID: leaseB, User: brian, Now: at(1100), Duration: lease})
			f.forced(2, domain.CompleteJob{Job: job, Now: at(1110), FramesWritten: 0})
		}, true, "after its lease was replaced"},
		{"a frame lands after the lease was replaced", func(f *fab) {
			f.startJob()
			f.legit(1, domain.OpenAnalysis{LeaseID: leaseB, User: brian, Now: at(1100), Duration: lease})
			f.frame(2, at(1110), 0, "late", true)
		}, true, "after op"},
		{"a refused frame write is stored", func(f *fab) {
			f.startJob()
			f.frame(2, at(2000), 0, "ghost", false)
			f.h.Frames = append(f.h.Frames, proof.StoredFrame{Frame: 0, JobID: jobJ, Token: "ghost"})
		}, false, "was refused"},
		{"a job claimed twice", func(f *fab) {
			f.startJob()
			f.forced(2, domain.ClaimSegment{JobID: jobJ, Now: at(40), Duration: lease})
		}, true, "a second time"},
		{"a stale read", func(f *fab) {
			initial := f.state
			f.legit(0, domain.OpenAnalysis{LeaseID: leaseA, User: ada, Now: at(10), Duration: lease})
			f.read(initial)
		}, true, "stale read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFab(t)
			tc.build(f)
			res := proof.Check(f.done(), 10*time.Second)
			if got := res.Linearizable == porcupine.Illegal; got != tc.wantIllegal {
				t.Errorf("porcupine says %s, want illegal=%v", res.Linearizable, tc.wantIllegal)
			}
			if tc.wantViolated == "" {
				if len(res.Violations) > 0 {
					t.Errorf("violations in a legal history: %q", res.Violations)
				}
				return
			}
			found := false
			for _, v := range res.Violations {
				found = found || strings.Contains(v, tc.wantViolated)
			}
			if !found {
				t.Errorf("no violation mentions %q: %q", tc.wantViolated, res.Violations)
			}
		})
	}
}

// racyStore decides with the domain on a consistent read, then writes
// unconditionally: the check-then-act race that one conditional write per
// transition exists to avoid.
type racyStore struct {
	*proof.DynamoStore
	client *dynamodb.Client
	table  string
}

func (s racyStore) Commit(ctx context.Context, id string, cmd domain.Command) (domain.Movie, error) {
	m, err := s.Get(ctx, id)
	if err != nil {
		return domain.Movie{}, err
	}
	next, err := domain.Execute(&m, cmd)
	if err != nil {
		return domain.Movie{}, err
	}
	time.Sleep(time.Millisecond) // a Lambda's time between the read and the write
	item, err := schema.MarshalMovie(next)
	if err != nil {
		return domain.Movie{}, err
	}
	if _, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item}); err != nil {
		return domain.Movie{}, err
	}
	return next, nil
}

func TestChecksCatchARacyStore(t *testing.T) {
	client := harnessClient(t)
	tables := testenv.NewTables(t, client)
	store := racyStore{DynamoStore: proof.NewDynamoStore(client, tables), client: client, table: tables.Movies}
	illegal, violated := 0, 0
	for i := range 6 {
		cfg := proof.RandomConfig(uint64(1000+i), 0, 500*time.Millisecond, 500*time.Millisecond)
		cfg.Think = 2 * time.Millisecond
		h, err := proof.Run(context.Background(), store, fmt.Sprintf("racy-%d", i), cfg)
		if err != nil {
			t.Fatal(err)
		}
		res := proof.Check(h, time.Minute)
		if res.Linearizable == porcupine.Illegal {
			illegal++
		}
		if len(res.Violations) > 0 {
			violated++
			t.Logf("history %d: %d violations, first: %s", i, len(res.Violations), res.Violations[0])
		}
		if i == 0 && !res.OK() {
			if path, err := proof.WriteReport(t.TempDir(), "racy", h, res); err == nil {
				t.Logf("example report (temporary): %s", path)
			}
		}
		if illegal > 0 && violated > 0 && i >= 1 {
			break
		}
	}
	if illegal == 0 || violated == 0 {
		t.Fatalf("a read-then-write store went unnoticed: porcupine flagged %d histories, the invariants %d", illegal, violated)
	}
}
