package proof

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// Config shapes one history.
type Config struct {
	Browsers int           // concurrent Analyze pages
	Workers  int           // concurrent trace workers
	Length   time.Duration // how long the clients issue operations
	Lease    time.Duration // the lease duration every command asks for
	// Skews are the clients' clock offsets, browsers first: client i's clock
	// reads real time + Skews[i].
	Skews []time.Duration
	// Think is the longest pause between two operations of one client.
	// Clients also sometimes stall for about a lease duration, so leases
	// lapse while their holders still believe in them.
	Think time.Duration
	// MinOps keeps the clients going past Length (up to 4×Length) until they
	// made this many operations together, so that a slow emulator still
	// yields histories worth checking.
	MinOps int
	Seed   uint64
	// Lifecycle starts the history without a row: one more client, the
	// owner, creates the movie, ingests it and deletes it (lifecycle.go).
	Lifecycle bool
}

// Clients returns the number of clients: browsers, workers, then the owner
// of a lifecycle history.
func (c Config) Clients() int {
	if c.Lifecycle {
		return c.Browsers + c.Workers + 1
	}
	return c.Browsers + c.Workers
}

// RandomConfig draws a history's shape from seed: 3-6 browsers and 1-2
// workers, a length in [minLen, maxLen], a lease of 250 ms to 1.5 s (short,
// so that most histories see leases lapse, which is where skew matters) and each
// client's clock offset uniform in [-maxSkew, maxSkew]; one history in five
// runs without skew; one history in two is a lifecycle history.
func RandomConfig(seed uint64, maxSkew, minLen, maxLen time.Duration) Config {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	c := Config{
		Browsers: 3 + r.IntN(4),
		Workers:  1 + r.IntN(2),
		Length:   minLen + time.Duration(r.Int64N(int64(maxLen-minLen)+1)),
		Lease:    []time.Duration{250, 500, 1000, 1500}[r.IntN(4)] * time.Millisecond,
		Think:    time.Duration(2+r.IntN(14)) * time.Millisecond,
		Seed:     seed,
	}
	c.Lifecycle = r.IntN(2) == 0
	c.MinOps = 15 * c.Clients()
	skewed := maxSkew > 0 && r.IntN(5) != 0
	c.Skews = make([]time.Duration, c.Clients())
	for i := range c.Skews {
		if skewed {
			c.Skews[i] = time.Duration(r.Int64N(int64(2*maxSkew)+1)) - maxSkew
		}
		c.Skews[i] = c.Skews[i].Truncate(time.Millisecond)
	}
	return c
}

// History is one recorded run against one fresh movie row.
type History struct {
	Config  Config
	MovieID string
	// Base is the real time the history started; reports show times
	// relative to it.
	Base    time.Time
	Initial domain.Movie // the row as stored before any client ran
	Ops     []Op         // every operation, by call time
	Final   domain.Movie // the row after every client stopped
	Frames  []StoredFrame
}

// FrameCount is the length of every history's movie: short, so trims and
// trace plans collide often.
const FrameCount = 40

var users = []domain.User{{ID: "u1", Name: "Ada"}, {ID: "u2", Name: "Brian"}, {ID: "u3", Name: "Chen"}}

// Run records one history: it creates the movie, runs the clients until
// cfg.Length has passed, then reads the final row and the stored frames.
func Run(ctx context.Context, s Store, movieID string, cfg Config) (*History, error) {
	var initial domain.Movie // a lifecycle history starts without a row
	if !cfg.Lifecycle {
		created := time.Now().UTC().Truncate(time.Millisecond)
		m, err := domain.NewMovie(movieID, "Proof "+movieID, FrameCount, 25, created)
		if err != nil {
			return nil, err
		}
		m.Settings.Markers = []domain.Marker{{ID: "m0", Label: "tip", X: 0.5, Y: 0.5}}
		if err := s.Create(ctx, m); err != nil {
			return nil, fmt.Errorf("create movie: %w", err)
		}
		if initial, err = s.Get(ctx, movieID); err != nil {
			return nil, fmt.Errorf("read created movie: %w", err)
		}
	}
	h := &harness{ctx: ctx, store: s, movieID: movieID, cfg: cfg, start: time.Now()}
	h.deadline = h.start.Add(cfg.Length)
	h.hardDeadline = h.start.Add(4 * cfg.Length)
	clients := make([]*client, cfg.Clients())
	var wg sync.WaitGroup
	for i := range clients {
		c := &client{id: i, h: h, skew: cfg.Skews[i], rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1)), user: users[i%len(users)]}
		clients[i] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch {
			case i < cfg.Browsers:
				c.browse()
			case i < cfg.Browsers+cfg.Workers:
				c.work()
			default:
				c.own()
			}
		}()
	}
	wg.Wait()
	var ops []Op
	for _, c := range clients {
		ops = append(ops, c.ops...)
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Start < ops[j].Start })
	for i := range ops {
		ops[i].ID = i
	}
	final, err := s.Get(ctx, movieID)
	if domain.ErrorCode(err) == domain.CodeNotFound {
		final, err = domain.Movie{}, nil // purged, or never created
	}
	if err != nil {
		return nil, fmt.Errorf("read final movie: %w", err)
	}
	frames, err := s.Frames(ctx, movieID)
	if err != nil {
		return nil, err
	}
	return &History{
		Config: cfg, MovieID: movieID, Base: h.start.UTC(),
		Initial: initial, Ops: ops, Final: final, Frames: frames,
	}, nil
}

type harness struct {
	ctx      context.Context
	store    Store
	movieID  string
	cfg      Config
	start    time.Time // carries the monotonic reading every op timestamp is measured on
	deadline time.Time // the clients stop after it, once they made cfg.MinOps operations...
	// ...or after hardDeadline.
	hardDeadline time.Time
	ops          atomic.Int64

	mu    sync.Mutex
	queue []delivery // segments "sent" to workers, as SQS would deliver them
}

func (h *harness) send(d delivery) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queue = append(h.queue, d)
}

func (h *harness) receive() (delivery, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.queue) == 0 {
		return delivery{}, false
	}
	id := h.queue[0]
	h.queue = h.queue[1:]
	return id, true
}

// client is one browser page or worker: sequential, with its own clock.
type client struct {
	id   int
	h    *harness
	skew time.Duration
	rng  *rand.Rand
	user domain.User
	ops  []Op
}

// now is the client's clock: real time plus its fixed offset, at the
// stored (millisecond) precision.
func (c *client) now() time.Time {
	return time.Now().Add(c.skew).UTC().Truncate(time.Millisecond)
}

func (c *client) running() bool {
	now := time.Now()
	if now.Before(c.h.deadline) {
		return true
	}
	return c.h.ops.Load() < int64(c.h.cfg.MinOps) && now.Before(c.h.hardDeadline)
}

// sleep pauses, but not past the point where the history ends.
func (c *client) sleep(d time.Duration) {
	limit := c.h.deadline
	if time.Now().After(limit) {
		limit = c.h.hardDeadline
	}
	if left := time.Until(limit); d > left {
		d = max(left, 0)
	}
	time.Sleep(d)
}

func (c *client) pause() { c.sleep(time.Duration(c.rng.Int64N(int64(c.h.cfg.Think) + 1))) }

// stall sometimes sleeps for about a lease duration.
func (c *client) stall(p float64) {
	if c.rng.Float64() < p {
		c.sleep(time.Duration(float64(c.h.cfg.Lease) * (0.7 + 0.7*c.rng.Float64())))
	}
}

// do performs one operation and records it.
func (c *client) do(call Call) Outcome {
	ctx, cancel := context.WithTimeout(c.h.ctx, 20*time.Second)
	defer cancel()
	start := time.Since(c.h.start).Nanoseconds()
	var out Outcome
	switch call.Kind {
	case KindRead:
		m, err := c.h.store.Get(ctx, c.h.movieID)
		out = classify(&m, err)
	case KindFrame:
		out = classify(nil, c.h.store.WriteFrame(ctx, c.h.movieID, call.Fence, call.Frame, call.Token))
	case KindCreate:
		out = classify(nil, c.h.store.Create(ctx, call.Create.Movie())) // a put answers no row
	case KindPurge:
		m, err := c.h.store.Delete(ctx, c.h.movieID, domain.PurgeMovie{})
		out = classify(&m, err)
	default:
		m, err := c.h.store.Commit(ctx, c.h.movieID, call.Cmd)
		out = classify(&m, err)
	}
	end := time.Since(c.h.start).Nanoseconds()
	c.h.ops.Add(1)
	c.ops = append(c.ops, Op{Client: c.id, Call: call, Out: out, Start: start, End: end})
	return out
}

func (c *client) command(cmd domain.Command) Outcome { return c.do(Call{Kind: KindCommand, Cmd: cmd}) }

func (c *client) chance(p float64) bool { return c.rng.Float64() < p }
