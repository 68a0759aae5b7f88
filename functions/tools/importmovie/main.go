// Command importmovie uploads a movie file through the API, as the page
// does: POST /movies, the presigned PUT straight to S3, then it waits until
// the ingest made the movie ready (or ingest_failed) and prints what it
// learned and how long the ingest took.
//
//	make import FILE=clip.mp4 TITLE="Mouse, trial 3"
//	go run ./functions/tools/importmovie -file clip.mp4 -title "Mouse, trial 3"
//
// The API is MOVIES_API_URL (default http://127.0.0.1:8080/, a running
// `make run`). Against a deployed environment set MOVIES_API_URL to the
// stack's ApiUrl output and MOVIES_API_TOKEN to a JWT the HTTP API's
// authorizer accepts (sent as Authorization: Bearer). Without a token it
// signs in to `make run` as Alice through its local OIDC provider
// (package localsignin); the development identity headers
// (MOVIES_DEV_USER, default "importer"), which only the local stack
// accepts, are sent when MOVIES_DEV_USER is set or the stack signs nobody in
// (-dev-only).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/movietrace/tracinglocks/functions/envvar"
	"github.com/movietrace/tracinglocks/functions/local/localsignin"
)

type movie struct {
	ID            string `json:"id"`
	Status        string `json:"status"`
	IngestFailure string `json:"ingestFailure"`
	Video         *struct {
		Width           int     `json:"width"`
		Height          int     `json:"height"`
		FrameCount      int     `json:"frameCount"`
		FrameRate       float64 `json:"frameRate"`
		Codec           string  `json:"codec"`
		DurationSeconds float64 `json:"durationSeconds"`
	} `json:"video"`
}

type created struct {
	Movie  movie `json:"movie"`
	Upload struct {
		Method  string            `json:"method"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	} `json:"upload"`
}

func main() {
	file := flag.String("file", "", "the movie file to upload (required)")
	title := flag.String("title", "", "the movie's title (default: the file name)")
	wait := flag.Duration("wait", 30*time.Minute, "how long to wait for the ingest (0: do not wait)")
	flag.Parse()
	if err := run(context.Background(), *file, *title, *wait, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "import:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, file, title string, wait time.Duration, getenv func(string) string) error {
	if file == "" {
		return errors.New("-file (FILE=...) is required")
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if title == "" {
		title = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	contentType := mime.TypeByExtension(strings.ToLower(filepath.Ext(file)))
	if contentType == "" || !strings.HasPrefix(contentType, "video/") {
		contentType = "video/mp4"
	}
	c := client{base: strings.TrimSuffix(orDefault(getenv(envvar.MoviesAPIURL), "http://127.0.0.1:8080/"), "/"),
		token: getenv(envvar.MoviesAPIToken), devUser: orDefault(getenv(envvar.MoviesDevUser), "importer")}
	if c.token == "" && getenv(envvar.MoviesDevUser) == "" {
		// make run: sign in as Alice through its OIDC provider, as the page
		// does; the development headers only for a -dev-only stack.
		tok, err := localsignin.SignIn(ctx, c.base+"/", "alice")
		switch {
		case err == nil:
			c.token = tok
		case errors.Is(err, localsignin.ErrNoSignIn), errors.Is(err, localsignin.ErrNotLoopback):
		default:
			return fmt.Errorf("sign in through make run's OIDC provider: %w", err)
		}
	}

	var out created
	body := map[string]any{"title": title, "fileName": filepath.Base(file), "contentType": contentType, "sizeBytes": st.Size()}
	if err := c.json(ctx, http.MethodPost, "/movies", body, http.StatusCreated, &out); err != nil {
		return err
	}
	fmt.Printf("created %s (%s); uploading %d bytes ...\n", out.Movie.ID, out.Movie.Status, st.Size())
	began := time.Now()
	req, err := http.NewRequestWithContext(ctx, out.Upload.Method, out.Upload.URL, f)
	if err != nil {
		return err
	}
	req.ContentLength = st.Size()
	for k, v := range out.Upload.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("upload: %s: %s", resp.Status, msg)
	}
	uploaded := time.Now()
	fmt.Printf("uploaded in %s\n", uploaded.Sub(began).Round(time.Millisecond))
	if wait <= 0 {
		return nil
	}
	deadline := time.Now().Add(wait)
	for {
		var m movie
		if err := c.json(ctx, http.MethodGet, "/movies/"+out.Movie.ID, nil, http.StatusOK, &m); err != nil {
			return err
		}
		switch m.Status {
		case "awaiting_upload":
		case "ingest_failed":
			return fmt.Errorf("%s: ingest failed after %s: %s", m.ID, time.Since(uploaded).Round(time.Millisecond), m.IngestFailure)
		default:
			v := m.Video
			if v == nil {
				return fmt.Errorf("%s is %s without a video", m.ID, m.Status)
			}
			fmt.Printf("%s is %s: %d frames at %.3f fps, %dx%d %s, %.3f s; ingest took %s after the upload\n",
				m.ID, m.Status, v.FrameCount, v.FrameRate, v.Width, v.Height, v.Codec, v.DurationSeconds,
				time.Since(uploaded).Round(100*time.Millisecond))
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: still awaiting its ingest after %s", m.ID, wait)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

type client struct {
	base, token, devUser string
}

func (c client) json(ctx context.Context, method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	} else {
		req.Header.Set("X-Dev-User", c.devUser)
		req.Header.Set("X-Dev-User-Name", c.devUser)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != want {
		var p struct{ Code, Detail string }
		_ = json.Unmarshal(data, &p)
		return fmt.Errorf("%s %s: %s: %s %s", method, path, resp.Status, p.Code, p.Detail)
	}
	return json.Unmarshal(data, out)
}
