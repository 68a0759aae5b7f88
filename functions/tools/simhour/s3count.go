package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
)

// s3Counter sits between the local stack and the S3 emulator (the stack's
// S3Endpoint): every S3 request of the stack, the user's presigned PUT
// and the ingest's ffmpeg/ffprobe reads over presigned GETs pass through
// it, and it counts them by kind, with the bytes read from uploads/ (the
// response bodies, as they are copied to the reader) and written to
// frames/.
type s3Counter struct {
	window[s3Counts]
	URL string
	srv *http.Server
}

// s3Counts are the requests counted since the last take.
type s3Counts struct {
	UploadGETs      int   // GETs of uploads/<id> (ranged or whole)
	UploadReadBytes int64 // response bytes of those GETs
	UploadHEADs     int
	ChunkPUTs       int   // PUTs under frames/
	ChunkPUTBytes   int64 // their bodies
	UploadPUTs      int   // the user's upload (PUT or parts)
	UploadPUTBytes  int64
	Other           int // tagging, lists, deletes, the bucket's set-up
}

func (c *s3Counts) add(o s3Counts) {
	c.UploadGETs += o.UploadGETs
	c.UploadReadBytes += o.UploadReadBytes
	c.UploadHEADs += o.UploadHEADs
	c.ChunkPUTs += o.ChunkPUTs
	c.ChunkPUTBytes += o.ChunkPUTBytes
	c.UploadPUTs += o.UploadPUTs
	c.UploadPUTBytes += o.UploadPUTBytes
	c.Other += o.Other
}

// objectKey is the key of a path-style request (/bucket/key), "" for a
// bucket-level one.
func objectKey(path string) string {
	_, key, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return key
}

func startS3Counter(target string) (*s3Counter, error) {
	to, err := url.Parse(target)
	if err != nil || to.Host == "" {
		return nil, errors.New("s3 counter: bad emulator endpoint " + target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &s3Counter{URL: "http://" + ln.Addr().String()}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(to); r.Out.Host = r.In.Host },
		ModifyResponse: func(res *http.Response) error {
			key, q := objectKey(res.Request.URL.Path), res.Request.URL.Query()
			_, tagging := q["tagging"]
			c.mu.Lock()
			defer c.mu.Unlock()
			switch m := res.Request.Method; {
			case tagging || key == "":
				c.cur.Other++
			case m == http.MethodGet && strings.HasPrefix(key, "uploads/"):
				c.cur.UploadGETs++
				res.Body = &countingBody{ReadCloser: res.Body, c: c}
			case m == http.MethodHead && strings.HasPrefix(key, "uploads/"):
				c.cur.UploadHEADs++
			case m == http.MethodPut && strings.HasPrefix(key, "frames/"):
				c.cur.ChunkPUTs++
				c.cur.ChunkPUTBytes += max(res.Request.ContentLength, 0)
			case m == http.MethodPut && strings.HasPrefix(key, "uploads/"):
				c.cur.UploadPUTs++
				c.cur.UploadPUTBytes += max(res.Request.ContentLength, 0)
			default:
				c.cur.Other++
			}
			return nil
		},
	}
	c.srv = &http.Server{Handler: proxy}
	go func() { _ = c.srv.Serve(ln) }()
	return c, nil
}

func (c *s3Counter) close() error { return c.srv.Close() }

type countingBody struct {
	io.ReadCloser
	c *s3Counter
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.c.mu.Lock()
	b.c.cur.UploadReadBytes += int64(n)
	b.c.mu.Unlock()
	return n, err
}
