package stack

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// TestHostGuard: the running stack refuses a request whose Host header is
// not a loopback name (what a DNS-rebinding page sends) with a 403 problem,
// whatever the route, and serves loopback hosts.
func TestHostGuard(t *testing.T) {
	st := startTestStack(t, Options{NoSeed: true})
	u, err := url.Parse(st.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(u.Host)
	get := func(host, path string) (int, http.Header, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, st.URL+strings.TrimPrefix(path, "/"), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("X-Dev-User", "u-alice")
		req.Header.Set("X-Dev-User-Name", "Alice")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, b
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port, "127.0.0.1", "localhost"} {
		if code, _, body := get(host, "/movies"); code != http.StatusOK {
			t.Errorf("Host %q: %d %s", host, code, body)
		}
	}
	for _, host := range []string{"evil.example", "evil.example:" + port, "127.0.0.1.evil.example:" + port,
		"localhost.evil.example", "attacker.test:80", "10.0.0.5:" + port, "0.0.0.0:" + port} {
		for _, path := range []string{"/movies", "/", "/openapi.json"} {
			code, h, body := get(host, path)
			var p struct {
				Type, Title, Detail, Code string
				Status                    int
			}
			if code != http.StatusForbidden || h.Get("Content-Type") != "application/problem+json" ||
				json.Unmarshal(body, &p) != nil || p.Code != "host_not_allowed" || p.Status != 403 || !strings.Contains(p.Detail, "loopback") {
				t.Errorf("Host %q %s: %d %q %s", host, path, code, h.Get("Content-Type"), body)
			}
		}
	}
}

// TestLoopbackHost is the host check's table of odd inputs.
func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.1:8080": true, "127.9.9.9:1": true, "localhost": true, "LocalHost:1": true,
		"[::1]": true, "[::1]:8080": true, "::1": true, "[::ffff:127.0.0.1]:80": true,
		"": false, ":8080": false, "evil": false, "localhost.": false, "localhost.evil": false, "127.0.0.1.nip.io": false,
		"127.1": false, "0x7f000001": false, "2130706433": false, "[fe80::1%lo]:80": false, "[::1%lo]": false,
		"10.0.0.1": false, "0.0.0.0": false, "[::]:80": false, "127.0.0.1:8080:9": false, "[::1": false, "user@127.0.0.1": false,
		"127.0.0.1\x00.evil": false, " 127.0.0.1": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// FuzzLoopbackHost: whatever the input, an accepted host names localhost or
// a loopback address.
func FuzzLoopbackHost(f *testing.F) {
	for _, s := range []string{"127.0.0.1:80", "localhost", "[::1]:1", "evil", "[fe80::1%lo]", "127.0.0.1.x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		if !loopbackHost(host) {
			return
		}
		h := host
		if hp, _, err := net.SplitHostPort(host); err == nil {
			h = hp
		}
		h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
		if ip := net.ParseIP(h); !strings.EqualFold(h, "localhost") && (ip == nil || !ip.IsLoopback()) {
			t.Fatalf("accepted %q", host)
		}
	})
}

// TestServerTimeouts: a client that never finishes its headers is cut off
// (ReadHeaderTimeout), and so is a keep-alive connection left idle
// (IdleTimeout). The stack runs with short timeouts; the test waits for the
// server to close each connection, up to a deadline far beyond them.
func TestServerTimeouts(t *testing.T) {
	st := startTestStack(t, Options{NoSeed: true, ReadHeaderTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond})
	u, err := url.Parse(st.URL)
	if err != nil {
		t.Fatal(err)
	}
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
		return c
	}
	closed := func(r io.Reader, what string) {
		t.Helper()
		_, err := r.Read(make([]byte, 1))
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("%s: the server kept the connection open for 60 s", what)
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isReset(err) {
			t.Fatalf("%s: read %v, want the connection closed", what, err)
		}
	}

	slow := dial()
	if _, err := io.WriteString(slow, "GET /movies HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
		t.Fatal(err)
	}
	closed(slow, "unfinished headers")

	idle := dial()
	if _, err := io.WriteString(idle, "GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Dev-User: u-a\r\nX-Dev-User-Name: A\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(idle)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.Close {
		t.Fatal("the server closed the connection after the response: keep-alive is off, the idle timeout untested")
	}
	closed(br, "idle keep-alive connection")
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && strings.Contains(op.Err.Error(), "connection reset")
}
