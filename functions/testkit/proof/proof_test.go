package proof_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/functions/testkit/proof"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// Settings, from the environment so that `make proof` can raise them:
//
//	PROOF_HISTORIES  histories to check (default 24: the fast subset `make test` runs)
//	PROOF_PARALLEL   histories recorded at once (default 4)
//	PROOF_SKEW_MS    largest clock offset of a client, either way (default 250)
//	PROOF_SEED       first history's seed (default: from the clock; logged)
//	PROOF_OUTPUT     where failing histories go (default testoutput/proof)
//	PROOF_COUNTS     file the summary counts are appended to (unset: none)
const fastHistories = 24

func envInt(tb testing.TB, name string, def int64) int64 {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		tb.Fatalf("%s=%q: want a non-negative integer", name, v)
	}
	return n
}

// harnessClient is a DynamoDB Local client without SDK retries (a retried
// conditional write that had committed would look refused, which would be
// the harness lying) and with enough pooled connections for every client.
func harnessClient(tb testing.TB) *dynamodb.Client {
	tb.Helper()
	return testenv.DynamoDB(tb, func(o *dynamodb.Options) {
		o.Retryer = aws.NopRetryer{}
		o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
			tr.MaxIdleConns = 256
			tr.MaxIdleConnsPerHost = 256
		})
	})
}

// TestLinearizable records PROOF_HISTORIES concurrent histories against
// DynamoDB Local and checks each with porcupine and with the invariants.
// A failing history is written to testoutput/proof/TestLinearizable-<n>.html
// (porcupine's visualization) with a .txt next to it.
func TestLinearizable(t *testing.T) {
	n := int(envInt(t, "PROOF_HISTORIES", fastHistories))
	parallel := int(max(envInt(t, "PROOF_PARALLEL", 4), 1))
	skew := time.Duration(envInt(t, "PROOF_SKEW_MS", 250)) * time.Millisecond
	seed := uint64(envInt(t, "PROOF_SEED", time.Now().UnixNano()&(1<<48-1)))
	minLen, maxLen := 400*time.Millisecond, 900*time.Millisecond
	if n > fastHistories {
		minLen, maxLen = 500*time.Millisecond, 2*time.Second
	}
	t.Logf("%d histories, %d at a time, skew up to ±%s, seeds %d..%d", n, parallel, skew, seed, seed+uint64(n)-1)

	client := harnessClient(t)
	store := proof.NewDynamoStore(client, testenv.NewTables(t, client))
	ctx := context.Background()
	began := time.Now()

	var (
		mu         sync.Mutex
		total      proof.Stats
		violations int
		failed     int
		checkTime  time.Duration
		next       atomic.Int64
		wg         sync.WaitGroup
	)
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				cfg := proof.RandomConfig(seed+uint64(i), skew, minLen, maxLen)
				h, err := proof.Run(ctx, store, fmt.Sprintf("h%d-%d", seed, i), cfg)
				if err != nil {
					t.Errorf("history %d (seed %d): %v", i, cfg.Seed, err)
					continue
				}
				c0 := time.Now()
				res := proof.Check(h, time.Minute)
				dc := time.Since(c0)
				mu.Lock()
				total.Add(res.Stats)
				checkTime += dc
				if !res.OK() {
					failed++
					violations += max(len(res.Violations), 1)
				}
				mu.Unlock()
				if !res.OK() {
					path, err := proof.WriteReport(proof.OutputDir(), fmt.Sprintf("%s-%d", t.Name(), i), h, res)
					if err != nil {
						t.Errorf("write report: %v", err)
					}
					t.Errorf("history %d (seed %d) failed: %s\n  report: %s", i, cfg.Seed, res.Summary(), path)
				}
			}
		}()
	}
	wg.Wait()

	elapsed := time.Since(began)
	t.Logf("checked %d histories in %s (porcupine+invariants %s): %d failed, %d violations", n, elapsed.Round(time.Millisecond), checkTime.Round(time.Millisecond), failed, violations)
	t.Logf("ops %d: accepted %d, refused %d, unknown %d; reads %d, frame writes %d; stale takeovers %d (%d early by the holder's clock), fenced %d",
		total.Ops, total.Accepted, total.Refused, total.Unknown, total.Reads, total.FrameWrites, total.Takeovers, total.EarlyTakeovers, total.Fenced)
	t.Logf("segments: %d hand-offs, %d continuations claimed; %d stale traces finalised by the sweeper's rule",
		total.HandOffs, total.Continuations, total.Sweeps)
	t.Logf("lifecycle: %d creations accepted (with replays), %d ingest ranges, %d ingests completed, %d uploads expired, %d deletes, %d purges",
		total.Creates, total.Ranges, total.Ingests, total.Expiries, total.Deletes, total.Purges)
	if err := proof.AppendCounts("histories", n, "violations", violations, "ops", total.Ops,
		"frame_writes", total.FrameWrites, "takeovers", total.Takeovers, "early_takeovers", total.EarlyTakeovers, "fenced", total.Fenced); err != nil {
		t.Errorf("append counts: %v", err)
	}
	// A suite that never exercised the protocol proves nothing. The fast
	// subset may run on a machine so loaded that no trace gets as far as a
	// frame; the nightly count may not.
	if n >= 10 && (total.Accepted == 0 || total.Refused == 0 || total.Takeovers == 0) {
		t.Errorf("the histories did not exercise the protocol: %+v", total)
	}
	if n > fastHistories && (total.FrameWrites == 0 || total.Fenced == 0) {
		t.Errorf("no worker got as far as fenced frame writes: %+v", total)
	}
	if n > fastHistories && (total.HandOffs == 0 || total.Continuations == 0 || total.Sweeps == 0) {
		t.Errorf("no job ran as segments, or no stale trace was swept: %+v", total)
	}
	if n > fastHistories && (total.Creates == 0 || total.Ranges == 0 || total.Ingests == 0 || total.Expiries == 0 || total.Deletes == 0 || total.Purges == 0) {
		t.Errorf("the histories did not run the movie lifecycle (create, ingest, expiry, delete, purge): %+v", total)
	}
}
