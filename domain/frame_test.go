package domain_test

import (
	"math"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
)

func TestFrameValidate(t *testing.T) {
	const jobID = "0123456789abcdef0123456789abcdef"
	ok := domain.Frame{Index: 7, JobID: jobID, Points: []domain.Point{{MarkerID: "m1", X: 0, Y: 1}, {MarkerID: "m2", X: 0.5, Y: 0.25},
		{MarkerID: "m3", X: 0.5, Y: 0.25, PX: 320, PY: 90, Confidence: 0.97}, {MarkerID: "m4", Lost: true, Confidence: 0.31},
		{MarkerID: "m5", X: 0.5, Y: 0.5, Confidence: 0.4, Doubt: "appearance"}}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid frame refused: %v", err)
	}
	if err := (domain.Frame{Index: 0, JobID: jobID}).Validate(); err != nil {
		t.Fatalf("frame without points refused: %v", err)
	}
	many := make([]domain.Point, domain.MaxMarkers+1)
	for i := range many {
		many[i] = domain.Point{MarkerID: "m" + strings.Repeat("x", i+1)}
	}
	for name, f := range map[string]domain.Frame{
		"negative index":  {Index: -1, JobID: jobID},
		"index too large": {Index: domain.MaxFrameCount, JobID: jobID},
		"no job":          {Index: 1},
		"malformed job":   {Index: 1, JobID: "JOB"},
		"too many points": {Index: 1, JobID: jobID, Points: many},
		"empty marker":    {Index: 1, JobID: jobID, Points: []domain.Point{{}}},
		"bad marker":      {Index: 1, JobID: jobID, Points: []domain.Point{{MarkerID: "a b"}}},
		"duplicate":       {Index: 1, JobID: jobID, Points: []domain.Point{{MarkerID: "m"}, {MarkerID: "m"}}},
		"x outside":       {Index: 1, JobID: jobID, Points: []domain.Point{{MarkerID: "m", X: 1.01}}},
		"y negative":      {Index: 1, JobID: jobID, Points: []domain.Point{{MarkerID: "m", Y: -0.1}}},
		"NaN":             {Index: 1, JobID: jobID, Points: []domain.Point{{MarkerID: "m", X: math.NaN()}}},
		"confidence > 1":  {Index: 1, JobID: jobID, Points: []domain.Point{{MarkerID: "m", Confidence: 1.5}}},
		"confidence NaN":  {Index: 1, JobID: jobID, Points: []domain.Point{{MarkerID: "m", Confidence: math.NaN()}}},
		"pixels negative": {Index: 1, JobID: jobID, Points: []domain.Point{{MarkerID: "m", PX: -1}}},
		"pixels too far":  {Index: 1, JobID: jobID, Points: []domain.Point{{MarkerID: "m", PY: domain.MaxPixels + 1}}},
		"lost with x":     {Index: 1, JobID: jobID, Points: []domain.Point{{MarkerID: "m", Lost: true, X: 0.5}}},
		"lost with px":    {Index: 1, JobID: jobID, Points: []domain.Point{{MarkerID: "m", Lost: true, PX: 3}}},
		"unknown doubt":   {Index: 1, JobID: jobID, Points: []domain.Point{{MarkerID: "m", Doubt: "maybe"}}},
		"lost with doubt": {Index: 1, JobID: jobID, Points: []domain.Point{{MarkerID: "m", Lost: true, Doubt: "jump"}}},
	} {
		if err := f.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		} else if domain.ErrorCode(err) == "" {
			t.Errorf("%s: %v is not a refusal", name, err)
		}
	}
}
