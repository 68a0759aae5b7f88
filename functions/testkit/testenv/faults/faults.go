// Package faults is a test-only HTTP transport for the AWS SDK that injects
// the failures DynamoDB Local never produces: a write that committed but
// whose response was lost (a 500, or a connection dropped after the server
// answered), so the SDK retries a request that already took effect; and a
// TransactionConflictException, a refusal that wrote nothing. It is never
// used by production code.
package faults

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
)

// Kind is what happens to a matched request.
type Kind int

const (
	// Lose500 forwards the request, lets the server commit it, then answers
	// 500 InternalServerError instead of the server's answer.
	Lose500 Kind = iota + 1
	// Drop forwards the request, lets the server commit it, then fails the
	// round trip as a connection reset by the peer.
	Drop
	// Conflict answers 400 TransactionConflictException without forwarding:
	// nothing was written.
	Conflict
)

func (k Kind) String() string {
	switch k {
	case Lose500:
		return "lose-500"
	case Drop:
		return "drop"
	case Conflict:
		return "conflict"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Rule injects Kind into the next Times requests whose DynamoDB operation is
// Op (e.g. "UpdateItem", "TransactWriteItems"; "" any) and whose body
// contains Contains (if set).
type Rule struct {
	Op       string
	Contains string
	Kind     Kind
	Times    int
}

// Injection records one injected fault.
type Injection struct {
	Op   string
	Kind Kind
}

// Transport is an http.RoundTripper with injectable faults. Its zero value
// forwards everything through http.DefaultTransport.
type Transport struct {
	// Base carries forwarded requests; nil: http.DefaultTransport.
	Base http.RoundTripper

	mu       sync.Mutex
	rules    []*Rule
	injected []Injection
	ops      map[string]int
}

// New returns a transport forwarding through base (nil: the default).
func New(base http.RoundTripper) *Transport { return &Transport{Base: base} }

// Inject adds a rule; rules are tried in the order they were added.
func (t *Transport) Inject(r Rule) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rules = append(t.rules, &r)
}

// Injected returns the faults injected so far.
func (t *Transport) Injected() []Injection {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Injection(nil), t.injected...)
}

// Requests returns how many requests of operation op reached the transport
// (retries included).
func (t *Transport) Requests(op string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ops[op]
}

// Pending reports how many injections the rules still owe.
func (t *Transport) Pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, r := range t.rules {
		n += r.Times
	}
	return n
}

// operation is the DynamoDB operation of a JSON-protocol request.
func operation(req *http.Request) string {
	target := req.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(target, '.'); i >= 0 {
		return target[i+1:]
	}
	return target
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		_ = req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	op := operation(req)
	kind := t.match(op, body)
	if kind == Conflict {
		return answer(req, http.StatusBadRequest, "TransactionConflictException",
			"Transaction is ongoing for the item (injected)"), nil
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil || kind == 0 {
		return resp, err
	}
	// The server committed and answered; the caller never sees it.
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if kind == Drop {
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	}
	return answer(req, http.StatusInternalServerError, "InternalServerError", "Internal server error (injected)"), nil
}

func (t *Transport) match(op string, body []byte) Kind {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ops == nil {
		t.ops = map[string]int{}
	}
	t.ops[op]++
	for _, r := range t.rules {
		if r.Times > 0 && (r.Op == "" || r.Op == op) && (r.Contains == "" || bytes.Contains(body, []byte(r.Contains))) {
			r.Times--
			t.injected = append(t.injected, Injection{Op: op, Kind: r.Kind})
			return r.Kind
		}
	}
	return 0
}

// answer is a DynamoDB JSON-protocol error response.
func answer(req *http.Request, status int, code, msg string) *http.Response {
	b := fmt.Sprintf(`{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":%q}`, code, msg)
	return &http.Response{
		Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amzn-Requestid": {"injected"}},
		Body:          io.NopCloser(strings.NewReader(b)),
		ContentLength: int64(len(b)),
		Request:       req,
	}
}
