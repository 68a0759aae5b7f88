// Package benchcmp measures this project's lease operations side by side
// with the anchors' lock protocol (package anchors), against the same
// DynamoDB in the same process: DynamoDB requests and wall time per
// operation. `make bench` prints the table (cmd/benchtable); the same
// scenarios run as Go benchmarks in this package's tests.
package benchcmp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/testkit/awscount"
	"github.com/movietrace/tracinglocks/functions/testkit/proof/anchors"
)

// Measure is the mean cost of one operation over N runs.
type Measure struct {
	N        int
	Requests float64       // DynamoDB requests per operation (every attempt counts)
	Wall     time.Duration // wall time per operation
}

// Row is one line of the table. Anchors is nil where the anchors have no
// equivalent (rows other parts of the project add, e.g. per stream event).
type Row struct {
	Op      string
	Project Measure
	Anchors *Measure
}

// Side prepares run i of one side of a scenario (untimed, uncounted) and
// returns the operation to measure, which fails if the outcome is not the
// one the scenario expects.
type Side func(ctx context.Context, i int) (func() error, error)

// Scenario is one operation, on both sides.
type Scenario struct {
	Name    string
	N       int
	Project Side
	Anchors Side
}

// Env is the shared setup: one DynamoDB client whose requests Counter
// counts, the movie store on fresh tables, and a fresh lock table.
type Env struct {
	Counter   *awscount.Counter
	Client    *dynamodb.Client
	Movies    *dynamo.MovieStore
	Tables    dynamo.Tables
	LockTable string
	// ShortLease is the lease of the takeover scenario: the anchors wait a
	// full one before taking a lock over.
	ShortLease time.Duration
	seq        atomic.Int64
}

// NewEnv creates the tables (names start with prefix) on the counted
// client. counter must be the one installed in client's APIOptions.
//
// The movies table is the product's (with its stream). DynamoDB Local
// serves every request on a stream-enabled table several times slower than
// on a plain one (DynamoDB does not: its streams are asynchronous), so with
// lockStream the lock table gets a stream too, and the wall-time ratio
// compares the protocols rather than the emulator's stream bookkeeping.
func NewEnv(ctx context.Context, client *dynamodb.Client, counter *awscount.Counter, prefix string, shortLease time.Duration, lockStream bool) (*Env, error) {
	t := dynamo.Tables{Movies: prefix + "-movies", Frames: prefix + "-frames", Audit: prefix + "-audit"}
	if err := dynamo.CreateTables(ctx, client, t); err != nil {
		return nil, err
	}
	e := &Env{Counter: counter, Client: client, Movies: dynamo.NewMovieStore(client, t.Movies), Tables: t, LockTable: prefix + "-locks", ShortLease: shortLease}
	stream := func(in *dynamodb.CreateTableInput) {
		if lockStream {
			in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}
		}
	}
	if err := anchors.CreateTable(ctx, client, e.LockTable, stream); err != nil {
		return nil, err
	}
	return e, nil
}

var (
	holder = domain.User{ID: "u-holder", Name: "Holder"}
	taker  = domain.User{ID: "u-taker", Name: "Taker"}
)

func (e *Env) movie(ctx context.Context) (string, error) {
	id := fmt.Sprintf("bench-%d", e.seq.Add(1))
	m, err := domain.NewMovie(id, "Bench "+id, 300, 25, time.Now())
	if err != nil {
		return "", err
	}
	m.Settings.Markers = []domain.Marker{{ID: "m1", Label: "tip", X: 0.5, Y: 0.5}}
	return id, e.Movies.Create(ctx, m)
}

func (e *Env) key() string { return fmt.Sprintf("lock-%d", e.seq.Add(1)) }

func (e *Env) open(ctx context.Context, id string, u domain.User, d time.Duration) (string, error) {
	l := token.New()
	_, err := e.Movies.Commit(ctx, id, domain.OpenAnalysis{LeaseID: l, User: u, Now: time.Now(), Duration: d})
	return l, err
}

func (e *Env) locks(opt anchors.Options) *anchors.Client {
	return anchors.New(e.Client, e.LockTable, opt)
}

// Scenarios are the lease operations both sides have: n runs of each fast
// one, takeovers runs of the stale takeover (each waits about two short
// leases).
func (e *Env) Scenarios(n, takeovers int) []Scenario {
	d := domain.DefaultLeaseDuration
	short := e.ShortLease
	var (
		hbMovie, hbLease string
		hbLock           *anchors.Lock
		hbLocks          = e.locks(anchors.Options{})
		relMovie         string
		heldMovie        string
		heldKey          string
	)
	return []Scenario{
		{
			Name: "acquire (uncontended)", N: n,
			Project: func(ctx context.Context, _ int) (func() error, error) {
				id, err := e.movie(ctx)
				return func() error { _, err := e.open(ctx, id, holder, d); return err }, err
			},
			Anchors: func(ctx context.Context, _ int) (func() error, error) {
				c, k := e.locks(anchors.Options{}), e.key()
				return func() error { _, err := c.Acquire(ctx, k); return err }, nil
			},
		},
		{
			Name: "heartbeat", N: n,
			Project: func(ctx context.Context, i int) (func() error, error) {
				if i == 0 {
					var err error
					if hbMovie, err = e.movie(ctx); err != nil {
						return nil, err
					}
					if hbLease, err = e.open(ctx, hbMovie, holder, d); err != nil {
						return nil, err
					}
				}
				return func() error {
					_, err := e.Movies.Commit(ctx, hbMovie, domain.Heartbeat{LeaseID: hbLease, Now: time.Now(), Duration: d})
					return err
				}, nil
			},
			Anchors: func(ctx context.Context, i int) (func() error, error) {
				if i == 0 {
					var err error
					if hbLock, err = hbLocks.Acquire(ctx, e.key()); err != nil {
						return nil, err
					}
				}
				return func() error { return hbLocks.Heartbeat(ctx, hbLock) }, nil
			},
		},
		{
			Name: "release", N: n,
			Project: func(ctx context.Context, i int) (func() error, error) {
				if i == 0 {
					var err error
					if relMovie, err = e.movie(ctx); err != nil {
						return nil, err
					}
				}
				l, err := e.open(ctx, relMovie, holder, d)
				return func() error {
					_, err := e.Movies.Commit(ctx, relMovie, domain.Release{LeaseID: l, Now: time.Now()})
					return err
				}, err
			},
			Anchors: func(ctx context.Context, _ int) (func() error, error) {
				c := e.locks(anchors.Options{})
				l, err := c.Acquire(ctx, e.key())
				return func() error { return c.Release(ctx, l) }, err
			},
		},
		{
			Name: "acquire refused (held)", N: n,
			Project: func(ctx context.Context, i int) (func() error, error) {
				if i == 0 {
					var err error
					if heldMovie, err = e.movie(ctx); err != nil {
						return nil, err
					}
					if _, err = e.open(ctx, heldMovie, holder, d); err != nil {
						return nil, err
					}
				}
				return func() error {
					_, err := e.open(ctx, heldMovie, taker, d)
					if domain.ErrorCode(err) == domain.CodeLeaseHeld {
						return nil
					}
					return fmt.Errorf("want lease_held, got %v", err)
				}, nil
			},
			Anchors: func(ctx context.Context, i int) (func() error, error) {
				if i == 0 {
					heldKey = e.key()
					if _, err := e.locks(anchors.Options{}).Acquire(ctx, heldKey); err != nil {
						return nil, err
					}
				}
				c := e.locks(anchors.Options{FailIfLocked: true})
				return func() error {
					_, err := c.Acquire(ctx, heldKey)
					if errors.Is(err, anchors.ErrNotGranted) {
						return nil
					}
					return fmt.Errorf("want not granted, got %v", err)
				}, nil
			},
		},
		{
			Name: fmt.Sprintf("stale takeover (holder dead > 1 lease of %s)", short), N: takeovers,
			Project: func(ctx context.Context, _ int) (func() error, error) {
				id, err := e.movie(ctx)
				if err != nil {
					return nil, err
				}
				if _, err := e.open(ctx, id, holder, short); err != nil {
					return nil, err
				}
				time.Sleep(short + 20*time.Millisecond) // the holder is dead and its lease stale
				return func() error { _, err := e.open(ctx, id, taker, short); return err }, nil
			},
			Anchors: func(ctx context.Context, _ int) (func() error, error) {
				k := e.key()
				if _, err := e.locks(anchors.Options{Lease: short}).Acquire(ctx, k); err != nil {
					return nil, err
				}
				time.Sleep(short + 20*time.Millisecond)
				// The anchors' default refresh period is 1/20 of their
				// default lease (1 s of 20 s); keep the ratio.
				c := e.locks(anchors.Options{Lease: short, RefreshPeriod: short / 20})
				return func() error { _, err := c.Acquire(ctx, k); return err }, nil
			},
		},
	}
}

// measurer accumulates one side's runs.
type measurer struct {
	e        *Env
	side     Side
	wall     time.Duration
	requests int
	n        int
}

// run performs run i; only recorded runs count towards the measure.
func (m *measurer) run(ctx context.Context, i int, record bool) error {
	op, err := m.side(ctx, i)
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	before := m.e.Counter.Total()
	start := time.Now()
	err = op()
	wall := time.Since(start)
	requests := m.e.Counter.Total() - before
	if err != nil {
		return err
	}
	if record {
		m.wall += wall
		m.requests += requests
		m.n++
	}
	return nil
}

func (m *measurer) measure() Measure {
	if m.n == 0 {
		return Measure{}
	}
	return Measure{N: m.n, Requests: float64(m.requests) / float64(m.n), Wall: m.wall / time.Duration(m.n)}
}

// Run measures every scenario. The two sides alternate run by run, so that
// both see the same machine load, and the first runs (a tenth, at most 10)
// warm up connections and DynamoDB Local's JIT without being recorded.
func (e *Env) Run(ctx context.Context, scenarios []Scenario) ([]Row, error) {
	var rows []Row
	for _, s := range scenarios {
		p := &measurer{e: e, side: s.Project}
		var a *measurer
		if s.Anchors != nil {
			a = &measurer{e: e, side: s.Anchors}
		}
		warm := min(max(s.N/10, 1), 10)
		for i := range warm + s.N {
			if err := p.run(ctx, i, i >= warm); err != nil {
				return nil, fmt.Errorf("%s, this project: %w", s.Name, err)
			}
			if a != nil {
				if err := a.run(ctx, i, i >= warm); err != nil {
					return nil, fmt.Errorf("%s, anchors: %w", s.Name, err)
				}
			}
		}
		row := Row{Op: s.Name, Project: p.measure()}
		if a != nil {
			m := a.measure()
			row.Anchors = &m
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Print writes the rows as one Markdown table; a ratio is anchors ÷ this
// project.
func Print(w io.Writer, rows []Row) error {
	var b strings.Builder
	b.WriteString("| operation | this project requests | anchors requests | ratio | this project ms | anchors ms | ratio |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }
	ratio := func(a, p float64) string {
		if p == 0 {
			return "—"
		}
		return fmt.Sprintf("%.1f×", a/p)
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %.2f | ", r.Op, r.Project.Requests)
		if a := r.Anchors; a != nil {
			fmt.Fprintf(&b, "%.2f | %s | %s | %s | %s |\n", a.Requests, ratio(a.Requests, r.Project.Requests),
				ms(r.Project.Wall), ms(a.Wall), ratio(float64(a.Wall), float64(r.Project.Wall)))
		} else {
			fmt.Fprintf(&b, "— | — | %s | — | — |\n", ms(r.Project.Wall))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
