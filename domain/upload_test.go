package domain

import (
	"strings"
	"testing"
	"time"
)

func validCreate() CreateMovie {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	return CreateMovie{ID: "m1", Title: "Mouse, open field", MaxBytes: 100 << 20, Now: now,
		Upload: Upload{FileName: "trial 1.mp4", ContentType: "video/mp4", SizeBytes: 5 << 20, ExpiresAt: now.Add(time.Hour)}}
}

func TestCreateMovieAcceptsUnicodeAndParameters(t *testing.T) {
	for _, mod := range []func(*CreateMovie){
		func(c *CreateMovie) { c.Title = "Zebrafisch — Larve 🐟 日本語" },
		func(c *CreateMovie) { c.Upload.FileName = "résumé ünïcode 動画.mov" },
		func(c *CreateMovie) { c.Upload.ContentType = "video/quicktime" },
		func(c *CreateMovie) { c.Upload.ContentType = "video/mp4; codecs=\"avc1.42E01E\"" },
		func(c *CreateMovie) { c.Upload.SizeBytes = c.MaxBytes },
		func(c *CreateMovie) { c.Upload.FileName = "..hidden.mp4" },
	} {
		c := validCreate()
		mod(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	m := validCreate().Movie()
	if m.Status != StatusAwaitingUpload || m.Upload == nil || m.Version != 1 || m.FrameCount != 0 || m.Settings.Markers == nil {
		t.Fatalf("new movie: %+v", m)
	}
}

func TestCreateMovieGarbage(t *testing.T) {
	cases := []struct {
		name  string
		mod   func(*CreateMovie)
		code  Code
		field string
	}{
		{"bad id", func(c *CreateMovie) { c.ID = "../etc" }, CodeInvalid, "id"},
		{"empty title", func(c *CreateMovie) { c.Title = "" }, CodeInvalid, "title"},
		{"long title", func(c *CreateMovie) { c.Title = strings.Repeat("a", MaxTitle+1) }, CodeInvalid, "title"},
		{"title invalid utf-8", func(c *CreateMovie) { c.Title = "a\xffb" }, CodeInvalid, "title"},
		{"title control", func(c *CreateMovie) { c.Title = "a\x00b" }, CodeInvalid, "title"},
		{"title newline", func(c *CreateMovie) { c.Title = "a\nb" }, CodeInvalid, "title"},
		{"title bidi override", func(c *CreateMovie) { c.Title = "evil\u202Egnp.exe" }, CodeInvalid, "title"},
		{"title zero width", func(c *CreateMovie) { c.Title = "a\u200Bb" }, CodeInvalid, "title"},
		{"title padded", func(c *CreateMovie) { c.Title = " padded " }, CodeInvalid, "title"},
		{"file path", func(c *CreateMovie) { c.Upload.FileName = "../../etc/passwd" }, CodeInvalid, "fileName"},
		{"file windows path", func(c *CreateMovie) { c.Upload.FileName = `C:\movies\a.mp4` }, CodeInvalid, "fileName"},
		{"file dotdot", func(c *CreateMovie) { c.Upload.FileName = ".." }, CodeInvalid, "fileName"},
		{"file dot", func(c *CreateMovie) { c.Upload.FileName = "." }, CodeInvalid, "fileName"},
		{"file empty", func(c *CreateMovie) { c.Upload.FileName = "" }, CodeInvalid, "fileName"},
		{"file nul", func(c *CreateMovie) { c.Upload.FileName = "a\x00.mp4" }, CodeInvalid, "fileName"},
		{"file long", func(c *CreateMovie) { c.Upload.FileName = strings.Repeat("é", 128) + ".mp4" }, CodeInvalid, "fileName"},
		{"file rtl trick", func(c *CreateMovie) { c.Upload.FileName = "movie\u202E4pm.exe" }, CodeInvalid, "fileName"},
		{"not video", func(c *CreateMovie) { c.Upload.ContentType = "application/pdf" }, CodeNotVideo, "contentType"},
		{"image", func(c *CreateMovie) { c.Upload.ContentType = "image/png" }, CodeNotVideo, "contentType"},
		{"video prefix only", func(c *CreateMovie) { c.Upload.ContentType = "video/" }, CodeNotVideo, "contentType"},
		{"unknown video", func(c *CreateMovie) { c.Upload.ContentType = "video/x-evil" }, CodeNotVideo, "contentType"},
		{"no type", func(c *CreateMovie) { c.Upload.ContentType = "" }, CodeNotVideo, "contentType"},
		{"garbled type", func(c *CreateMovie) { c.Upload.ContentType = "video/mp4;;;=" }, CodeNotVideo, "contentType"},
		{"zero bytes", func(c *CreateMovie) { c.Upload.SizeBytes = 0 }, CodeInvalid, "sizeBytes"},
		{"negative", func(c *CreateMovie) { c.Upload.SizeBytes = -1 }, CodeInvalid, "sizeBytes"},
		{"too large", func(c *CreateMovie) { c.Upload.SizeBytes = c.MaxBytes + 1 }, CodeFileTooLarge, "sizeBytes"},
		{"expired", func(c *CreateMovie) { c.Upload.ExpiresAt = c.Now }, CodeInvalid, "expiresAt"},
	}
	for _, tc := range cases {
		c := validCreate()
		tc.mod(&c)
		e, ok := AsError(c.Validate())
		if !ok || e.Code != tc.code || e.Field != tc.field {
			t.Errorf("%s: got %v, want %s on %s", tc.name, e, tc.code, tc.field)
		}
	}
	c := validCreate()
	c.Upload.SizeBytes = c.MaxBytes + 1
	if err := c.Validate(); !strings.Contains(err.Error(), "104857600 bytes (100 MiB)") {
		t.Errorf("413 message does not state the limit: %v", err)
	}
}

func TestIngestCommands(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	m := validCreate().Movie()
	ready := CompleteIngest{FrameCount: 100, FrameRate: 25, Now: now, Video: Video{Width: 64, Height: 48, Codec: "h264", DurationSeconds: 4, Rendition: RenditionCopy}}
	got, err := Execute(&m, ready)
	if err != nil || got.Status != StatusReady || got.Settings.Trim != (Trim{0, 100}) || got.Video.Width != 64 || got.Video.Rendition != RenditionCopy {
		t.Fatalf("ready: %+v %v", got, err)
	}
	if _, err := Execute(&got, ready); ErrorCode(err) != CodeNotAwaitingUpload {
		t.Fatalf("redelivery: %v", err)
	}
	failed, err := Execute(&m, FailIngest{Summary: "not a video at /tmp/x token=abc", Now: now})
	if err != nil || failed.Status != StatusIngestFailed || failed.IngestFailure == "" || strings.Contains(failed.IngestFailure, "/tmp") {
		t.Fatalf("failed: %+v %v", failed, err)
	}
	if _, err := Execute(&failed, OpenAnalysis{LeaseID: strings.Repeat("a", 32), User: User{ID: "u", Name: "U"}, Now: now, Duration: time.Minute}); ErrorCode(err) != CodeMovieNotReady {
		t.Fatalf("open on a failed ingest: %v", err)
	}
	for _, bad := range []CompleteIngest{
		{FrameCount: 0, FrameRate: 25, Video: ready.Video}, {FrameCount: 1, FrameRate: 0, Video: ready.Video},
		{FrameCount: 1, FrameRate: 25, Video: Video{Width: 0, Height: 1, Codec: "h264"}},
		{FrameCount: 1, FrameRate: 25, Video: Video{Width: 1, Height: 1, Codec: ""}},
		{FrameCount: 1, FrameRate: 25, Video: Video{Width: 1, Height: 1, Codec: "h264", Rendition: "png"}},
	} {
		if err := bad.Validate(); ErrorCode(err) != CodeInvalid {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if err := (FailIngest{Summary: " \t "}).Validate(); ErrorCode(err) != CodeInvalid {
		t.Errorf("empty summary: %v", err)
	}
}
