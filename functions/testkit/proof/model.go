package proof

import (
	"fmt"
	"hash/fnv"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/schema"
)

// Kind says what an operation of a history did.
type Kind int

const (
	// KindCommand is one domain.Command committed by MovieStore.Commit.
	KindCommand Kind = iota
	// KindRead is a strongly consistent read of the movie row.
	KindRead
	// KindFrame is a worker's fenced frame write (a ConditionCheck on the
	// movie row plus a Put in the frames table, in one transaction). It
	// reads the row and never changes it.
	KindFrame
	// KindCreate is a movie's creation (domain.CreateMovie, a conditional
	// put of a row that does not exist; lifecycle.go).
	KindCreate
	// KindPurge removes a deleting movie's row (a conditional delete under
	// domain.PurgeMovie, as the sweeper's purge makes it).
	KindPurge
)

// Call is the input of an operation.
type Call struct {
	Kind  Kind
	Cmd   domain.Command  // KindCommand
	Fence domain.JobFence // KindFrame
	Frame int             // KindFrame: the frame index
	Token string          // KindFrame: unique per write, stored with the frame
	// Create is the creation of a KindCreate.
	Create *domain.CreateMovie
}

// Outcome is what a client observed.
type Outcome struct {
	// Movie is the row as written (an accepted command, from ALL_NEW) or as
	// read (a read).
	Movie *domain.Movie
	// Refusal is the domain's refusal, rebuilt by the store from the item the
	// condition was evaluated on. Nil with Movie nil and Unknown false means
	// an accepted frame write.
	Refusal *domain.Error
	// Unknown is a request that failed in transport: it may or may not have
	// taken effect. The harness disables SDK retries, so a retried write can
	// never be mistaken for a refused one.
	Unknown bool
	// Err is the error text of an unknown outcome or of a bug (a store
	// error that is neither a refusal nor a transport failure).
	Err string
}

// Accepted reports whether the operation took effect as observed.
func (o Outcome) Accepted() bool { return !o.Unknown && o.Refusal == nil && o.Err == "" }

// Op is one operation of a history: who, what, when (nanoseconds since the
// history started, on the monotonic clock: real time, never a skewed one)
// and what was observed.
type Op struct {
	ID     int
	Client int
	Call   Call
	Out    Outcome
	Start  int64
	End    int64 // when the response arrived; Operations leaves an unknown outcome open-ended
}

// Model is the sequential specification of one movie row for porcupine:
// the state is the movie (a domain.Movie value, never mutated), and a step
// is accepted iff domain.Execute, deciding with the command's own Now,
// explains the observed outcome. See the package comment for why the
// command's Now, and not any wall clock, is the right one.
//
// The model is nondeterministic only for unknown outcomes (the write may or
// may not have happened); it is written as a porcupine.NondeterministicModel
// and converted, which costs nothing when every outcome is known. There is
// no Partition: a history is one movie row, which is one partition.
func Model(initial domain.Movie, base time.Time) porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{initial} },
		Step: func(state, input, output any) []any {
			return step(state.(domain.Movie), input.(Call), output.(Outcome))
		},
		Equal: func(a, b any) bool { return SameMovie(a.(domain.Movie), b.(domain.Movie)) },
		Hash: func(s any) uint64 {
			m := s.(domain.Movie)
			h := fnv.New64a()
			fmt.Fprint(h, m.Version, m.Status)
			if m.Lease != nil {
				fmt.Fprint(h, m.Lease.ID, m.Lease.ExpiresAt.UnixMilli())
			}
			return h.Sum64()
		},
		DescribeOperation: func(input, output any) string {
			return DescribeCall(input.(Call), base) + " → " + describeOutcome(output.(Outcome))
		},
		DescribeState: func(s any) string { return DescribeMovie(s.(domain.Movie), base) },
	}
	return nm.ToModel()
}

// step returns every state the row can be in after the operation, given
// what was observed; none means the observation is impossible from state.
func step(state domain.Movie, in Call, out Outcome) []any {
	if out.Err != "" && !out.Unknown {
		return nil // a store bug (e.g. dynamo.ErrDisagreement) explains nothing
	}
	switch in.Kind {
	case KindRead:
		if out.Unknown {
			return []any{state}
		}
		if Absent(state) {
			if out.Refusal != nil && out.Refusal.Code == domain.CodeNotFound {
				return []any{state}
			}
			return nil
		}
		if out.Movie != nil && SameMovie(*out.Movie, state) {
			return []any{state}
		}
		return nil

	case KindFrame:
		if out.Unknown {
			return []any{state} // a frame write never changes the row
		}
		err := domain.Decide(in.Fence, row(state))
		if (err == nil) != out.Accepted() || (err != nil && !SameRefusal(err, out.Refusal)) {
			return nil
		}
		return []any{state}

	case KindCreate:
		return stepCreate(state, *in.Create, out)

	case KindPurge:
		return stepPurge(state, out)

	default:
		next, err := domain.Execute(row(state), in.Cmd)
		if out.Unknown {
			if err != nil {
				return []any{state}
			}
			return []any{state, next}
		}
		if err != nil {
			if out.Movie == nil && SameRefusal(err, out.Refusal) {
				return []any{state}
			}
			return nil
		}
		if out.Movie != nil && SameMovie(*out.Movie, next) {
			return []any{next}
		}
		return nil
	}
}

// SameMovie compares two movies in their stored form (schema.MovieItem):
// times at millisecond precision, markers as lists, no pointer identity.
func SameMovie(a, b domain.Movie) bool {
	return reflect.DeepEqual(schema.NewMovieItem(a), schema.NewMovieItem(b))
}

// SameRefusal reports whether err is the refusal got: same code, field,
// message and holder.
func SameRefusal(err error, got *domain.Error) bool {
	want, ok := domain.AsError(err)
	if !ok || got == nil {
		return false
	}
	if want.Code != got.Code || want.Field != got.Field || want.Message != got.Message {
		return false
	}
	if (want.Holder == nil) != (got.Holder == nil) {
		return false
	}
	if want.Holder == nil {
		return true
	}
	w, g := *want.Holder, *got.Holder
	return w.Kind == g.Kind && w.UserID == g.UserID && w.UserName == g.UserName && w.StartedAt.Equal(g.StartedAt)
}

func short(id string) string {
	if len(id) > 6 {
		return id[:6]
	}
	if id == "" {
		return `""`
	}
	return id
}

func rel(t, base time.Time) string {
	return fmt.Sprintf("%+.3fs", t.Sub(base).Seconds())
}

// DescribeCall renders an operation's input for reports; times are seconds
// since the history's base time.
func DescribeCall(c Call, base time.Time) string {
	switch c.Kind {
	case KindRead:
		return "Get"
	case KindCreate:
		return fmt.Sprintf("CreateMovie(%q, expires %s, now %s)", c.Create.Title, rel(c.Create.Upload.ExpiresAt, base), rel(c.Create.Now, base))
	case KindPurge:
		return "PurgeMovie"
	case KindFrame:
		return fmt.Sprintf("WriteFrame(job %s, frame %d, now %s)", short(c.Fence.JobID), c.Frame, rel(c.Fence.Now, base))
	}
	switch x := c.Cmd.(type) {
	case domain.OpenAnalysis:
		return fmt.Sprintf("OpenAnalysis(%s, %s, now %s, for %s)", short(x.LeaseID), x.User.ID, rel(x.Now, base), x.Duration)
	case domain.Heartbeat:
		return fmt.Sprintf("Heartbeat(%s, now %s)", short(x.LeaseID), rel(x.Now, base))
	case domain.Release:
		return fmt.Sprintf("Release(%s, now %s)", short(x.LeaseID), rel(x.Now, base))
	case domain.EditMarkers:
		return fmt.Sprintf("EditMarkers(%s, %d markers, now %s)", short(x.LeaseID), len(x.Markers), rel(x.Now, base))
	case domain.EditTrim:
		return fmt.Sprintf("EditTrim(%s, [%d,%d), now %s)", short(x.LeaseID), x.Trim.Start, x.Trim.End, rel(x.Now, base))
	case domain.EditCaptureInterval:
		return fmt.Sprintf("EditCaptureInterval(%s, %d, now %s)", short(x.LeaseID), x.Interval, rel(x.Now, base))
	case domain.StartTrace:
		return fmt.Sprintf("StartTrace(%s, job %s, from %d, now %s)", short(x.LeaseID), short(x.JobID), x.FromFrame, rel(x.Now, base))
	case domain.ClaimSegment:
		return fmt.Sprintf("ClaimSegment(%s, segment %d, now %s)", short(x.JobID), x.Segment, rel(x.Now, base))
	case domain.HandOffJob:
		return fmt.Sprintf("HandOffJob(%s, segment %d, written %d, clean %d, now %s)", short(x.JobID), x.Segment, x.FramesWritten, x.CleanBefore, rel(x.Now, base))
	case domain.FinalizeStaleTrace:
		return fmt.Sprintf("FinalizeStaleTrace(%s, written %d, now %s)", short(x.Job.ID), x.FramesWritten, rel(x.Now, base))
	case domain.BeginTrace:
		return fmt.Sprintf("BeginTrace(%s, clean %d, total %d, now %s)", short(x.JobID), x.CleanBefore, x.TotalFrames, rel(x.Now, base))
	case domain.RenewJob:
		return fmt.Sprintf("RenewJob(%s, written %d, now %s)", short(x.JobID), x.FramesWritten, rel(x.Now, base))
	case domain.CompleteJob:
		return fmt.Sprintf("CompleteJob(%s, frames %d, now %s)", short(x.Job.ID), x.FramesWritten, rel(x.Now, base))
	case domain.FailJob:
		return fmt.Sprintf("FailJob(%s, frames %d, now %s)", short(x.Job.ID), x.FramesWritten, rel(x.Now, base))
	}
	if s, ok := describeLifecycle(c.Cmd, base); ok {
		return s
	}
	return fmt.Sprintf("%T", c.Cmd)
}

func describeOutcome(o Outcome) string {
	switch {
	case o.Unknown:
		return "unknown (" + o.Err + ")"
	case o.Err != "":
		return "ERROR " + o.Err
	case o.Refusal != nil:
		return string(o.Refusal.Code)
	case o.Movie != nil:
		return fmt.Sprintf("ok v%d", o.Movie.Version)
	}
	return "ok"
}

// DescribeMovie renders the parts of a movie the protocol is about.
func DescribeMovie(m domain.Movie, base time.Time) string {
	if Absent(m) {
		return "no row"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "v%d %s", m.Version, m.Status)
	if l := m.Lease; l != nil {
		fmt.Fprintf(&b, " lease{%s %s %s exp %s", l.Kind, short(l.ID), l.UserID, rel(l.ExpiresAt, base))
		if l.Claimed {
			b.WriteString(" claimed")
		}
		b.WriteString("}")
	}
	s := m.Settings
	fmt.Fprintf(&b, " markers=%d trim=[%d,%d) every=%d clean<%d progress=%d/%d",
		len(s.Markers), s.Trim.Start, s.Trim.End, s.CaptureInterval, m.CleanBefore, m.Progress.FramesWritten, m.Progress.TotalFrames)
	if j := m.LastJob; j != nil {
		fmt.Fprintf(&b, " last{%s %s}", short(j.JobID), j.Status)
	}
	return b.String()
}

// Operations converts a history to porcupine's form.
func Operations(ops []Op) []porcupine.Operation {
	out := make([]porcupine.Operation, len(ops))
	for i, op := range ops {
		ret := op.End
		if op.Out.Unknown {
			ret = math.MaxInt64
		}
		out[i] = porcupine.Operation{ClientId: op.Client, Input: op.Call, Call: op.Start, Output: op.Out, Return: ret}
	}
	return out
}
