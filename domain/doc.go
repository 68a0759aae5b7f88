// Package domain is the pure state machine of a movie and its lease.
//
// A movie row is the single durable source of truth. It carries at most one
// live lease: an analysis lease (one browser editing in Analyze) or a tracing
// lease (one trace job). Every change is a Command: Validate checks the input
// alone; Precondition states the rule the stored movie must satisfy and Update
// the change, both as values (rule.go: a small closed condition language and a
// list of field assignments). The domain evaluates those values itself
// (Decide, Apply, Execute); a storage adapter translates them, node by node,
// into one conditional write, so every rule is written once, here. A command
// may also state AlreadyApplied, the condition showing on a row that it already took
// effect; refused on such a row it is a success that writes nothing
// (Replayed), which makes every write safe to retry after a lost answer.
//
// The package imports only the standard library, never reads the clock (every
// command carries Now) and does no I/O.
package domain
