package tracer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// MemoryStates keeps states in memory: for tests and a single process.
type MemoryStates struct {
	mu sync.Mutex
	m  map[string][]byte
}

var _ States = (*MemoryStates)(nil)

// Get implements States.
func (s *MemoryStates) Get(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.m[key]; ok {
		return append([]byte(nil), d...), nil
	}
	return nil, ErrNoState
}

// Put implements States.
func (s *MemoryStates) Put(_ context.Context, key string, state []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[key] = append([]byte(nil), state...)
	return nil
}

// Len is the number of states kept.
func (s *MemoryStates) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// DirStates keeps states as files under a directory (the local stack).
type DirStates struct{ Dir string }

var _ States = DirStates{}

func (d DirStates) path(key string) (string, error) {
	if key == "" || strings.Contains(key, "..") || strings.HasPrefix(key, "/") {
		return "", fmt.Errorf("tracer: state key %q", key)
	}
	return filepath.Join(d.Dir, filepath.FromSlash(key)), nil
}

// Get implements States.
func (d DirStates) Get(_ context.Context, key string) ([]byte, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoState
	}
	return data, err
}

// Put implements States: written to a temporary file, then renamed, so a
// reader never sees half a state.
func (d DirStates) Put(_ context.Context, key string, state []byte) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".state-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(state); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), p)
}

// ObjectStore is the part of an object store (s3store.Store) ObjectStates
// uses.
type ObjectStore interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Put(ctx context.Context, key, contentType string, body []byte) error
}

// ObjectStates keeps states as objects under Prefix (e.g. "tracker/": the
// keys are then tracker/<movieId>/<settings>/<frame>). NotFound is the
// store's error for a missing object.
type ObjectStates struct {
	Store    ObjectStore
	Prefix   string
	NotFound error
}

var _ States = ObjectStates{}

// Get implements States.
func (o ObjectStates) Get(ctx context.Context, key string) ([]byte, error) {
	data, err := o.Store.Get(ctx, o.Prefix+key)
	if err != nil && o.NotFound != nil && errors.Is(err, o.NotFound) {
		return nil, ErrNoState
	}
	return data, err
}

// Put implements States.
func (o ObjectStates) Put(ctx context.Context, key string, state []byte) error {
	return o.Store.Put(ctx, o.Prefix+key, "application/octet-stream", state)
}
