// Package token mints lease and job IDs: 128 random bits as 32 lowercase hex
// digits (domain.ValidLeaseID). They are capabilities, so they come from
// crypto/rand and are never logged.
package token

import (
	"crypto/rand"
	"encoding/hex"
)

// New returns a fresh 128-bit random ID.
func New() string {
	var b [16]byte
	// crypto/rand.Read never returns an error on supported platforms (Go 1.24+).
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
