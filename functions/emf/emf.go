// Package emf writes CloudWatch embedded metric format (EMF) records: one
// JSON object per line on the function's log stream, which CloudWatch Logs
// turns into metrics without an API call (and without the PutMetricData
// permission). The business metrics of the trace workflow are named here,
// once, for the functions that emit them and the dashboard that shows them;
// Catalog (catalog.go) lists every series, and Emit writes no other.
package emf

import (
	"encoding/json"
	"errors"
	"io"
	"sort"
	"sync"
	"time"
)

// Namespace is the CloudWatch namespace of every business metric.
const Namespace = "MovieTracing"

// The business metrics. Counts unless said otherwise.
const (
	TracesStarted   = "TracesStarted"
	TracesCompleted = "TracesCompleted"
	TracesFailed    = "TracesFailed"
	TracesAbandoned = "TracesAbandoned"
	// ClaimRefusals has the dimension Reason (the refusal's domain code).
	ClaimRefusals  = "ClaimRefusals"
	LeaseConflicts = "LeaseConflicts"
	PoisonRecords  = "PoisonRecords"
	// FramesPerSecond is a job's frames traced per second of tracing.
	FramesPerSecond = "FramesTracedPerSecond"
)

// DimensionReason is ClaimRefusals' dimension.
const DimensionReason = "Reason"

// Unit is a CloudWatch unit.
type Unit string

const (
	Count          Unit = "Count"
	CountPerSecond Unit = "Count/Second"
	Milliseconds   Unit = "Milliseconds"
)

// Metric is one value.
type Metric struct {
	Name  string
	Value float64
	Unit  Unit
}

// Writer writes EMF records to an io.Writer (os.Stdout in Lambda), one
// line each, safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	out io.Writer
	now func() time.Time
}

// New returns a Writer on out with the clock now (time.Now if nil).
func New(out io.Writer, now func() time.Time) *Writer {
	if now == nil {
		now = time.Now
	}
	return &Writer{out: out, now: now}
}

type directive struct {
	Namespace  string       `json:"Namespace"`
	Dimensions [][]string   `json:"Dimensions"`
	Metrics    []definition `json:"Metrics"`
}

type definition struct {
	Name string `json:"Name"`
	Unit Unit   `json:"Unit,omitempty"`
}

// Emit writes one record of metrics with dimensions (may be empty): the
// dimension values and metric values are top-level members, as EMF wants.
func (w *Writer) Emit(dimensions map[string]string, metrics ...Metric) error {
	if len(metrics) == 0 {
		return errors.New("emf: no metrics")
	}
	rec := map[string]any{}
	keys := make([]string, 0, len(dimensions))
	for k, v := range dimensions {
		keys = append(keys, k)
		rec[k] = v
	}
	sort.Strings(keys)
	defs := make([]definition, 0, len(metrics))
	for _, m := range metrics {
		if m.Name == "" || m.Name == "_aws" || dimensions[m.Name] != "" {
			return errors.New("emf: bad metric name " + m.Name)
		}
		if s, ok := Declared(m.Name, dimensions); !ok {
			return errors.New("emf: " + KeyOf(m.Name, dimensions) + " is not in the catalogue")
		} else if s.Unit != m.Unit {
			return errors.New("emf: " + s.Key() + " is in " + string(s.Unit) + ", not " + string(m.Unit))
		}
		defs = append(defs, definition{Name: m.Name, Unit: m.Unit})
		rec[m.Name] = m.Value
	}
	rec["_aws"] = map[string]any{
		"Timestamp": w.now().UnixMilli(),
		"CloudWatchMetrics": []directive{{
			Namespace: Namespace, Dimensions: [][]string{keys}, Metrics: defs,
		}},
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.out.Write(append(b, '\n'))
	return err
}

// Count emits one count metric without dimensions.
func (w *Writer) Count(name string, n int) error {
	return w.Emit(nil, Metric{Name: name, Value: float64(n), Unit: Count})
}
