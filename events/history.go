package events

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"time"
)

// HistoryPosition is where a page of a movie's history (its audit items,
// newest first) ends: an item's time and a digest of its key. It names no
// job: a history shows no job IDs (they are public, but add nothing there),
// so its cursor does not either.
type HistoryPosition struct {
	OccurredAt string // TimeLayout
	KeyDigest  string // 16 hex digits: the first 8 bytes of SHA-256 of the item's eventKey
}

// NewHistoryPosition is the place in its movie's history of the audit item
// with that time (TimeLayout) and key (Event.AuditKey).
func NewHistoryPosition(occurredAt, eventKey string) HistoryPosition {
	sum := sha256.Sum256([]byte(eventKey))
	return HistoryPosition{OccurredAt: occurredAt, KeyDigest: hex.EncodeToString(sum[:8])}
}

// IndexKey is the position as the audit table's HistoryIndex sort key,
// "<occurredAt>#<digest>": fixed width, so lexical order is time order, then
// digest order for items of the same instant (newest first is descending).
func (p HistoryPosition) IndexKey() string { return p.OccurredAt + "#" + p.KeyDigest }

// ParseIndexKey decodes an IndexKey (a HistoryIndex LastEvaluatedKey's sort
// key).
func ParseIndexKey(s string) (HistoryPosition, error) { return parsePosition(s, "#") }

// MaxCursorLength bounds an encoded cursor.
const MaxCursorLength = 64

var digestPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

// Cursor encodes the position as an opaque URL-safe string.
func (p HistoryPosition) Cursor() string {
	return base64.RawURLEncoding.EncodeToString([]byte(p.OccurredAt + "~" + p.KeyDigest))
}

// ErrBadCursor: the string is not a cursor this server made.
var ErrBadCursor = errors.New("not a history cursor")

// ParseCursor decodes a Cursor string.
func ParseCursor(s string) (HistoryPosition, error) {
	if s == "" || len(s) > MaxCursorLength {
		return HistoryPosition{}, ErrBadCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return HistoryPosition{}, ErrBadCursor
	}
	return parsePosition(string(raw), "~")
}

func parsePosition(s, sep string) (HistoryPosition, error) {
	at, digest, ok := strings.Cut(s, sep)
	if !ok || !digestPattern.MatchString(digest) {
		return HistoryPosition{}, ErrBadCursor
	}
	if t, err := time.Parse(TimeLayout, at); err != nil || FormatTime(t) != at {
		return HistoryPosition{}, ErrBadCursor
	}
	return HistoryPosition{OccurredAt: at, KeyDigest: digest}, nil
}
