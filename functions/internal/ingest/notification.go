package ingest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
)

// ParseNotification decodes one SQS body as an S3 event notification and
// returns the movie IDs of its object-created records under uploads/. A
// test event (sent when the notification is configured) has none.
func ParseNotification(body string) ([]string, error) {
	var cont continuation
	if err := json.Unmarshal([]byte(body), &cont); err == nil && cont.Ingest != nil {
		if !domain.ValidMovieID(cont.Ingest.MovieID) {
			return nil, fmt.Errorf("a continuation of movie %.70q", cont.Ingest.MovieID)
		}
		return []string{cont.Ingest.MovieID}, nil
	}
	var s3ev events.S3Event
	if err := json.Unmarshal([]byte(body), &s3ev); err != nil {
		return nil, fmt.Errorf("not an S3 event notification: %w", err)
	}
	var ids []string
	for _, r := range s3ev.Records {
		if r.EventSource != "aws:s3" || !strings.HasPrefix(r.EventName, "ObjectCreated:") {
			continue
		}
		key, err := url.QueryUnescape(r.S3.Object.Key) // S3 form-encodes keys in events
		if err != nil {
			continue
		}
		if id := s3store.MovieIDOfUpload(key); domain.ValidMovieID(id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// continuation is the body of an ingest's next range.
type continuation struct {
	Ingest *struct {
		MovieID string `json:"movieId"`
	} `json:"ingestContinuation"`
}

// ContinuationBody is the upload queue message that continues a movie's
// ingest with its next range (where it starts is read from the row).
func ContinuationBody(movieID string) string {
	b, _ := json.Marshal(map[string]any{"ingestContinuation": map[string]string{"movieId": movieID}})
	return string(b)
}
