package chaos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
)

// client is a browser's API calls with the retries a careful client makes:
// a network error or a 5xx is tried again (the same Idempotency-Key, the
// same lease), at most tries times.
type client struct {
	base    string
	user    string
	http    *http.Client
	retries atomic.Int64 // requests sent again after an error or a 5xx
}

const tries = 8

type reply struct {
	status int
	body   []byte
}

func (c *client) once(method, path string, body any, header http.Header) (reply, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return reply{}, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(c.base, "/")+path, r)
	if err != nil {
		return reply{}, err
	}
	req.Header.Set(httpapi.HeaderDevUser, c.user)
	req.Header.Set(httpapi.HeaderDevUserName, c.user)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, b}, err
}

// do sends the request until it is answered below 500, and returns that
// answer; every answer of every try is passed to seen (e.g. to remember a
// 202 whose retry met a 409).
func (c *client) do(t *testing.T, method, path string, body any, header http.Header) reply {
	t.Helper()
	var last error
	for i := range tries {
		if i > 0 {
			c.retries.Add(1)
			time.Sleep(time.Duration(100*i) * time.Millisecond)
		}
		r, err := c.once(method, path, body, header)
		if err == nil && r.status < 500 {
			return r
		}
		if err == nil {
			err = fmt.Errorf("%d %s", r.status, r.body)
		}
		last = err
	}
	t.Logf("%s %s: no answer below 500 after %d tries: %v", method, path, tries, last)
	return reply{status: 599, body: []byte(last.Error())}
}

func decode[T any](t *testing.T, r reply) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %d %s: %v", r.status, r.body, err)
	}
	return v
}

func lease(id string) http.Header { return http.Header{httpapi.HeaderLeaseID: {id}} }

// upload puts data to a presigned upload as the page does; a 412 means an
// earlier try's PUT arrived (If-None-Match: *).
func upload(u httpapi.UploadView, data []byte) error {
	var last error
	for range tries {
		req, err := http.NewRequest(u.Method, u.URL, bytes.NewReader(data))
		if err != nil {
			return err
		}
		for k, v := range u.Headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			last = err
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusPreconditionFailed {
			return nil
		}
		last = errors.New(resp.Status)
	}
	return last
}
