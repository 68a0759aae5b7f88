package emf

import (
	"slices"
	"sort"
	"strings"
)

// Emitter names the function that writes a series.
type Emitter string

// The emitters.
const (
	API             Emitter = "api"
	Worker          Emitter = "worker"
	StreamProcessor Emitter = "streamprocessor"
)

// Dimension is one dimension of a series.
type Dimension struct{ Name, Value string }

// Series is one CloudWatch metric: a name and its exact dimension set (a
// metric's identity in CloudWatch). Every series a function may write is in
// Catalog, and Emit refuses any other, so dimension values are a closed,
// low-cardinality set by construction: no ID of any kind can become one.
// The dashboard and the metric alarms draw only series from Catalog.
type Series struct {
	Name       string
	Dimensions []Dimension // sorted by Name
	Unit       Unit
	Emitter    Emitter
}

// Key is the series' identity: "Name" or "Name{Dim=Value,...}".
func (s Series) Key() string { return key(s.Name, s.Dimensions) }

// DimensionsMap is the series' dimensions as a map (nil when it has none).
func (s Series) DimensionsMap() map[string]string {
	if len(s.Dimensions) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, d := range s.Dimensions {
		m[d.Name] = d.Value
	}
	return m
}

func key(name string, dims []Dimension) string {
	if len(dims) == 0 {
		return name
	}
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = d.Name + "=" + d.Value
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// KeyOf is the key of metric name with dims.
func KeyOf(name string, dims map[string]string) string {
	ds := make([]Dimension, 0, len(dims))
	for k, v := range dims {
		ds = append(ds, Dimension{k, v})
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].Name < ds[j].Name })
	return key(name, ds)
}

// The metric names not declared in emf.go, and the dimensions.
const (
	// TracesCancelled: a user cancelled a running trace (stream processor).
	TracesCancelled = "TracesCancelled"
	// WorkerSegments: a claimed segment of a trace job ended, by Outcome.
	WorkerSegments = "WorkerSegments"
	// ContinuationSegments: a claimed segment was a continuation (segment > 0).
	ContinuationSegments = "ContinuationSegments"
	// FramesTraced: the frames one claimed segment wrote.
	FramesTraced = "FramesTraced"

	// DimensionOutcome is WorkerSegments' dimension (worker.Result).
	DimensionOutcome = "Outcome"
	// DimensionFunction is LeaseConflicts' dimension: who met the conflict.
	DimensionFunction = "Function"
)

// ClaimRefusalReasons are ClaimRefusals' Reason values: the refusal codes
// of a claim, and Other for any other.
var ClaimRefusalReasons = []string{"already_claimed", "lease_lost", "not_found", Other}

// WorkerOutcomes are WorkerSegments' Outcome values: what became of a
// claimed segment (the worker's Result values after a claim).
var WorkerOutcomes = []string{"traced", "tracing_failed", "handed_off", "lease_lost", "abandoned"}

// Other is the Reason of a refusal code a catalogue does not list.
const Other = "other"

// LeaseConflict is one LeaseConflicts series' dimensions.
type LeaseConflict struct {
	Function Emitter
	Reason   string
}

// LeaseConflictKinds: the API answers 409 lease_held (another browser
// edits the movie) or lease_lost (the caller's lease was replaced); the
// worker's fenced write is refused (lease_lost: replaced, cancelled or
// finalised) or its own clock says its lease expired (renewals failed).
var LeaseConflictKinds = []LeaseConflict{
	{API, "lease_held"}, {API, "lease_lost"}, {Worker, "lease_lost"}, {Worker, "expired"},
}

// Catalog is every series the functions write, in a fixed order.
func Catalog() []Series {
	out := []Series{}
	plain := func(e Emitter, u Unit, names ...string) {
		for _, n := range names {
			out = append(out, Series{Name: n, Unit: u, Emitter: e})
		}
	}
	plain(StreamProcessor, Count, TracesStarted, TracesCompleted, TracesFailed, TracesCancelled, TracesAbandoned, PoisonRecords)
	for _, r := range ClaimRefusalReasons {
		out = append(out, Series{Name: ClaimRefusals, Dimensions: []Dimension{{DimensionReason, r}}, Unit: Count, Emitter: Worker})
	}
	for _, o := range WorkerOutcomes {
		out = append(out, Series{Name: WorkerSegments, Dimensions: []Dimension{{DimensionOutcome, o}}, Unit: Count, Emitter: Worker})
	}
	for _, c := range LeaseConflictKinds {
		out = append(out, Series{Name: LeaseConflicts, Unit: Count, Emitter: c.Function,
			Dimensions: []Dimension{{DimensionFunction, string(c.Function)}, {DimensionReason, c.Reason}}})
	}
	plain(Worker, Count, ContinuationSegments, FramesTraced)
	plain(Worker, CountPerSecond, FramesPerSecond)
	return out
}

var catalog = func() map[string]Series {
	m := map[string]Series{}
	for _, s := range Catalog() {
		m[s.Key()] = s
	}
	return m
}()

// Declared returns the series of name with dims, if Catalog has it.
func Declared(name string, dims map[string]string) (Series, bool) {
	s, ok := catalog[KeyOf(name, dims)]
	return s, ok
}

// Reason maps a refusal code to one of reasons, or Other.
func Reason(code string, reasons []string) string {
	if slices.Contains(reasons, code) {
		return code
	}
	return Other
}
