package stack

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// responseOverrides are the query parameters of a presigned GET with which
// S3 sets a response header (GetObject's Response* fields).
var responseOverrides = map[string]string{
	"response-cache-control":       "Cache-Control",
	"response-content-type":        "Content-Type",
	"response-content-disposition": "Content-Disposition",
	"response-content-language":    "Content-Language",
	"response-content-encoding":    "Content-Encoding",
	"response-expires":             "Expires",
}

// s3Front is the local stack's S3 endpoint: a reverse proxy to the emulator
// that does what S3 does and fauxqs does not, apply a GET's response-*
// overrides (so a frame image is served with s3store.FrameCacheControl, as
// in AWS, and the browser caches it locally as it would there). Everything
// else passes through unchanged.
type s3Front struct {
	server *http.Server
	done   chan error
	URL    string
}

func startS3Front(target string) (*s3Front, error) {
	to, err := url.Parse(target)
	if err != nil || to.Host == "" {
		return nil, errors.New("s3 front: bad emulator endpoint " + target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(to); r.Out.Host = r.In.Host },
		ModifyResponse: func(res *http.Response) error {
			if res.Request.Method != http.MethodGet && res.Request.Method != http.MethodHead {
				return nil
			}
			if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusPartialContent && res.StatusCode != http.StatusNotModified {
				return nil
			}
			q := res.Request.URL.Query()
			for param, header := range responseOverrides {
				if v := q.Get(param); v != "" {
					res.Header.Set(header, v)
				}
			}
			return nil
		},
	}
	f := &s3Front{server: &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}, done: make(chan error, 1),
		URL: "http://" + ln.Addr().String()}
	go func() { f.done <- f.server.Serve(ln) }()
	return f, nil
}

func (f *s3Front) stop(ctx context.Context) error {
	err := f.server.Shutdown(ctx)
	if serveErr := <-f.done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}
