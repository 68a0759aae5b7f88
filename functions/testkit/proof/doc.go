// Package proof is the proof suite of the movie lease protocol: concurrent
// histories recorded against DynamoDB Local, checked for linearizability with
// porcupine against a sequential model built on the domain package, and
// checked again, independently of porcupine, against the protocol's stated
// invariants.
//
// # What is being proved, and why the model uses each command's own clock
//
// Every command carries Now, the clock of the client that issued it, and the
// store evaluates the command's condition against that Now inside one
// conditional UpdateItem on the movie row. Clients' clocks are skewed (each
// client of a history runs at real time plus a fixed offset), so a lease that
// one client sees as stale another still sees as live.
//
// Linearizability here is a statement about the order of commits, not about
// whose clock is right: there must be one total order of the operations,
// consistent with real time (an operation that returned before another was
// called comes first), in which every operation's observed outcome is what
// domain.Execute gives for that command, Now included, on the state left by
// the operations before it. The model therefore decides each step with the
// command's own Now, which is exactly what DynamoDB evaluates; it never looks
// at a wall clock. domain.Execute is a pure function of (movie, command), so
// clock skew does not make the model nondeterministic: skew changes which
// outcomes occur (a fast clock takes over a lease early), never whether an
// outcome is explicable. What skew can break is mutual exclusion in real time
// (a holder may still believe in a lease that the row has already handed to
// a client with a faster clock); what it cannot break is fencing, because
// the holder's next write is conditional on the row, which no longer carries
// its lease. The invariants below state that fencing explicitly.
//
// # The invariants (checked on every history, without porcupine)
//
// The store returns the row as written (ALL_NEW), so every accepted write
// names the version it produced. Sorting the accepted writes by version must
// give exactly the versions initial+1 .. final, each once; replaying them in
// that order through domain.Execute must accept every one and reproduce every
// returned row and the final row. That alone witnesses a serial order that
// explains every accepted write. On that order the suite then checks:
//
//   - never two live leases: a write that replaces or removes a lease that is
//     live at the write's Now is the holder's own release, its own trace
//     start (analysis to tracing), or its job's own terminal write;
//   - an edit lands only with the then-current live analysis lease ID;
//   - a release never removes a tracing lease or a newer lease;
//   - a job's progress and terminal state never land after its lease was
//     replaced or removed, and its fenced frame writes are never called after
//     the write that replaced its lease returned; a refused frame write never
//     lands in the frames table;
//   - each segment of a job is claimed at most once (ClaimSegment, as the
//     production worker claims), only after the job was started, and only
//     while the row carries the job's tracing lease;
//   - every read returns a committed row, no older than any write that
//     returned before the read was called.
//
// # Counting
//
// Each part of the proof suite appends "proof-count key=value ..." lines to
// the file named by PROOF_COUNTS (when set); cmd/proofsum adds them up into
// the one summary line `make proof` ends with.
package proof
