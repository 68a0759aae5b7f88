package faults

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
)

type countingBase struct{ n int }

func (b *countingBase) RoundTrip(req *http.Request) (*http.Response, error) {
	b.n++
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(`{}`)), Request: req}, nil
}

func request(op, body string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/", strings.NewReader(body))
	if op != "" {
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	}
	return req
}

func TestFaultsForwardOrNotAsTheyClaim(t *testing.T) {
	base := &countingBase{}
	ft := New(base)
	ft.Inject(Rule{Op: "UpdateItem", Contains: "m1", Kind: Lose500, Times: 1})
	ft.Inject(Rule{Op: "UpdateItem", Kind: Drop, Times: 1})
	ft.Inject(Rule{Op: "TransactWriteItems", Kind: Conflict, Times: 1})

	resp, err := ft.RoundTrip(request("UpdateItem", `{"Key":"m1"}`))
	if err != nil || resp.StatusCode != 500 || base.n != 1 {
		t.Fatalf("lose-500: %v %v, forwarded %d", resp, err, base.n)
	}
	if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), "InternalServerError") {
		t.Fatalf("lose-500 body %s", b)
	}
	if _, err := ft.RoundTrip(request("UpdateItem", `{"Key":"m2"}`)); !errors.Is(err, syscall.ECONNRESET) || base.n != 2 {
		t.Fatalf("drop: %v, forwarded %d", err, base.n)
	}
	resp, err = ft.RoundTrip(request("TransactWriteItems", `{}`))
	if err != nil || resp.StatusCode != 400 || base.n != 2 {
		t.Fatalf("conflict: %v %v, forwarded %d (must not forward)", resp, err, base.n)
	}
	if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), "TransactionConflictException") {
		t.Fatalf("conflict body %s", b)
	}
	// Rules are used up; anything else passes through untouched.
	for _, op := range []string{"UpdateItem", "GetItem", "", "Garbage.With.Dots"} {
		if resp, err := ft.RoundTrip(request(op, "\x00\xff not json")); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%q after the rules: %v %v", op, resp, err)
		}
	}
	if got := ft.Injected(); len(got) != 3 || got[0].Kind != Lose500 || got[1].Kind != Drop || got[2].Kind != Conflict {
		t.Fatalf("injected %+v", got)
	}
	if ft.Pending() != 0 || ft.Requests("UpdateItem") != 3 || ft.Requests("Dots") != 1 {
		t.Fatalf("pending %d, UpdateItem %d", ft.Pending(), ft.Requests("UpdateItem"))
	}
	if Kind(9).String() != "Kind(9)" {
		t.Fatal(Kind(9).String())
	}
}
