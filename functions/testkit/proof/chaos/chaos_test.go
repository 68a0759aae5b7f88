package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	awsretry "github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/local/lossy"
	"github.com/movietrace/tracinglocks/functions/local/stack"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil && v >= 0 && v <= 1 {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// run is one chaos run's world and what its client did.
type run struct {
	t       *testing.T
	dp, sp  *lossy.Proxy // DynamoDB's and S3's
	opts    stack.Options
	st      *stack.Stack
	api     *client
	clip    []byte
	live    map[string]bool // movies that must exist at the end
	deleted map[string]bool // movies deleted (204)
	traced  map[string]bool // movies with a started trace (202)
	garbage string          // the upload that is no video
	kills   int
	// killedBeforePurge: deleted movies still deleting when the process
	// was killed.
	killedBeforePurge int
}

func (r *run) start() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	st, err := stack.Start(ctx, r.opts)
	if err != nil {
		r.t.Fatalf("the stack (make run's) did not start behind the lossy proxy: %v", err)
	}
	r.st = st
	r.api = &client{base: st.URL, user: "u-chaos", http: &http.Client{Timeout: time.Minute}}
	for _, m := range stack.SampleMovies(time.Now()) {
		r.live[m.ID] = true
	}
}

// create makes one movie through POST /movies and uploads data to it;
// before, if set, runs between the two.
func (r *run) create(i int, data []byte, before ...func(id string)) string {
	r.t.Helper()
	key := http.Header{"Idempotency-Key": {fmt.Sprintf("chaos-%s-%d", r.opts.Prefix, i)}}
	body := map[string]any{"title": fmt.Sprintf("Chaos %d", i), "fileName": "clip.mp4", "contentType": "video/mp4", "sizeBytes": len(data)}
	rep := r.api.do(r.t, "POST", "/movies", body, key)
	if rep.status != http.StatusCreated {
		r.t.Fatalf("create %d: %d %s", i, rep.status, rep.body)
	}
	created := decode[httpapi.MovieCreated](r.t, rep)
	r.live[created.Movie.ID] = true
	for _, f := range before {
		f(created.Movie.ID)
	}
	if err := upload(created.Upload, data); err != nil {
		r.t.Fatalf("upload %s: %v", created.Movie.ID, err)
	}
	return created.Movie.ID
}

// get reads a movie through the API.
func (r *run) get(id string) (httpapi.MovieDetail, bool) {
	rep := r.api.do(r.t, "GET", "/movies/"+id, nil, nil)
	if rep.status != http.StatusOK {
		return httpapi.MovieDetail{}, false
	}
	return decode[httpapi.MovieDetail](r.t, rep), true
}

// waitIngested waits until none of ids awaits its upload's ingest.
func (r *run) waitIngested(ids []string, timeout time.Duration) {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for _, id := range ids {
		for {
			d, ok := r.get(id)
			if ok && d.Status != domain.StatusAwaitingUpload {
				break
			}
			if time.Now().After(deadline) {
				r.t.Logf("%s still awaits its ingest", id)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// trace opens Analyze on id, places a marker if it has none and starts a
// trace from its first frame, as the page does.
func (r *run) trace(id string) {
	r.t.Helper()
	d, ok := r.get(id)
	if !ok || (d.Status != domain.StatusReady && d.Status != domain.StatusTraced && d.Status != domain.StatusFailed) {
		return
	}
	rep := r.api.do(r.t, "POST", "/movies/"+id+"/analysis-lease", nil, nil)
	if rep.status != http.StatusCreated {
		r.t.Logf("open %s: %d %s", id, rep.status, rep.body)
		return
	}
	l := decode[httpapi.LeaseGrant](r.t, rep).LeaseID
	if len(d.Markers) == 0 {
		ms := map[string]any{"markers": []httpapi.MarkerView{{ID: "m1", Label: "Spot", X: 0.5, Y: 0.5}}}
		if rep := r.api.do(r.t, "PUT", "/movies/"+id+"/markers", ms, lease(l)); rep.status != http.StatusOK {
			r.t.Logf("markers %s: %d %s", id, rep.status, rep.body)
		}
	}
	rep = r.api.do(r.t, "POST", "/movies/"+id+"/traces", map[string]int{"fromFrame": d.Trim.Start}, lease(l))
	switch rep.status {
	case http.StatusAccepted:
		r.traced[id] = true
	default:
		// A retry of a start whose answer was lost is answered as the
		// success it was; anything else is a refusal worth seeing.
		r.t.Logf("trace %s: %d %s", id, rep.status, rep.body)
		r.api.do(r.t, "DELETE", "/movies/"+id+"/analysis-lease", nil, lease(l))
	}
}

// remove deletes id (it must hold no live lease).
func (r *run) remove(id string) {
	r.t.Helper()
	rep := r.api.do(r.t, "DELETE", "/movies/"+id, nil, nil)
	if rep.status != http.StatusNoContent {
		r.t.Logf("delete %s: %d %s", id, rep.status, rep.body)
		return
	}
	delete(r.live, id)
	r.deleted[id] = true
}

// kill kills the stack's process (every invocation in flight cancelled)
// and starts a new one on the same tables, queues and bucket.
func (r *run) kill() {
	r.t.Helper()
	_ = r.st.Kill()
	r.kills++
	r.start()
}

// settle waits until no live movie awaits its ingest or is tracing and no
// deleted movie has a row, or timeout.
func (r *run) settle(timeout time.Duration) {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		busy := 0
		rows := r.rows()
		for id := range r.live {
			m, ok := rows[id]
			if !ok || m.Status == domain.StatusAwaitingUpload || m.Status == domain.StatusTracing {
				busy++
			}
		}
		for id := range r.deleted {
			if _, ok := rows[id]; ok {
				busy++
			}
		}
		if busy == 0 {
			return
		}
		time.Sleep(time.Second)
	}
	r.t.Logf("not settled after %s", timeout)
}

func TestLossyDynamoDBRun(t *testing.T) { chaosRun(t, false) }

// TestLossyDynamoDBRunWithTheSDKQuotaDrained is the same run with every
// SDK client's retry quota drained from the start (a token bucket of 0:
// the SDK retries nothing, as after about a hundred lost answers with its
// default quota): what is retried is retried by the store and the handlers
// themselves (issue 20 item 1).
func TestLossyDynamoDBRunWithTheSDKQuotaDrained(t *testing.T) { chaosRun(t, true) }

// drainedQuota is the SDK's standard retryer whose retry quota is empty.
func drainedQuota() aws.Retryer {
	return awsretry.NewStandard(func(o *awsretry.StandardOptions) { o.RateLimiter = ratelimit.NewTokenRateLimit(0) })
}

func chaosRun(t *testing.T, drained bool) {
	if os.Getenv("PROOF_CHAOS") == "" {
		t.Skip("the chaos run takes minutes: PROOF_CHAOS=1 (make proof, make chaos-run)")
	}
	share := envFloat("CHAOS_SHARE", 0.3)
	uploads := envInt("CHAOS_UPLOADS", 6)
	seed := uint64(envInt("CHAOS_SEED", int(time.Now().UnixNano()%1e9)))
	ddb, sqsEP := os.Getenv("DYNAMODB_ENDPOINT"), os.Getenv("SQS_ENDPOINT")
	s3EP := os.Getenv("S3_ENDPOINT")
	if s3EP == "" {
		s3EP = sqsEP
	}
	dp, err := lossy.Start(ddb, lossy.DynamoDB, share, seed)
	if err != nil {
		t.Fatal(err)
	}
	defer dp.Stop()
	sp, err := lossy.Start(s3EP, lossy.S3Deletes, share, seed+1)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Stop()
	t.Logf("share %.2f of write answers lost, seed %d, %d uploads, SDK retry quota drained: %v", share, seed, uploads, drained)

	clipPath := filepath.Join(t.TempDir(), "clip.mp4")
	if err := videotest.Encode(context.Background(), clipPath, videotest.Options{Width: 160, Height: 120, FrameRate: 24, Frames: 72,
		Codec: videotest.H264, Extra: []string{"-movflags", "+faststart"}}, func(i int, g []byte) {
		for p := range g {
			g[p] = byte(60 + (p%160+i*3)%120)
		}
	}); err != nil {
		t.Fatal(err)
	}
	clip, err := os.ReadFile(clipPath)
	if err != nil {
		t.Fatal(err)
	}
	logs := &testenv.LogBuffer{}
	r := &run{t: t, clip: clip, live: map[string]bool{}, deleted: map[string]bool{}, traced: map[string]bool{},
		opts: stack.Options{
			DynamoDBEndpoint: dp.URL, SQSEndpoint: sqsEP, S3Endpoint: sp.URL, Prefix: testenv.UniqueName(t, "chaos"),
			LeaseDuration: 8 * time.Second, FrameDelay: 5 * time.Millisecond, ProgressEvery: 500 * time.Millisecond,
			SweepEvery: time.Second, PurgeGrace: 2 * time.Second, VisibilityTimeout: 10 * time.Second,
			SampleDir: filepath.Join(os.TempDir(), "tracinglocks-samples"),
			Log:       slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn, ReplaceAttr: logging.Redact})),
		}}
	r.dp, r.sp = dp, sp
	if drained {
		r.opts.Retryer = drainedQuota
	}
	began := time.Now()
	// Deterministic scenarios on top of the share: the answer of a sample's
	// create is lost while `make run` seeds.
	dp.Inject(lossy.Rule{Name: "create-sample", Op: "PutItem", Contains: []string{`"zebrafish-larva"`}, Times: 1})
	r.start() // seeds the sample movies through the lossy DynamoDB

	// Phase 1: half the uploads (and the garbage file), ingested; traces of
	// the samples and those uploads, one upload deleted; then the other
	// half uploaded and, while all that is in flight, the process killed.
	var first []string
	// The answers of an upload's create, of its ingest's completing write
	// and of its untagging are lost.
	dp.Inject(lossy.Rule{Name: "create", Op: "PutItem", Contains: []string{`"Chaos 0"`}, Times: 1})
	first = append(first, r.create(0, clip, func(id string) {
		dp.Inject(lossy.Rule{Name: "ingest-completion", Op: "UpdateItem", Contains: []string{id, `{"S":"ready"}`}, Times: 1})
		sp.Inject(lossy.Rule{Name: "untag", Op: "DeleteObjectTagging", Contains: []string{id}, Times: 1})
	}))
	for i := 1; i < max(uploads/2, 2); i++ {
		first = append(first, r.create(i, clip))
	}
	r.garbage = r.create(uploads, []byte("this is not a video, only forty-odd bytes of text"))
	r.waitIngested(append(slices.Clone(first), r.garbage), 3*time.Minute)
	for _, m := range stack.SampleMovies(time.Now()) {
		r.trace(m.ID)
	}
	// The answers of a delete, and of its purge's last write, are lost.
	dp.Inject(lossy.Rule{Name: "delete", Op: "UpdateItem", Contains: []string{first[1], `{"S":"deleting"}`}, Times: 1})
	dp.Inject(lossy.Rule{Name: "purge", Op: "DeleteItem", Contains: []string{first[1]}, Times: 1})
	r.remove(first[1])
	first = slices.Delete(first, 1, 2)
	untraced := first[len(first)-1] // deleted right before the kill
	for _, id := range first[:len(first)-1] {
		r.trace(id)
	}
	var second []string
	for i := max(uploads/2, 2); i < max(uploads, 3); i++ {
		second = append(second, r.create(i, clip))
	}
	time.Sleep(1500 * time.Millisecond)
	// Killed between a delete's write and its purge: the row is deleting
	// (the purge grace has not passed) when the process dies.
	r.remove(untraced)
	if m, ok := r.rows()[untraced]; ok && m.Status == domain.StatusDeleting {
		r.killedBeforePurge++
	} else {
		t.Errorf("the movie deleted before the kill is %v (present %v), want deleting", m.Status, ok)
	}
	r.kill()

	// Phase 2: the new process finishes what the killed one left (stale
	// traces end visibly, ingests are redelivered, the purge runs); the
	// rest is ingested and traced, and one more movie deleted after its
	// trace.
	r.waitIngested(second, 3*time.Minute)
	for _, id := range second {
		r.trace(id)
	}
	r.settle(4 * time.Minute)
	if len(second) > 0 {
		r.remove(second[0])
	}
	r.settle(2 * time.Minute)
	elapsed := time.Since(began)
	_ = r.st.Stop()

	dc, sc := dp.Counts(), sp.Counts()
	r.checkTheCounters()
	c := r.count()
	t.Logf("lost answers: DynamoDB %v (forced %v), S3 %v (forced %v); client retries %d; %s",
		dc.Lost, dc.Ruled, sc.Lost, sc.Ruled, r.api.retries.Load(), elapsed.Round(time.Second))
	quota := 0
	if drained {
		quota = 1
	}
	line := fmt.Sprintf("proof-count chaos_runs=1 chaos_runs_quota_drained=%d ghost_movies=%d orphaned_objects=%d sources_at_risk=%d unsettled_movies=%d unended_traces=%d "+
		"lost_write_answers=%d lost_s3_answers=%d forced_losses=%d kills=%d killed_traces=%d killed_before_purge=%d chaos_movies=%d chaos_traces=%d chaos_deletes=%d",
		quota, c.ghosts, c.orphans, c.atRisk, c.unsettled, c.unended, dc.LostTotal(), sc.LostTotal(), len(dc.Ruled)+len(sc.Ruled),
		r.kills, c.killedTraces, r.killedBeforePurge, len(r.live), len(r.traced), len(r.deleted))
	fmt.Println(line[len("proof-count "):])
	if path := os.Getenv("PROOF_COUNTS"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(f, line)
		f.Close()
	}
	for _, d := range c.details {
		t.Log(d)
	}
	// Why jobs failed, as the worker logged it (the summaries say
	// "internal error" for anything unforeseen).
	n := 0
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `msg="job failed"`) && n < 8 {
			t.Log(l)
			n++
		}
	}
	for _, name := range []string{"create-sample", "create", "ingest-completion", "delete", "purge"} {
		if dc.Ruled[name] != 1 {
			t.Errorf("scenario %s: %d answers lost, want 1 (the scenario did not happen)", name, dc.Ruled[name])
		}
	}
	if sc.Ruled["untag"] != 1 {
		t.Errorf("scenario untag: %d answers lost, want 1", sc.Ruled["untag"])
	}
	if c.ghosts+c.orphans+c.atRisk+c.unsettled+c.unended != 0 {
		t.Fatalf("invariants broken under lost answers (%s); stack warnings:\n%s", line, logs.String())
	}
	if dc.LostTotal() == 0 && share > 0 {
		t.Fatal("the proxy lost no answer: the run shows nothing")
	}
}
