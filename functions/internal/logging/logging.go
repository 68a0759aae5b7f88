// Package logging builds the JSON slog logger every function uses. Lambda
// captures stdout into CloudWatch Logs, where each line is one JSON record.
//
// The logger applies the project's ID policy (README, "Words") to every
// record: a job ID is public and is logged as the jobId attribute; every
// other string, in any attribute or group (error texts, panics, message
// excerpts, the message itself), is passed through events.RedactIDs, so an
// analysis lease ID quoted by an error about a stored row cannot reach a
// log line. A few attributes name identifiers that are no capability and
// that an operator needs whole (see PublicAttrs).
//
// Every string also goes through RedactURLs: a URL's query string is
// replaced, since a presigned URL's query (X-Amz-Credential,
// X-Amz-Signature, in AWS a session token) is a capability for as long as it
// is valid, and tools quote the URLs they were given (ffprobe's stderr, the
// SDK's "Post \"...\"" errors).
package logging

import (
	"io"
	"log/slog"
	"regexp"
	"strings"

	"github.com/movietrace/tracinglocks/events"
)

// PublicAttrs are the attribute keys whose string values are logged as
// they are: job IDs (public), movie IDs, SQS message IDs and the stream's
// sequence numbers and event IDs (DynamoDB's, 32 hex digits), none of which
// authorises anything.
var PublicAttrs = map[string]bool{
	"jobId": true, "movieId": true, "messageId": true, "sequenceNumber": true, "eventID": true,
}

// New returns a JSON logger at level writing to w, redacting as the package
// comment says.
func New(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: Redact}))
}

// Redact is the logger's slog.HandlerOptions.ReplaceAttr: string values and
// errors of any attribute not in PublicAttrs go through events.RedactIDs.
// Other kinds (numbers, times, raw JSON such as schema.RedactRecord's
// output) are left as they are.
func Redact(_ []string, a slog.Attr) slog.Attr {
	if PublicAttrs[a.Key] {
		return a
	}
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); redact(s) != s {
			a.Value = slog.StringValue(redact(s))
		}
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			a.Value = slog.StringValue(redact(err.Error()))
		}
	}
	return a
}

func redact(s string) string { return events.RedactIDs(RedactURLs(s)) }

// QueryRedacted replaces a redacted URL query.
const QueryRedacted = "?(query redacted)"

var (
	urlQuery = regexp.MustCompile(`(?i)(\bhttps?://[^\s"'<>?#]*)\?[^\s"'<>#]*`)
	// amzParam catches a signing parameter quoted without its URL.
	amzParam = regexp.MustCompile(`(?i)\bX-Amz-(Credential|Signature|Security-Token|SignedHeaders)=[^\s"'<>&#]*`)
)

// RedactURLs replaces the query string of every http(s) URL in s with
// QueryRedacted, and the value of any X-Amz- signing parameter quoted
// without its URL. Scheme, host and path stay (they name the object, which
// authorises nothing).
func RedactURLs(s string) string {
	if l := strings.ToLower(s); !strings.Contains(l, "http") && !strings.Contains(l, "x-amz-") {
		return s
	}
	s = urlQuery.ReplaceAllString(s, "${1}"+QueryRedacted)
	return amzParam.ReplaceAllString(s, "X-Amz-$1=(redacted)")
}
