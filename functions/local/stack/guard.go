package stack

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"time"
)

// Server timeouts of the local stack's HTTP server. ReadHeaderTimeout bounds
// how long a client may take to send its request headers (a slow-loris
// connection is closed); IdleTimeout how long a keep-alive connection may
// wait for its next request. There is no ReadTimeout or WriteTimeout: a
// request's body is bounded by the API itself and nothing streams for long.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
)

// loopbackHost reports whether the Host header names this machine's
// loopback interface: localhost or a loopback IP address, with or without a
// port. Anything else is refused by hostGuard.
func loopbackHost(hostHeader string) bool {
	host := hostHeader
	if h, _, err := net.SplitHostPort(hostHeader); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1] // [::1] without a port
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if strings.Contains(host, "%") { // a zone (fe80::1%lo) is never needed here
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostGuard refuses every request whose Host header does not name the
// loopback interface. The stack trusts a development identity (X-Dev-User
// headers, or the local sign-in), and listening on 127.0.0.1 only does not
// stop a web page from another origin reaching it through DNS rebinding (a
// name that first resolves to the attacker's server, then to 127.0.0.1):
// such a request still carries the attacker's host name, so it is answered
// 403 with a problem that says why.
func hostGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loopbackHost(r.Host) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"type":   "https://tracinglocks.dev/problems/host_not_allowed",
			"title":  "Host not allowed",
			"status": http.StatusForbidden,
			"detail": "The local stack answers only requests addressed to a loopback host (127.0.0.1, localhost or [::1]); " +
				"this request's Host header names another host, as a DNS-rebinding page would. Open the URL `make run` printed.",
			"instance": r.URL.Path,
			"code":     "host_not_allowed",
		})
	})
}
