package anchors_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/functions/testkit/awscount"
	"github.com/movietrace/tracinglocks/functions/testkit/proof/anchors"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// The re-implementation is only a fair anchor if it behaves like the
// originals: these tests pin the request counts and the waiting rule.

func setup(t *testing.T) (*dynamodb.Client, *awscount.Counter, string) {
	t.Helper()
	var counter awscount.Counter
	client := testenv.DynamoDB(t, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, counter.APIOption) })
	table := testenv.UniqueName(t, "locks")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := anchors.CreateTable(ctx, client, table); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	return client, &counter, table
}

func TestUncontendedLifecycleRequests(t *testing.T) {
	client, counter, table := setup(t)
	ctx := context.Background()
	c := anchors.New(client, table, anchors.Options{})
	l, err := c.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if got := counter.Snapshot(); got["GetItem"] != 1 || got["PutItem"] != 1 || counter.Total() != 2 {
		t.Fatalf("acquire made %v, want one GetItem and one PutItem", got)
	}
	counter.Reset()
	if err := c.Heartbeat(ctx, l); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx, l); err != nil {
		t.Fatal(err)
	}
	if got := counter.Snapshot(); got["UpdateItem"] != 1 || got["DeleteItem"] != 1 || counter.Total() != 2 {
		t.Fatalf("heartbeat+release made %v", got)
	}
	// A release with a stale RVN is refused.
	if err := c.Release(ctx, l); !errors.Is(err, anchors.ErrNotGranted) {
		t.Fatalf("second release: %v", err)
	}
}

func TestOneWinnerAmongRacingAcquirers(t *testing.T) {
	client, _, table := setup(t)
	const n = 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := anchors.New(client, table, anchors.Options{FailIfLocked: true})
			if _, err := c.Acquire(context.Background(), "race"); err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			} else if !errors.Is(err, anchors.ErrNotGranted) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d acquirers won", wins)
	}
}

func TestTakeoverWaitsAFullLeaseFromFirstSight(t *testing.T) {
	client, counter, table := setup(t)
	ctx := context.Background()
	// Long enough that the taker polls more than once even when a GetItem
	// takes 100 ms or more on a loaded machine (at 200 ms, make proof once
	// saw only 2 polls while a CI run shared the 2 cores).
	lease := 500 * time.Millisecond
	holder := anchors.New(client, table, anchors.Options{Lease: lease})
	old, err := holder.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	// The holder died long ago: the taker cannot know, and waits anyway.
	time.Sleep(2 * lease)
	counter.Reset()
	taker := anchors.New(client, table, anchors.Options{Lease: lease, RefreshPeriod: lease / 20})
	began := time.Now()
	l, err := taker.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(began); waited < lease {
		t.Fatalf("took over after %s, before a full lease (%s) of observation", waited, lease)
	}
	// Polls: at least one on first sight and one after a lease; at most
	// lease/refresh+2 (fewer when a GetItem takes long).
	if gets := counter.Of("GetItem"); gets < 2 || gets > 22 || counter.Of("PutItem") != 1 {
		t.Fatalf("takeover made %v: want repeated polls over a lease and one put", counter.Snapshot())
	}
	if err := holder.Release(ctx, old); !errors.Is(err, anchors.ErrNotGranted) {
		t.Fatalf("the old holder's release: %v, want ErrNotGranted", err)
	}
	if err := taker.Release(ctx, l); err != nil {
		t.Fatalf("the new holder's release: %v", err)
	}
}

func TestHeartbeatsKeepTheLock(t *testing.T) {
	client, _, table := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lease := time.Second
	holder := anchors.New(client, table, anchors.Options{Lease: lease})
	l, err := holder.Acquire(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			time.Sleep(lease / 10)
			if err := holder.Heartbeat(ctx, l); err != nil && ctx.Err() == nil {
				t.Errorf("heartbeat: %v", err)
				return
			}
		}
	}()
	taker := anchors.New(client, table, anchors.Options{Lease: lease, RefreshPeriod: lease / 20, AdditionalWait: lease})
	if _, err := taker.Acquire(ctx, "k"); !errors.Is(err, anchors.ErrNotGranted) {
		t.Fatalf("acquire of a heartbeated lock: %v, want ErrNotGranted", err)
	}
	cancel()
	<-done
}
