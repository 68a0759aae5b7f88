package proof

import (
	"fmt"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// The movie lifecycle in the histories (issue 21): in a history with
// Config.Lifecycle the row does not exist when the clients start. An owner
// client creates it (CreateMovie, sometimes sent twice as a retry whose
// answer was lost, sometimes a second, different creation under the same
// ID), its upload arrives late or never, the ingest records its ranges
// (PrepareFrames, redelivered at times) and completes (CompleteIngest) or
// fails (FailIngest); meanwhile idle workers run the sweeper's rules
// (ExpireUpload of an overdue upload, FinalizeStaleTrace, and PurgeMovie of
// a deleting row), browsers open and edit what they can, and near the end
// the owner deletes the movie (DeleteMovie, retried while a live lease
// refuses it). The model explains every outcome with domain.Execute on the
// row or on its absence (Absent): before its creation and after its purge,
// every command and read is refused with not_found.

// Absent reports whether the model's state is a row that does not exist:
// the zero movie (a stored movie has version 1 or more).
func Absent(m domain.Movie) bool { return m.Version == 0 }

// row is the state as the domain takes it: nil when there is no row.
func row(m domain.Movie) *domain.Movie {
	if Absent(m) {
		return nil
	}
	return &m
}

// stepCreate: a creation puts its row where there is none; where there is
// one, it is this very creation's (Replays: the success it was) or a
// refusal (CodeExists). An unknown outcome may have created the row.
func stepCreate(state domain.Movie, c domain.CreateMovie, out Outcome) []any {
	switch {
	case out.Unknown && Absent(state):
		return []any{state, c.Movie()}
	case out.Unknown:
		return []any{state}
	case Absent(state) && out.Accepted():
		return []any{c.Movie()}
	case !Absent(state) && c.Replays(state) && out.Accepted():
		return []any{state}
	case !Absent(state) && !c.Replays(state) && out.Refusal != nil && out.Refusal.Code == domain.CodeExists:
		return []any{state}
	}
	return nil
}

// stepPurge: the row goes only under domain.PurgeMovie (it is deleting),
// and the purge returns the row it removed.
func stepPurge(state domain.Movie, out Outcome) []any {
	err := domain.Decide(domain.PurgeMovie{}, row(state))
	switch {
	case out.Unknown && err == nil:
		return []any{state, domain.Movie{}}
	case out.Unknown:
		return []any{state}
	case err != nil:
		if out.Movie == nil && SameRefusal(err, out.Refusal) {
			return []any{state}
		}
		return nil
	case out.Accepted() && out.Movie != nil && SameMovie(*out.Movie, state):
		return []any{domain.Movie{}}
	}
	return nil
}

func describeLifecycle(cmd domain.Command, base time.Time) (string, bool) {
	switch x := cmd.(type) {
	case domain.PrepareFrames:
		return fmt.Sprintf("PrepareFrames([%d,%d) of %d, now %s)", x.From, x.To, x.Total, rel(x.Now, base)), true
	case domain.CompleteIngest:
		return fmt.Sprintf("CompleteIngest(%d frames, now %s)", x.FrameCount, rel(x.Now, base)), true
	case domain.FailIngest:
		return fmt.Sprintf("FailIngest(now %s)", rel(x.Now, base)), true
	case domain.ExpireUpload:
		return fmt.Sprintf("ExpireUpload(now %s)", rel(x.Now, base)), true
	case domain.DeleteMovie:
		return fmt.Sprintf("DeleteMovie(now %s)", rel(x.Now, base)), true
	}
	return "", false
}

// own is the movie's owner: it creates the movie, uploads its file (late,
// at times too late), lets the ingest record its ranges and end, and near
// the end of the history deletes the movie (or not, in one history of
// three). Each step is what the API, the ingest and the sweeper send.
func (c *client) own() {
	h := c.h
	lease := h.cfg.Lease
	now := c.now()
	expiry := time.Duration(float64(lease) * (0.5 + 2*c.rng.Float64())).Truncate(time.Millisecond)
	create := domain.CreateMovie{
		ID: h.movieID, Title: "Proof " + h.movieID, MaxBytes: 1 << 30, Now: now,
		Upload: domain.Upload{FileName: "clip.mp4", ContentType: "video/mp4", SizeBytes: 1 << 20, ExpiresAt: now.Add(expiry)},
	}
	out := c.do(Call{Kind: KindCreate, Create: &create})
	if c.chance(0.2) || out.Unknown {
		again := create // the retry of a request whose answer was lost: the same creation
		c.do(Call{Kind: KindCreate, Create: &again})
	}
	if c.chance(0.1) {
		other := create // another file under the same ID: refused
		other.Upload.FileName, other.Now = "other.mp4", c.now()
		other.Upload.ExpiresAt = other.Now.Add(expiry)
		c.do(Call{Kind: KindCreate, Create: &other})
	}
	// The file arrives after a while: before its expiry, mostly.
	c.sleep(time.Duration(float64(expiry) * 1.4 * c.rng.Float64()))
	if c.ingest() && c.chance(0.33) {
		return // the movie stays: the rest of the history traces it
	}
	for deleteAt := h.start.Add(h.cfg.Length * 7 / 10); c.running() && time.Now().Before(deleteAt); {
		c.sleep(time.Until(deleteAt))
	}
	for tries := 0; c.running() && tries < 40; tries++ {
		o := c.command(domain.DeleteMovie{Now: c.now()})
		if o.Accepted() || o.Unknown {
			if c.chance(0.2) {
				c.command(domain.DeleteMovie{Now: c.now()}) // a second delete: the success it asked for
			}
			return // the sweepers purge it
		}
		if o.Refusal != nil && o.Refusal.Code == domain.CodeNotFound {
			return
		}
		c.sleep(time.Duration(float64(lease) * (0.2 + 0.5*c.rng.Float64()))) // a live lease refused it
	}
}

// ingest records the ingest as ingest.Handler does: the first range of
// no frames (the file arrived), then two ranges, each delivery sometimes
// twice, then the movie ready (or, at times, failed). It reports whether
// the movie got ready.
func (c *client) ingest() bool {
	split := 1 + c.rng.IntN(FrameCount-1)
	for _, r := range [][2]int{{0, 0}, {0, split}, {split, FrameCount}} {
		cmd := domain.PrepareFrames{From: r[0], To: r[1], Total: FrameCount, Now: c.now()}
		o := c.command(cmd)
		if c.chance(0.15) {
			cmd.Now = c.now()
			c.command(cmd) // a redelivered range: applied already
		}
		if !o.Accepted() && !o.Unknown {
			return false // expired (the sweeper won) or deleted
		}
		c.pause()
	}
	if c.chance(0.1) {
		c.command(domain.FailIngest{Summary: "ffprobe: moov atom not found at /tmp/in.mp4", Now: c.now()})
		return false
	}
	o := c.command(domain.CompleteIngest{FrameCount: FrameCount, FrameRate: 25, Now: c.now(),
		Video: domain.Video{Width: 64, Height: 48, Codec: "h264", DurationSeconds: float64(FrameCount) / 25, ChunkFrames: 60, SourceWidth: 64, SourceHeight: 48}})
	return o.Accepted() || o.Unknown
}

// sweepLifecycle is the rest of the sweeper's rules on the row as read: an
// overdue upload expires (ingest.Handler.ExpireUploads asks the same
// precondition), and a deleting row is purged once its files are gone
// (purge: the harness stores no files; its frames stay, for the checks).
func (c *client) sweepLifecycle(m domain.Movie) {
	now := c.now()
	switch {
	case domain.Decide(domain.ExpireUpload{Now: now}, &m) == nil:
		c.command(domain.ExpireUpload{Now: now})
	case domain.Decide(domain.PurgeMovie{}, &m) == nil:
		c.do(Call{Kind: KindPurge})
	}
}
