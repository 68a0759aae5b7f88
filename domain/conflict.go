package domain

import "errors"

// ErrConflict means a write collided with a concurrent write or transaction
// on the same row and was not applied: nothing was written, no precondition
// failed, and the same command may be retried. Storage adapters wrap their
// own conflict errors with it (errors.Is(err, ErrConflict)), so callers such
// as the worker retry without knowing the store.
var ErrConflict = errors.New("write conflict: nothing was written; retry")
