// Package lossy is a local-only HTTP proxy for DynamoDB Local (or the S3
// emulator) that loses a share of the answers to writes after the server
// applied them: the request is forwarded, the server commits (or refuses)
// it, and the caller gets a 500 InternalServerError or a connection closed
// without an answer instead. It is the adversary of issue 20 ("a proxy losing 30% of write
// answers after commit") for `make chaos-run` and `LOSE_DYNAMODB_WRITES=0.3
// make run`. It lives in functions/local, which deployed code can never
// import (`make product-imports`), and listens on loopback only.
package lossy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Classify names a request's operation and says whether its answer may be
// lost.
type Classify func(r *http.Request) (op string, lose bool)

// dynamoWrites are the DynamoDB operations whose answers DynamoDB loses.
var dynamoWrites = map[string]bool{
	"PutItem": true, "UpdateItem": true, "DeleteItem": true, "TransactWriteItems": true, "BatchWriteItem": true,
}

// DynamoDB classifies DynamoDB JSON-protocol requests by X-Amz-Target and
// loses the answers of writes (reads, streams and table calls never).
func DynamoDB(r *http.Request) (string, bool) {
	target := r.Header.Get("X-Amz-Target")
	op := target[strings.LastIndexByte(target, '.')+1:]
	return op, strings.HasPrefix(target, "DynamoDB_") && dynamoWrites[op]
}

// S3Deletes classifies S3 REST requests and loses the answers of the
// deletes: DeleteObjectTagging (the ingest's untagging of an upload),
// DeleteObject and DeleteObjects (a deleted movie's clean-up). Uploads and
// reads pass.
func S3Deletes(r *http.Request) (string, bool) {
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodDelete && q.Has("tagging"):
		return "DeleteObjectTagging", true
	case r.Method == http.MethodDelete:
		return "DeleteObject", true
	case r.Method == http.MethodPost && q.Has("delete"):
		return "DeleteObjects", true
	}
	return r.Method, false
}

// Rule loses the answers of the next Times requests of operation Op whose
// URL and body contain every one of Contains, whatever the share: a
// deterministic scenario (the answer of this create, of this delete).
type Rule struct {
	Name     string
	Op       string
	Contains []string
	Times    int
}

// Counts are what a proxy forwarded and lost, by operation.
type Counts struct {
	Forwarded map[string]int
	Lost      map[string]int
	// Ruled counts the answers each Rule (by name) lost.
	Ruled map[string]int
}

// LostTotal is the number of answers lost.
func (c Counts) LostTotal() int {
	n := 0
	for _, v := range c.Lost {
		n += v
	}
	return n
}

// Proxy forwards to Target and loses a Share of the write answers.
type Proxy struct {
	// URL is where the proxy listens (http://127.0.0.1:port).
	URL      string
	target   string
	share    float64
	classify Classify
	srv      *http.Server
	client   *http.Client

	mu     sync.Mutex
	rng    *rand.Rand
	counts Counts
	rules  []*Rule
}

// Inject adds a rule; rules are tried in the order they were added, before
// the share.
func (p *Proxy) Inject(r Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, &r)
}

// Start listens on a free loopback port and forwards every request to
// target (DynamoDB Local's or the S3 emulator's endpoint), losing share
// (0..1) of the answers classify marks; seed makes the choice of answers
// reproducible (for one order of requests).
func Start(target string, classify Classify, share float64, seed uint64) (*Proxy, error) {
	if share < 0 || share > 1 {
		return nil, fmt.Errorf("lossy: share %v is not in [0, 1]", share)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		URL: "http://" + ln.Addr().String(), target: strings.TrimSuffix(target, "/"), share: share, classify: classify,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
		rng:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		counts: Counts{Forwarded: map[string]int{}, Lost: map[string]int{}, Ruled: map[string]int{}},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Stop closes the proxy.
func (p *Proxy) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.srv.Shutdown(ctx)
}

// Counts returns a copy of the counts so far.
func (p *Proxy) Counts() Counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := Counts{Forwarded: map[string]int{}, Lost: map[string]int{}, Ruled: map[string]int{}}
	maps.Copy(c.Forwarded, p.counts.Forwarded)
	maps.Copy(c.Lost, p.counts.Lost)
	maps.Copy(c.Ruled, p.counts.Ruled)
	return c
}

// lose decides, for one forwarded request of op, whether its answer is
// lost and how: 0 keep, 1 a 500, 2 the connection closed.
func (p *Proxy) lose(op string, lose bool, text string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts.Forwarded[op]++
	for _, r := range p.rules {
		if r.Times > 0 && r.Op == op && containsAll(text, r.Contains) {
			r.Times--
			p.counts.Ruled[r.Name]++
			p.counts.Lost[op]++
			return 1 + p.rng.IntN(2)
		}
	}
	if !lose || p.rng.Float64() >= p.share {
		return 0
	}
	p.counts.Lost[op]++
	return 1 + p.rng.IntN(2)
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	req.Host = r.Host
	resp, err := p.client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	op, lose := p.classify(r)
	switch p.lose(op, lose, r.URL.String()+"\n"+string(body)) {
	case 1:
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"Internal server error (answer lost by the lossy proxy)"}`)
		return
	case 2:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler) // closes the connection without an answer
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}
