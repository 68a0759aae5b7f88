package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// Sample clips: real H.264 movies of things that move, generated with
// ffmpeg on first use (cached in Options.SampleDir) and put through the
// same path as any upload: CreateMovie, the presigned PUT, the S3 event,
// the ingest; then their markers are placed under an analysis lease. IDs,
// frame counts, rates and markers are those of the former synthetic rows,
// so the demo and the tests keep their movies.
type sampleClip struct {
	id, title     string
	frames, fps   int
	width, height int
	markers       []domain.Marker
	draw          func(i int, gray []byte, w, h int)
}

// sampleVersion changes whenever a clip's drawing changes, so a cached file
// of an older drawing is not reused.
const sampleVersion = "v1"

var sampleClips = []sampleClip{
	{id: "zebrafish-larva", title: "Zebrafish larva, free swimming", frames: 240, fps: 24, width: 320, height: 240,
		markers: []domain.Marker{{ID: "m1", Label: "Head", X: 0.42, Y: 0.48}},
		draw: func(i int, g []byte, w, h int) {
			fill(g, 205)
			t := float64(i) / 24
			cx := 0.42*float64(w) + 80*math.Sin(t*0.9)
			cy := 0.48*float64(h) + 40*math.Sin(t*1.7)
			ellipse(g, w, h, cx, cy, 18, 7, math.Atan2(1.7*40*math.Cos(t*1.7), 0.9*80*math.Cos(t*0.9)), 40)
		}},
	{id: "mouse-open-field", title: "Mouse, open-field trial", frames: 600, fps: 30, width: 320, height: 240,
		draw: func(i int, g []byte, w, h int) {
			fill(g, 90)
			disc(g, w, h, float64(w)/2, float64(h)/2, 110, 150) // the arena
			t := float64(i) / 30
			disc(g, w, h, float64(w)/2+70*math.Cos(t*0.6)+15*math.Sin(t*2.3), float64(h)/2+60*math.Sin(t*0.8), 12, 30)
		}},
	{id: "fly-courtship", title: "Fruit fly courtship", frames: 360, fps: 60, width: 320, height: 240,
		draw: func(i int, g []byte, w, h int) {
			fill(g, 230)
			t := float64(i) / 60
			disc(g, w, h, 160+50*math.Cos(t), 120+50*math.Sin(t), 6, 20)
			disc(g, w, h, 160+62*math.Cos(t-0.35), 120+62*math.Sin(t-0.35), 5, 35)
		}},
	{id: FailingMovieID, title: "Damaged footage (its trace fails)", frames: 240, fps: 24, width: 320, height: 240,
		markers: []domain.Marker{{ID: "m1", Label: "Target", X: 0.6, Y: 0.4}},
		draw: func(i int, g []byte, w, h int) {
			for p := range g {
				g[p] = byte(120 + (p*7919+i*104729)%60) // static-like noise
			}
			disc(g, w, h, 0.6*float64(w)+30*math.Sin(float64(i)/10), 0.4*float64(h), 10, 250)
		}},
}

func fill(g []byte, v byte) {
	for i := range g {
		g[i] = v
	}
}

func disc(g []byte, w, h int, cx, cy, r float64, v byte) { ellipse(g, w, h, cx, cy, r, r, 0, v) }

func ellipse(g []byte, w, h int, cx, cy, a, b, angle float64, v byte) {
	cos, sin := math.Cos(angle), math.Sin(angle)
	for y := max(0, int(cy-a-1)); y < min(h, int(cy+a+2)); y++ {
		for x := max(0, int(cx-a-1)); x < min(w, int(cx+a+2)); x++ {
			dx, dy := float64(x)-cx, float64(y)-cy
			u, v2 := (dx*cos+dy*sin)/a, (-dx*sin+dy*cos)/b
			if u*u+v2*v2 <= 1 {
				g[y*w+x] = v
			}
		}
	}
}

// sampleFile returns the clip's file, encoding it into dir if absent.
func sampleFile(ctx context.Context, dir string, c sampleClip) (string, error) {
	path := filepath.Join(dir, c.id+"-"+sampleVersion+".mp4")
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp := path + ".tmp-" + token.New()[:8] + ".mp4"
	defer os.Remove(tmp)
	err := videotest.Encode(ctx, tmp, videotest.Options{Width: c.width, Height: c.height, FrameRate: c.fps, Frames: c.frames,
		Codec: videotest.H264, Extra: []string{"-movflags", "+faststart"}},
		func(i int, gray []byte) { c.draw(i, gray, c.width, c.height) })
	if err != nil {
		return "", fmt.Errorf("encode sample %s: %w", c.id, err)
	}
	return path, os.Rename(tmp, path)
}

// seedSamples creates every sample clip's movie that does not exist yet
// and waits until each is ingested (at most timeout). It is idempotent and
// resumes: a sample still awaiting its upload (a start that stopped between
// the create and the upload) is created again, which the store recognises
// as the same creation, and uploaded unless its file is there (S3's 412);
// every write is the store's, which retries a lost answer (issue 20 item 3).
// A sample ingested by a start that stopped before placing its markers gets
// them now (needsMarkers).
func (s *Stack) seedSamples(ctx context.Context, dir string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var pending []sampleClip
	for _, c := range sampleClips {
		m, err := s.Movies.Get(ctx, c.id)
		switch {
		case domain.ErrorCode(err) == domain.CodeNotFound:
		case err != nil:
			return err
		case needsMarkers(m, c):
			// Ingested, but a start stopped before its markers were placed.
			pending = append(pending, c)
			continue
		case m.Status != domain.StatusAwaitingUpload:
			continue // exists: keep it as it is
		}
		path, err := sampleFile(ctx, dir, c)
		if err != nil {
			return err
		}
		if err := s.uploadSample(ctx, c, path); err != nil {
			return err
		}
		pending = append(pending, c)
	}
	for _, c := range pending {
		if err := s.finishSample(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

func (s *Stack) uploadSample(ctx context.Context, c sampleClip, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	now := time.Now()
	cmd := domain.CreateMovie{ID: c.id, Title: c.title, MaxBytes: int64(len(data)), Now: now,
		Upload: domain.Upload{FileName: filepath.Base(path), ContentType: "video/mp4", SizeBytes: int64(len(data)), ExpiresAt: now.Add(time.Hour)}}
	if err := cmd.Validate(); err != nil {
		return err
	}
	if err := s.Movies.Create(ctx, cmd.Movie()); err != nil {
		return fmt.Errorf("create sample %s: %w", c.id, err)
	}
	url, headers, err := s.Files.PresignUploadURL(ctx, c.id, "video/mp4", int64(len(data)), time.Hour)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("upload sample %s: %w", c.id, err)
	}
	resp.Body.Close()
	// 412: the file is there already (If-None-Match: *), from an earlier
	// start that stopped before its ingest ended.
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPreconditionFailed {
		return fmt.Errorf("upload sample %s: %s", c.id, resp.Status)
	}
	return nil
}

// needsMarkers reports whether sample c's row is ingested but still lacks
// the markers seeding places after the ingest: a start that stopped between
// the two (issue 20). Only a row nobody has worked on qualifies (no
// markers, never traced, no live lease), so markers a user removed from a
// sample they traced are not put back.
func needsMarkers(m domain.Movie, c sampleClip) bool {
	return len(c.markers) > 0 && m.Status == domain.StatusReady && len(m.Settings.Markers) == 0 &&
		m.LastJob == nil && m.LiveLease(time.Now()) == nil
}

// finishSample waits for the ingest, then places the clip's markers as a
// browser would: open Analyze, edit, release.
func (s *Stack) finishSample(ctx context.Context, c sampleClip) error {
	for {
		m, err := s.Movies.Get(ctx, c.id)
		if err != nil {
			return err
		}
		if m.Status == domain.StatusIngestFailed {
			return fmt.Errorf("sample %s: ingest failed: %s", c.id, m.IngestFailure)
		}
		if m.Status != domain.StatusAwaitingUpload {
			break
		}
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("sample %s: not ingested in time", c.id), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	if len(c.markers) == 0 {
		return nil
	}
	lease, now := token.New(), time.Now()
	seeder := domain.User{ID: "sample-seeder", Name: "Sample seeder"}
	if _, err := s.Movies.Commit(ctx, c.id, domain.OpenAnalysis{LeaseID: lease, User: seeder, Now: now, Duration: time.Minute}); err != nil {
		return fmt.Errorf("sample %s: %w", c.id, err)
	}
	if _, err := s.Movies.Commit(ctx, c.id, domain.EditMarkers{LeaseID: lease, Now: now, Markers: c.markers}); err != nil {
		return fmt.Errorf("sample %s: %w", c.id, err)
	}
	_, err := s.Movies.Release(ctx, c.id, domain.Release{LeaseID: lease, Now: now})
	return err
}
