// Package domain is the pure state machine of a movie and its lease.
//
// A movie row is the single durable source of truth. It carries at most one
// live lease: an analysis lease (one browser editing in Analyze) or a tracing
// lease (one trace job). Every change is a Command: Validate checks the input
// alone, Decide checks the precondition against the current movie, and Apply
// returns the next movie. Storage adapters commit a command as one conditional
// write whose condition is exactly Decide; a differential test holds them
// together.
//
// The package imports only the standard library, never reads the clock (every
// command carries Now) and does no I/O.
package domain
