package logging_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/movietrace/tracinglocks/functions/internal/logging"
)

// presignedGet is a real presigned GET URL, signed by the SDK with a
// session token (as in Lambda); no request is made.
func presignedGet(t *testing.T) string {
	t.Helper()
	cfg := aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIAEXAMPLEKEY", "secret", "SESSIONTOKENsecretvalue")}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint = aws.String("https://movies.example.test"); o.UsePathStyle = true })
	req, err := s3.NewPresignClient(client).PresignGetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("movies"), Key: aws.String("uploads/mv-1/source")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(req.URL, "X-Amz-Signature=") || !strings.Contains(req.URL, "X-Amz-Security-Token=") {
		t.Fatalf("not a presigned URL: %s", req.URL)
	}
	return req.URL
}

// Issue 20 item 8: ffprobe's stderr and the SDK's errors quote the
// presigned URL they were given; no log line may carry its query.
func TestLogsNeverCarryAPresignedQuery(t *testing.T) {
	url := presignedGet(t)
	query := url[strings.IndexByte(url, '?')+1:]
	var buf bytes.Buffer
	log := logging.New(&buf, slog.LevelDebug)
	stderr := "[https @ 0x5581] HTTP error 403 Forbidden\n" + url + ": Server returned 403 Forbidden (access denied)"
	log.Warn("ffprobe failed on "+url, slog.String("stderr", stderr),
		slog.Any("error", errors.New(`operation error S3: GetObject, Get "`+url+`": EOF`)),
		slog.Group("probe", slog.String("input", url)),
		slog.String("excerpt", "X-Amz-Signature="+query[len(query)-64:]))
	line := buf.String()
	for _, secret := range []string{"X-Amz-Credential=", "X-Amz-Signature=" + query[len(query)-64:], "SESSIONTOKEN", "AKIAEXAMPLEKEY", query} {
		if strings.Contains(line, secret) {
			t.Errorf("logged %q: %s", secret, line)
		}
	}
	if n := strings.Count(line, "https://movies.example.test/movies/uploads/mv-1/source"+logging.QueryRedacted); n != 4 {
		t.Errorf("the URL without its query appears %d times, want 4: %s", n, line)
	}
}

func TestRedactURLsLeavesOtherTextAlone(t *testing.T) {
	for in, want := range map[string]string{
		"no url here":                            "no url here",
		"see http://h/p for more":                "see http://h/p for more",
		"GET http://h/p?a=1&b=2 failed":          "GET http://h/p" + logging.QueryRedacted + " failed",
		`Post "http://127.0.0.1:8000/?x=y": EOF`: `Post "http://127.0.0.1:8000/` + logging.QueryRedacted + `": EOF`,
		"HTTPS://H/P?Q#frag":                     "HTTPS://H/P" + logging.QueryRedacted + "#frag",
	} {
		if got := logging.RedactURLs(in); got != want {
			t.Errorf("RedactURLs(%q) = %q, want %q", in, got, want)
		}
	}
}
