package ingest_test

import (
	"bytes"
	"image/color"
	"image/jpeg"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/ingest"
	"github.com/movietrace/tracinglocks/functions/internal/logging"
	"github.com/movietrace/tracinglocks/functions/internal/media"
	"github.com/movietrace/tracinglocks/functions/internal/queue"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/internal/video"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
)

// env is one bucket (notifying its own queue), one movies table, and the
// ingest on them: all real (fauxqs S3 and SQS, DynamoDB Local, ffmpeg).
type env struct {
	t        *testing.T
	movies   *dynamo.MovieStore
	files    *s3store.Store
	sqs      *sqs.Client
	queueURL string
	queueARN string
	ingest   *ingest.Handler
	logs     *testenv.LogBuffer
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := t.Context()
	db := testenv.DynamoDB(t)
	tables := testenv.NewTables(t, db)
	e := &env{t: t, movies: dynamo.NewMovieStore(db, tables.Movies), sqs: testenv.SQS(t), logs: &testenv.LogBuffer{}}
	q, err := e.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(testenv.UniqueName(t, "uploads"))})
	if err != nil {
		t.Fatal(err)
	}
	e.queueURL = aws.ToString(q.QueueUrl)
	attrs, err := e.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	e.queueARN = attrs.Attributes["QueueArn"]
	bucket := strings.ToLower(strings.ReplaceAll(testenv.UniqueName(t, "movies"), "_", "-"))
	client := testenv.S3(t)
	if err := s3store.CreateBucket(ctx, client, bucket, e.queueARN, s3store.UploadPrefix); err != nil {
		t.Fatal(err)
	}
	if e.files, err = s3store.New(s3store.Options{Client: client, Bucket: bucket}); err != nil {
		t.Fatal(err)
	}
	e.receive() // the configuration's s3:TestEvent
	if e.ingest, err = ingest.New(ingest.Options{Movies: e.movies, Files: e.files, Log: logging.New(e.logs, slog.LevelDebug)}); err != nil {
		t.Fatal(err)
	}
	return e
}

// receive returns the queue's messages as the real events.SQSEvent Lambda
// delivers (deleting them from the queue).
func (e *env) receive() events.SQSEvent {
	e.t.Helper()
	out, err := e.sqs.ReceiveMessage(e.t.Context(), &sqs.ReceiveMessageInput{QueueUrl: &e.queueURL, MaxNumberOfMessages: 10,
		WaitTimeSeconds: 2, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
	if err != nil {
		e.t.Fatal(err)
	}
	var ev events.SQSEvent
	for _, m := range out.Messages {
		ev.Records = append(ev.Records, queue.LambdaMessage(m, e.queueARN, "us-east-1"))
		if _, err := e.sqs.DeleteMessage(e.t.Context(), &sqs.DeleteMessageInput{QueueUrl: &e.queueURL, ReceiptHandle: m.ReceiptHandle}); err != nil {
			e.t.Fatal(err)
		}
	}
	return ev
}

// upload creates a movie for file and PUTs it through the presigned URL,
// as a browser does; it returns the movie ID and the PUT's status.
func (e *env) upload(id string, file []byte) int {
	e.t.Helper()
	ctx := e.t.Context()
	now := time.Now()
	c := domain.CreateMovie{ID: id, Title: "test " + id, MaxBytes: 1 << 30, Now: now,
		Upload: domain.Upload{FileName: id + ".mp4", ContentType: "video/mp4", SizeBytes: int64(len(file)), ExpiresAt: now.Add(time.Hour)}}
	if err := c.Validate(); err != nil {
		e.t.Fatal(err)
	}
	if err := e.movies.Create(ctx, c.Movie()); err != nil {
		e.t.Fatal(err)
	}
	return e.put(id, file)
}

func (e *env) put(id string, file []byte) int {
	e.t.Helper()
	url, headers, err := e.files.PresignUploadURL(e.t.Context(), id, "video/mp4", int64(len(file)), time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(e.t.Context(), http.MethodPut, url, bytes.NewReader(file))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (e *env) handle(ev events.SQSEvent) events.SQSEventResponse {
	e.t.Helper()
	resp, err := e.ingest.Handle(e.t.Context(), ev)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

func (e *env) get(id string) domain.Movie {
	e.t.Helper()
	m, err := e.movies.Get(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// movingSquare writes an H.264 MP4 of a bright square moving over a
// gradient: frames differ, so a frame off by one is caught. x264's extra
// arguments (keyframes) may follow.
func movingSquare(t *testing.T, frames, fps int, x264 ...string) (path string, data []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "square.mp4")
	const w, h = 96, 64
	err := videotest.Encode(t.Context(), path, videotest.Options{Width: w, Height: h, FrameRate: fps, Frames: frames, Codec: videotest.H264,
		Extra: append([]string{"-movflags", "+faststart"}, x264...)}, func(i int, gray []byte) {
		for y := range h {
			for x := range w {
				gray[y*w+x] = byte(x + y)
			}
		}
		for y := 20; y < 36; y++ {
			for x := 2 * i % (w - 16); x < 2*i%(w-16)+16; x++ {
				gray[y*w+x] = 250
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

func TestIngestMakesAnUploadReadyWithExactFrames(t *testing.T) {
	e := newEnv(t)
	path, data := movingSquare(t, 30, 10)
	if status := e.upload("ok1", data); status != http.StatusOK {
		t.Fatalf("PUT: %d", status)
	}
	ev := e.receive()
	if len(ev.Records) != 1 {
		t.Fatalf("%d messages after the PUT, want 1", len(ev.Records))
	}
	if resp := e.handle(ev); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures: %+v\n%s", resp, e.logs)
	}
	m := e.get("ok1")
	want := domain.Video{Width: 96, Height: 64, Codec: "h264", DurationSeconds: 3}
	if m.Status != domain.StatusReady || m.FrameCount != 30 || m.FrameRate != 10 || m.Video == nil ||
		m.Video.Width != want.Width || m.Video.Height != want.Height || m.Video.Codec != want.Codec ||
		m.Settings.Trim != (domain.Trim{Start: 0, End: 30}) || m.Settings.CaptureInterval != 1 {
		t.Fatalf("after ingest: %+v video %+v", m, m.Video)
	}

	// Frame N as the tracer and the page get it (the frame provider, from
	// the rendition's chunks) is frame N of the file: nearer to the file's
	// frame N (video.ReadFrames of the upload) than to its neighbours, and
	// the page's image is the tracer's frame within 40 dB.
	// Its one GOP of 30 frames is remuxed: one chunk of 30.
	if m.Video.ChunkFrames != 30 || m.Video.Rendition != domain.RenditionCopy {
		t.Fatalf("chunk size %d, rendition %q recorded", m.Video.ChunkFrames, m.Video.Rendition)
	}
	p, err := media.NewProvider(media.ProviderOptions{Objects: e.files})
	if err != nil {
		t.Fatal(err)
	}
	var source [][]byte
	if err := video.ReadFrames(t.Context(), path, video.ReadOptions{}, func(f video.Frame) error {
		source = append(source, append([]byte(nil), f.Gray...))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var traced [][]byte
	if err := p.ReadFrames(t.Context(), m, video.ReadOptions{}, func(f video.Frame) error {
		traced = append(traced, append([]byte(nil), f.Gray...))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(traced) != 30 || len(source) != 30 {
		t.Fatalf("%d frames traced, %d in the file", len(traced), len(source))
	}
	for _, n := range []int{0, 1, 14, 29} {
		own := videotest.PSNR(traced[n], source[n])
		for _, other := range []int{n - 1, n + 1} {
			if other >= 0 && other < 30 && videotest.PSNR(traced[n], source[other]) >= own {
				t.Fatalf("frame %d is nearer to the file's frame %d (%.1f dB) than to its own (%.1f dB)", n, other, videotest.PSNR(traced[n], source[other]), own)
			}
		}
		if own < 35 {
			t.Fatalf("frame %d: %.1f dB from the file's", n, own)
		}
		jpg, err := p.Image(t.Context(), m, n)
		if err != nil {
			t.Fatal(err)
		}
		luma, width, height, err := videotest.JPEGLuma(jpg)
		if cfg, cerr := jpeg.DecodeConfig(bytes.NewReader(jpg)); err != nil || cerr != nil || cfg.ColorModel != color.YCbCrModel || width != 96 || height != 64 {
			t.Fatalf("frame %d: a %dx%d image: %v %v", n, width, height, err, cerr)
		}
		if d := videotest.PSNR(luma, traced[n]); d < 40 {
			t.Fatalf("frame %d: the page's image is %.1f dB from the tracer's frame", n, d)
		}
	}

	// A redelivered event is a no-op.
	version := m.Version
	e.handle(ev)
	if again := e.get("ok1"); again.Version != version {
		t.Fatalf("redelivery changed the movie: version %d -> %d", version, again.Version)
	}
	// A second upload to the same movie is refused by S3 (If-None-Match).
	if status := e.put("ok1", []byte("other bytes")); status != http.StatusPreconditionFailed {
		t.Fatalf("second PUT: %d, want 412", status)
	}
}

func TestIngestFailuresAreSafeAndFinal(t *testing.T) {
	e := newEnv(t)
	_, data := movingSquare(t, 20, 10)
	cases := map[string][]byte{
		"notvideo":  []byte("%PDF-1.4 this is not a movie at all\n"),
		"truncated": data[:len(data)/2],
		"zeros":     make([]byte, 4096),
	}
	for id, file := range cases {
		if status := e.upload(id, file); status != http.StatusOK {
			t.Fatalf("%s: PUT %d", id, status)
		}
	}
	ev := e.receive()
	if len(ev.Records) != len(cases) {
		t.Fatalf("%d messages, want %d", len(ev.Records), len(cases))
	}
	if resp := e.handle(ev); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("a bad file is not worth a retry: %+v", resp)
	}
	for id := range cases {
		m := e.get(id)
		if m.Status != domain.StatusIngestFailed || m.IngestFailure == "" || strings.ContainsAny(m.IngestFailure, "/\\") {
			t.Errorf("%s: status %s summary %q", id, m.Status, m.IngestFailure)
		}
		t.Logf("%s: %s", id, m.IngestFailure)
	}
}

func TestIngestOfADeletedMovieRemovesItsFiles(t *testing.T) {
	e := newEnv(t)
	_, data := movingSquare(t, 10, 10)
	e.upload("gone1", data)
	if _, err := e.movies.Delete(t.Context(), "gone1", domain.DeleteMovie{Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if resp := e.handle(e.receive()); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures: %+v", resp)
	}
	if _, err := e.files.Head(t.Context(), s3store.UploadKey("gone1")); err != s3store.ErrNotFound {
		t.Fatalf("the deleted movie's upload is still there: %v", err)
	}
}

func TestIngestSkipsGarbageAndTestEvents(t *testing.T) {
	e := newEnv(t)
	ev := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "1", Body: `{"Service":"Amazon S3","Event":"s3:TestEvent","Bucket":"b"}`},
		{MessageId: "2", Body: `not json`},
		{MessageId: "3", Body: `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"object":{"key":"frames%2Fx%2F1.png"}}}]}`},
		{MessageId: "4", Body: `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"object":{"key":"uploads/..%2F..%2Fetc"}}}]}`},
		{MessageId: "5", Body: `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"object":{"key":"uploads/nosuchmovie"}}}]}`},
	}}
	if resp := e.handle(ev); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures: %+v", resp)
	}
}

func FuzzParseNotification(f *testing.F) {
	f.Add(`{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"object":{"key":"uploads/m1"}}}]}`)
	f.Add(`{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"object":{"key":"uploads/a+b%2Fc"}}}]}`)
	f.Add(`{"Event":"s3:TestEvent"}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, body string) {
		ids, err := ingest.ParseNotification(body)
		if err != nil && ids != nil {
			t.Fatal("ids with an error")
		}
		for _, id := range ids {
			if !domain.ValidMovieID(id) {
				t.Fatalf("invalid movie ID %q from %q", id, body)
			}
		}
	})
}

// The sweeper's hook: an upload that never arrived expires once, a movie
// that is ready or still within its expiry is left alone.
func TestExpireUploads(t *testing.T) {
	e := newEnv(t)
	now := time.Now()
	mk := func(id string, expires time.Time) domain.Movie {
		c := domain.CreateMovie{ID: id, Title: id, MaxBytes: 1 << 20, Now: now.Add(-2 * time.Hour),
			Upload: domain.Upload{FileName: "a.mp4", ContentType: "video/mp4", SizeBytes: 10, ExpiresAt: expires}}
		if err := e.movies.Create(t.Context(), c.Movie()); err != nil {
			t.Fatal(err)
		}
		return c.Movie()
	}
	late := mk("late1", now.Add(-time.Minute))
	fresh := mk("fresh1", now.Add(time.Hour))
	gone := mk("gone2", now.Add(-time.Minute))
	if _, err := e.movies.Delete(t.Context(), "gone2", domain.DeleteMovie{Now: now}); err != nil {
		t.Fatal(err)
	}
	n, err := e.ingest.ExpireUploads(t.Context(), []domain.Movie{late, fresh, gone}, now)
	if err != nil || n != 1 {
		t.Fatalf("expired %d, %v; want 1", n, err)
	}
	if m := e.get("late1"); m.Status != domain.StatusIngestFailed || m.IngestFailure != domain.ExpiredUploadSummary {
		t.Fatalf("late1: %s %q", m.Status, m.IngestFailure)
	}
	if m := e.get("fresh1"); m.Status != domain.StatusAwaitingUpload {
		t.Fatalf("fresh1: %s", m.Status)
	}
	// Again: nothing left to expire.
	if n, err := e.ingest.ExpireUploads(t.Context(), []domain.Movie{late}, now); err != nil || n != 0 {
		t.Fatalf("second sweep: %d, %v", n, err)
	}
}
