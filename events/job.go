package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/movietrace/tracinglocks/domain"
)

// TraceJob is the body of a trace-job SQS message. The stream processor
// sends one per movie.tracing.started event; the worker claims it.
type TraceJob struct {
	MovieID   string `json:"movieId"`
	JobID     string `json:"jobId"`
	FromFrame int    `json:"fromFrame"`
	// Version is the movie row's version that started the job: for ordering
	// and diagnostics; the job ID is the fencing token.
	Version int64 `json:"version"`
	// Segment is the job's segment this message asks a worker to claim: 0
	// (absent) for the stream processor's first message, k for the worker's
	// k-th continuation (domain.ClaimSegment, domain.HandOffJob).
	Segment int `json:"segment,omitempty"`
}

// MaxSegment bounds a job's segments: at the shortest invocation that still
// makes progress, far beyond any movie.
const MaxSegment = 1 << 20

// MaxTraceJobBody bounds a job body; a real one is about 120 bytes.
const MaxTraceJobBody = 4 << 10

// EncodeTraceJob returns the JSON body of a job message.
func EncodeTraceJob(j TraceJob) (string, error) {
	b, err := json.Marshal(j)
	return string(b), err
}

// DecodeTraceJob strictly decodes and validates a job body: unknown fields,
// trailing data, wrong types and malformed IDs are errors.
func DecodeTraceJob(body string) (TraceJob, error) {
	if len(body) > MaxTraceJobBody {
		return TraceJob{}, fmt.Errorf("trace job: body of %d bytes exceeds %d", len(body), MaxTraceJobBody)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	var j TraceJob
	if err := dec.Decode(&j); err != nil {
		return TraceJob{}, fmt.Errorf("trace job: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return TraceJob{}, fmt.Errorf("trace job: trailing data after the JSON object")
	}
	switch {
	case !domain.ValidMovieID(j.MovieID):
		return TraceJob{}, fmt.Errorf("trace job: malformed movieId")
	case !domain.ValidLeaseID(j.JobID):
		return TraceJob{}, fmt.Errorf("trace job: malformed jobId")
	case j.FromFrame < 0 || j.FromFrame >= domain.MaxFrameCount:
		return TraceJob{}, fmt.Errorf("trace job: fromFrame %d out of range", j.FromFrame)
	case j.Version < 1:
		return TraceJob{}, fmt.Errorf("trace job: version %d out of range", j.Version)
	case j.Segment < 0 || j.Segment > MaxSegment:
		return TraceJob{}, fmt.Errorf("trace job: segment %d out of range", j.Segment)
	}
	return j, nil
}
