package domain_test

import (
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/movietrace/tracinglocks/domain"
)

// Generators for property tests of the domain. They are exported (inside
// the test package) so that they can move to a shared test package when
// another package's tests need them.

// GenLeaseID draws a well-formed lease or job ID: 32 lowercase hex digits.
func GenLeaseID() *rapid.Generator[string] {
	return rapid.StringMatching(`[0-9a-f]{32}`)
}

// GenBadLeaseID draws a non-empty ID that Validate must refuse as
// CodeInvalid: wrong length, wrong case, wrong alphabet, padding.
func GenBadLeaseID() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom([]string{
			strings.ToUpper(job1), job1[1:], job1 + "0", " " + job1[1:], job1[1:] + "\n",
			"01234567-89ab-cdef-0123-456789abcdef", "null", "*",
		}),
		rapid.StringMatching(`[0-9a-fA-Fg-z]{1,40}`).Filter(func(s string) bool { return !domain.ValidLeaseID(s) }),
	)
}

// GenUser draws a valid user.
func GenUser() *rapid.Generator[domain.User] {
	return rapid.Custom(func(t *rapid.T) domain.User {
		return domain.User{
			ID:   rapid.StringMatching(`u-[a-z0-9]{1,12}`).Draw(t, "userID"),
			Name: rapid.StringMatching(`[A-Z][a-z]{0,10}( [A-Z][a-z]{0,10})?`).Draw(t, "userName"),
		}
	})
}

// GenMarkers draws a valid marker list (unique IDs, coordinates in [0, 1])
// of minLen to maxLen markers (maxLen <= 1000).
func GenMarkers(minLen, maxLen int) *rapid.Generator[[]domain.Marker] {
	marker := rapid.Custom(func(t *rapid.T) domain.Marker {
		return domain.Marker{
			ID:    rapid.StringMatching(`m[0-9]{1,3}`).Draw(t, "markerID"),
			Label: rapid.StringMatching(`[a-z ]{0,12}`).Draw(t, "label"),
			X:     rapid.Float64Range(0, 1).Draw(t, "x"),
			Y:     rapid.Float64Range(0, 1).Draw(t, "y"),
		}
	})
	return rapid.SliceOfNDistinct(marker, minLen, maxLen, func(m domain.Marker) string { return m.ID })
}

// GenTrim draws a trim that passes ValidateTrim; about one in eight ends
// past frameCount, which the edit's precondition must refuse.
func GenTrim(frameCount int) *rapid.Generator[domain.Trim] {
	return rapid.Custom(func(t *rapid.T) domain.Trim {
		end := rapid.IntRange(1, frameCount+frameCount/8+1).Draw(t, "trimEnd")
		start := rapid.IntRange(0, end-1).Draw(t, "trimStart")
		return domain.Trim{Start: start, End: end}
	})
}

// GenCaptureInterval draws a valid interval, mostly small.
func GenCaptureInterval() *rapid.Generator[int] {
	return rapid.OneOf(rapid.IntRange(1, 10), rapid.IntRange(1, domain.MaxCaptureInterval))
}

// GenMovie draws a fresh movie created at t0 (see NewMovie).
func GenMovie() *rapid.Generator[domain.Movie] {
	return rapid.Custom(func(t *rapid.T) domain.Movie {
		frames := rapid.IntRange(1, 2000).Draw(t, "frameCount")
		m, err := domain.NewMovie(rapid.StringMatching(`m[a-z0-9_-]{0,8}`).Draw(t, "movieID"), "A movie", frames, 25, t0)
		if err != nil {
			t.Fatalf("NewMovie: %v", err)
		}
		return m
	})
}

// GenClockStep draws how far the clock moves between two commands: often
// nothing or a little, sometimes exactly the lease duration or past it.
func GenClockStep() *rapid.Generator[time.Duration] {
	return rapid.OneOf(
		rapid.SampledFrom([]time.Duration{0, time.Millisecond, time.Second, time.Minute, 5 * time.Minute,
			d - time.Millisecond, d, d + time.Millisecond, 2 * d}),
		rapid.Custom(func(t *rapid.T) time.Duration {
			return time.Duration(rapid.Int64Range(0, int64(20*time.Minute/time.Millisecond)).Draw(t, "ms")) * time.Millisecond
		}),
	)
}

// GenLeaseDuration draws the duration a command asks for: mostly the
// default, sometimes short enough to lapse between two commands.
func GenLeaseDuration() *rapid.Generator[time.Duration] {
	return rapid.OneOf(
		rapid.Just(d), rapid.Just(d),
		rapid.Custom(func(t *rapid.T) time.Duration {
			return time.Duration(rapid.Int64Range(1, int64(2*d/time.Millisecond)).Draw(t, "durationMs")) * time.Millisecond
		}),
	)
}

// hostileSummaries are failure texts a worker might send.
var hostileSummaries = []string{
	"Marker m1 left the frame at 412",
	"panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n\t/var/task/main.go:9 +0x1d",
	"Traceback (most recent call last):\n  File \"/var/task/h.py\", line 3",
	"open /var/task/frames/000412.png: permission denied",
	"AccessDenied: AKIAIOSFODNN7EXAMPLE password=hunter2 Authorization: Bearer " + jwt,
	"lease " + job1 + " lost",
	"GET https://admin:s3cret@db.internal/x failed",
	strings.Repeat("frame failed ", 100),
	"\x00\xff\xfe",
	"",
}

// GenFailureText draws what a worker might send as a failure summary:
// realistic hostile texts or arbitrary strings.
func GenFailureText() *rapid.Generator[string] {
	return rapid.OneOf(rapid.SampledFrom(hostileSummaries), rapid.String())
}

// IDSource hands out distinct well-formed IDs, so a property test controls
// exactly when an ID is reused. Its zero value is ready to use.
type IDSource struct{ n uint64 }

// Next returns an ID never returned before by this source.
func (s *IDSource) Next() string {
	s.n++
	return fmt.Sprintf("%032x", s.n)
}
