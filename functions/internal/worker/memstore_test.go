package worker_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/worker"
)

// memStore is the in-memory double of the worker's ports: movie rows
// changed only through domain.Execute (the domain's own semantics, which the
// DynamoDB store is tested to agree with) and frames written only while the
// fence's Decide accepts the row, both under one lock, so that every commit
// and every fenced write is atomic as in DynamoDB.
type memStore struct {
	mu     sync.Mutex
	movies map[string]domain.Movie
	frames map[string]map[int]domain.Frame
}

var (
	_ worker.Movies = (*memStore)(nil)
	_ worker.Frames = (*memStore)(nil)
	_ testStore     = (*memStore)(nil)
)

func newMemStore() *memStore {
	return &memStore{movies: map[string]domain.Movie{}, frames: map[string]map[int]domain.Frame{}}
}

func (s *memStore) Commit(ctx context.Context, movieID string, cmd domain.Command) (domain.Movie, error) {
	if err := ctx.Err(); err != nil {
		return domain.Movie{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var cur *domain.Movie
	if m, ok := s.movies[movieID]; ok {
		cur = &m
	}
	next, err := domain.Execute(cur, cmd)
	if err != nil {
		return domain.Movie{}, err
	}
	s.movies[movieID] = next
	return next, nil
}

func (s *memStore) Keys(ctx context.Context, movieID string, from int) ([]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []int
	for i := range s.frames[movieID] {
		if i >= from {
			keys = append(keys, i)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

func (s *memStore) Page(ctx context.Context, movieID string, from, limit int) ([]domain.Frame, *int, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	keys, err := s.Keys(ctx, movieID, from)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var page []domain.Frame
	for _, k := range keys {
		if len(page) == limit {
			return page, &k, nil
		}
		page = append(page, s.frames[movieID][k])
	}
	return page, nil, nil
}

func (s *memStore) WriteFenced(ctx context.Context, movieID string, fence domain.JobFence, puts []domain.Frame, deletes []int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := fence.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.movies[movieID]
	if !ok {
		return &domain.Error{Code: domain.CodeNotFound, Message: "movie not found"}
	}
	if err := domain.Decide(fence, &m); err != nil {
		return err
	}
	// The port's contract, as the DynamoDB adapter enforces it (a
	// transaction may not touch one item twice): no frame twice.
	seen := map[int]bool{}
	for _, f := range puts {
		if seen[f.Index] {
			return fmt.Errorf("memstore: frame %d twice in one write", f.Index)
		}
		seen[f.Index] = true
	}
	for _, i := range deletes {
		if seen[i] {
			return fmt.Errorf("memstore: frame %d twice in one write", i)
		}
		seen[i] = true
	}
	fs := s.frames[movieID]
	if fs == nil {
		fs = map[int]domain.Frame{}
		s.frames[movieID] = fs
	}
	for _, f := range puts {
		fs[f.Index] = f
	}
	for _, i := range deletes {
		delete(fs, i)
	}
	return nil
}

func (s *memStore) create(tb testing.TB, m domain.Movie) {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.movies[m.ID]; ok {
		tb.Fatalf("movie %s exists", m.ID)
	}
	s.movies[m.ID] = m
}

func (s *memStore) get(tb testing.TB, id string) domain.Movie {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.movies[id]
	if !ok {
		tb.Fatalf("no movie %s", id)
	}
	return m
}

func (s *memStore) stored(tb testing.TB, id string) []domain.Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Frame
	for _, f := range s.frames[id] {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b domain.Frame) int { return a.Index - b.Index })
	return out
}

// memQueue is the in-memory double of the Queue port: it records requeues
// and keeps the continuation messages for the test to deliver.
type memQueue struct {
	mu       sync.Mutex
	requeued []requeue
	sent     []events.TraceJob
	fail     error // when set, Continue fails with it
	// failTimes, when positive, limits fail to the first failTimes sends.
	failTimes int
	attempts  int // Continue calls
}

var _ worker.Queue = (*memQueue)(nil)

// requeue is one Requeue call.
type requeue struct {
	receiptHandle string
	delay         time.Duration
}

func (q *memQueue) Requeue(_ context.Context, receiptHandle string, delay time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.requeued = append(q.requeued, requeue{receiptHandle, delay})
	return nil
}

// requeues returns the Requeue calls so far.
func (q *memQueue) requeues() []requeue {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]requeue(nil), q.requeued...)
}

func (q *memQueue) Continue(_ context.Context, job events.TraceJob) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.attempts++
	if q.fail != nil && (q.failTimes <= 0 || q.attempts <= q.failTimes) {
		return q.fail
	}
	q.sent = append(q.sent, job)
	return nil
}

// take removes and returns the continuations sent so far.
func (q *memQueue) take() []events.TraceJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.sent
	q.sent = nil
	return out
}
