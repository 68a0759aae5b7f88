package dynamo

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/schema"
)

// A field exists on a stored item exactly when the domain says it exists
// (domain.Present, which applies domain.OmittedWhenZero): one definition of
// presence, so a rule decides alike in the domain and in DynamoDB. The
// movies cover every field both absent and present, and every field the
// domain omits when zero both zero and not.
func TestPresenceIsTheDomains(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	bare, err := domain.NewMovie("m1", "Movie", 300, 30, t0)
	if err != nil {
		t.Fatal(err)
	}
	zero := bare
	zero.Lease = &domain.Lease{Kind: domain.LeaseTracing, ID: strings.Repeat("a", 32), UserID: "alice",
		AcquiredAt: t0, HeartbeatAt: t0, ExpiresAt: t0.Add(time.Minute)}
	zero.LastJob = &domain.JobRecord{JobID: strings.Repeat("b", 32), Status: domain.StatusTraced}
	zero.Upload = &domain.Upload{ExpiresAt: t0.Add(time.Hour)}
	zero.Video = &domain.Video{Codec: "h264", Width: 64, Height: 48}
	full := zero
	l, j := *zero.Lease, *zero.LastJob
	l.Segment, l.ClaimToken, l.Claimed = 2, strings.Repeat("c", 32), true
	l.EditedAt, l.ReleaseAsk = t0, &domain.ReleaseAsk{UserName: "Bob", At: t0}
	full.SettingsChangedAt, full.KeptFrames = t0, 3
	j.FailureSummary = "it failed"
	full.Lease, full.LastJob, full.IngestFailure = &l, &j, "not a video"
	full.Calibration = &domain.Calibration{Line: domain.Line{X2: 0.5}, Length: 1, Unit: domain.UnitMetre}

	seen := map[domain.Field]map[bool]bool{}
	for _, m := range []domain.Movie{bare, zero, full} {
		item, err := schema.MarshalMovie(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range domain.Fields {
			want := domain.Holds(domain.Present{Field: f}, &m)
			if got := hasPath(item, attributes[f]); got != want {
				t.Errorf("movie %+v: field %s present in the item %v, in the domain %v", m, f, got, want)
			}
			if seen[f] == nil {
				seen[f] = map[bool]bool{}
			}
			seen[f][want] = true
		}
	}
	for _, f := range domain.Fields {
		if f != domain.FieldID && !(seen[f][true] && seen[f][false]) && !alwaysPresent(f) {
			t.Errorf("field %s not seen both present and absent", f)
		}
	}
}

// alwaysPresent: the fields every movie has.
func alwaysPresent(f domain.Field) bool {
	return !strings.HasPrefix(string(f), "Lease") && !strings.HasPrefix(string(f), "LastJob") &&
		!domain.OmittedWhenZero(f) && f != domain.FieldVideo && f != domain.FieldUploadExpiresAt && f != domain.FieldCalibration
}

// hasPath reports whether the dotted attribute path exists in item.
func hasPath(item map[string]types.AttributeValue, path string) bool {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		v, ok := item[p]
		if !ok {
			return false
		}
		if i == len(parts)-1 {
			return true
		}
		m, ok := v.(*types.AttributeValueMemberM)
		if !ok {
			return false
		}
		item = m.Value
	}
	return false
}
