package dynamo_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"pgregory.net/rapid"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/testkit/proof"
	"github.com/movietrace/tracinglocks/schema"
)

// The differential test: for random stored movies and random commands, the
// domain's decision (domain.Execute) and DynamoDB Local's evaluation of the
// store's translated condition must agree, and an accepted write must store
// exactly the domain's next movie. It checks the translation of the rule
// values (conditions.go) and the domain's evaluator (domain/eval.go) against
// DynamoDB itself.
//
// It cannot pass vacuously: each command kind (commandKinds) runs as its own property,
// and fails unless the domain (and so DynamoDB) accepted it and refused it
// at least k times each (and replayed a Replayable kind at least once per 50
// checks). The seed is logged on success too; rerun a run with -rapid.seed=N.
//
// How many checks: with -rapid.checks=N given (`make proof` passes
// RAPID_CHECKS), every kind runs N checks and k is minEach(N). Without it
// (`make test`), every kind runs rounds of quickRound checks, each round with
// its own seed, until it reached k = quickEach of each verdict, and fails if
// quickRounds rounds did not: most kinds are done after one round, so the
// guarantee stays while `make test` pays for about a quarter of the checks
// the default 100 per kind cost.

// minEach is the least number of acceptances and of refusals each command
// kind must see in a run of n checks. The generator aims half of the checks
// at each verdict; in a run of 100 checks per kind every kind reached each
// verdict at least 27 times, so a run of 100 below 10 is a broken generator,
// not bad luck.
func minEach(n int) int { return max(1, n/10) }

const (
	quickRound  = 25
	quickRounds = 4 // at most 100 checks per kind, the default before rounds
	quickEach   = 5
)

// rapidSeed fixes rapid's base seed for this run (a random one unless
// -rapid.seed or RAPID_SEED gave one) and returns it, so it can be logged;
// seedFor derives each command kind's own seed from it.
func rapidSeed(t *testing.T) uint64 {
	t.Helper()
	f := flag.Lookup("rapid.seed")
	if f == nil {
		t.Fatal("rapid's -rapid.seed flag is not registered")
	}
	seed, err := strconv.ParseUint(f.Value.String(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if seed == 0 {
		seed = rand.Uint64()>>8 | 1
	}
	orig := f.Value.String()
	t.Cleanup(func() { _ = f.Value.Set(orig) })
	return seed
}

// seedFor sets rapid's seed for round r of the k-th command kind of a run.
func seedFor(t *testing.T, base uint64, k, r int) {
	t.Helper()
	setFlag(t, "rapid.seed", strconv.FormatUint(base+uint64(k)<<40+uint64(r)<<32, 10))
}

func setFlag(t *testing.T, name, value string) {
	t.Helper()
	if err := flag.Lookup(name).Value.Set(value); err != nil {
		t.Fatal(err)
	}
}

// checkBudget returns the checks per round, the most rounds and the least
// number of each verdict a command kind must reach (see above). It sets
// rapid's -rapid.checks to the round size until the test ends.
func checkBudget(t *testing.T) (round, rounds, each int) {
	t.Helper()
	f := flag.Lookup("rapid.checks")
	given := false
	flag.Visit(func(v *flag.Flag) { given = given || v.Name == "rapid.checks" })
	n, err := strconv.Atoi(f.Value.String())
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		n /= 5 // as rapid does
	}
	if given {
		return n, 1, minEach(n)
	}
	orig := f.Value.String()
	t.Cleanup(func() { _ = f.Value.Set(orig) })
	setFlag(t, "rapid.checks", strconv.Itoa(quickRound))
	if testing.Short() {
		return quickRound / 5, quickRounds, 1
	}
	return quickRound, quickRounds, quickEach
}

func TestConditionsAgreeWithTheDomain(t *testing.T) {
	seed := rapidSeed(t)
	round, rounds, each := checkBudget(t)
	s, client, tables := newStore(t)
	var n atomic.Int64
	total := 0
	for k, kind := range commandKinds {
		var accepted, refused, replays, checks int
		_, replayable := cmdOf(kind).(domain.Replayable)
		enough := func() bool {
			return accepted >= each && refused >= each && (!replayable || replays >= max(1, checks/50))
		}
		t.Run(kind, func(t *testing.T) {
			for r := 0; r < rounds && (r == 0 || !enough()); r++ {
				seedFor(t, seed, k, r)
				checks += round
				rapid.Check(t, func(t *rapid.T) {
					id := fmt.Sprintf("d%d", n.Add(1))
					stored, cmd := genCase(t, id, kind)
					// A third of the checks store the row as the command left
					// it, and commit the command again: a retried request whose
					// first answer was lost (domain.Replayed).
					if stored != nil && rapid.IntRange(0, 2).Draw(t, "again") == 0 {
						if next, err := domain.Execute(stored, cmd); err == nil {
							stored = &next
						}
					}
					if stored != nil {
						putRaw(t, client, tables.Movies, *stored)
					}
					switch differential(t, s, id, stored, cmd) {
					case verdictAccepted:
						accepted++
					case verdictReplayed:
						accepted++
						replays++
					default:
						refused++
					}
				})
			}
			total += checks
			t.Logf("%s: %d checks, %d accepted (%d of them replays), %d refused (the counts include rapid's shrinking runs, if any)", kind, checks, accepted, replays, refused)
			if !enough() {
				t.Fatalf("vacuous: %s accepted %d (%d replays) and refused %d times in %d checks; each must be >= %d, replays >= %d (seed %d)",
					kind, accepted, replays, refused, checks, each, max(1, checks/50), seed)
			}
		})
	}
	t.Logf("differential: seed %d (rerun with -rapid.seed=%d), %d checks", seed, seed, total)
	if err := proof.AppendCounts("differential_checks", total); err != nil {
		t.Error(err)
	}
}

type verdict int

const (
	verdictRefused verdict = iota
	verdictAccepted
	verdictReplayed // accepted, nothing written
)

// cmdOf is a zero command of a kind, to ask what it implements.
func cmdOf(kind string) domain.Command {
	for _, c := range []domain.Command{domain.OpenAnalysis{}, domain.Heartbeat{}, domain.Release{}, domain.EditMarkers{},
		domain.EditTrim{}, domain.EditCaptureInterval{}, domain.StartTrace{}, domain.ClaimSegment{}, domain.BeginTrace{},
		domain.RenewJob{}, domain.CompleteJob{}, domain.FailJob{}, domain.CompleteIngest{}, domain.FailIngest{}, domain.ExpireUpload{},
		domain.ClaimSegment{}, domain.HandOffJob{}, domain.FinalizeStaleTrace{}, domain.EditCalibration{}, domain.ClearCalibration{}} {
		if fmt.Sprintf("%T", c) == "domain."+kind {
			return c
		}
	}
	return nil
}

// differential commits cmd on the stored movie (nil: none) and requires the
// domain's verdict and next movie.
func differential(t *rapid.T, s *dynamo.MovieStore, id string, stored *domain.Movie, cmd domain.Command) verdict {
	if err := cmd.Validate(); err != nil {
		t.Fatalf("the generator drew an invalid %T: %v", cmd, err)
	}
	want, wantErr := domain.Execute(stored, cmd)
	got, gotErr := s.Commit(context.Background(), id, cmd)
	if errors.Is(gotErr, dynamo.ErrDisagreement) {
		t.Fatalf("%T: %v", cmd, gotErr)
	}
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%T %+v on %+v (lease %+v):\n domain: %v\n dynamo: %v", cmd, cmd, stored, leaseOf(stored), wantErr, gotErr)
	}
	if wantErr != nil {
		if !reflect.DeepEqual(wantErr, gotErr) {
			t.Fatalf("%T: domain refused with %#v, dynamo with %#v", cmd, wantErr, gotErr)
		}
		if stored != nil {
			requireStored(t, s, *stored)
		}
		return verdictRefused
	}
	if !reflect.DeepEqual(schema.NewMovieItem(got), schema.NewMovieItem(want)) {
		t.Fatalf("%T wrote\n %+v\nthe domain says\n %+v", cmd, schema.NewMovieItem(got), schema.NewMovieItem(want))
	}
	requireStored(t, s, want)
	if stored != nil && want.Version == stored.Version {
		return verdictReplayed
	}
	return verdictAccepted
}

func leaseOf(m *domain.Movie) *domain.Lease {
	if m == nil {
		return nil
	}
	return m.Lease
}

// putRaw stores a movie exactly as given, whatever its state.
func putRaw(t interface{ Fatal(...any) }, client *dynamodb.Client, table string, m domain.Movie) {
	item, err := schema.MarshalMovie(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &table, Item: item}); err != nil {
		t.Fatal(err)
	}
}

func requireStored(t interface{ Fatalf(string, ...any) }, s *dynamo.MovieStore, want domain.Movie) {
	got, err := s.Get(context.Background(), want.ID)
	if err != nil {
		t.Fatalf("get %s: %v", want.ID, err)
	}
	if !reflect.DeepEqual(schema.NewMovieItem(got), schema.NewMovieItem(want)) {
		t.Fatalf("stored\n %+v\nwant\n %+v", schema.NewMovieItem(got), schema.NewMovieItem(want))
	}
}
