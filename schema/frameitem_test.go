package schema

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/domain"
)

func TestFrameItemRoundTrip(t *testing.T) {
	f := domain.Frame{Index: 42, JobID: job1, Points: []domain.Point{{MarkerID: "m1", X: 0.25, Y: 1}, {MarkerID: "tip", X: 0, Y: 0.125},
		{MarkerID: "px", X: 0.5, Y: 0.25, PX: 320.25, PY: 90.5, Confidence: 0.875}, {MarkerID: "gone", Lost: true, Confidence: 0.25}}}
	item, err := MarshalFrame("movie-1", f)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]types.AttributeValue{
		AttrMovieID:    &types.AttributeValueMemberS{Value: "movie-1"},
		AttrFrameIndex: &types.AttributeValueMemberN{Value: "42"},
		AttrJobID:      &types.AttributeValueMemberS{Value: job1},
	} {
		if !reflect.DeepEqual(item[k], want) {
			t.Errorf("%s = %#v, want %#v", k, item[k], want)
		}
	}
	pts, ok := item[AttrPoints].(*types.AttributeValueMemberL)
	if !ok || len(pts.Value) != 4 {
		t.Fatalf("points %#v", item[AttrPoints])
	}
	p0 := pts.Value[0].(*types.AttributeValueMemberM).Value
	if p0["markerId"].(*types.AttributeValueMemberS).Value != "m1" || p0["x"].(*types.AttributeValueMemberN).Value != "0.25" {
		t.Errorf("point %#v", p0)
	}
	if _, has := p0["lost"]; has {
		t.Errorf("a found point stores a lost flag: %#v", p0)
	}
	if p3 := pts.Value[3].(*types.AttributeValueMemberM).Value; p3["lost"].(*types.AttributeValueMemberBOOL).Value != true || p3["x"] == nil {
		t.Errorf("lost point %#v", p3)
	}
	it, err := UnmarshalFrame(item)
	if err != nil {
		t.Fatal(err)
	}
	if it.MovieID != "movie-1" || !reflect.DeepEqual(it.Frame(), f) {
		t.Fatalf("round trip: %+v", it)
	}
	if n, err := FrameIndexOf(item); err != nil || n != 42 {
		t.Errorf("index %d %v", n, err)
	}
	if !reflect.DeepEqual(FrameKey("movie-1", 42), map[string]types.AttributeValue{AttrMovieID: item[AttrMovieID], AttrFrameIndex: item[AttrFrameIndex]}) {
		t.Error("FrameKey differs from the item's key")
	}
}

func TestFrameItemWithoutPointsIsAList(t *testing.T) {
	item, err := MarshalFrame("movie-1", domain.Frame{Index: 0, JobID: job1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := item[AttrPoints].(*types.AttributeValueMemberL); !ok {
		t.Fatalf("points %#v", item[AttrPoints])
	}
	it, err := UnmarshalFrame(item)
	if err != nil || it.Frame().Points == nil || len(it.Frame().Points) != 0 {
		t.Fatalf("%+v %v", it, err)
	}
}

func TestUnmarshalFrameRejects(t *testing.T) {
	good, _ := MarshalFrame("movie-1", domain.Frame{Index: 3, JobID: job1})
	without := func(k string) map[string]types.AttributeValue {
		m := map[string]types.AttributeValue{}
		for kk, v := range good {
			if kk != k {
				m[kk] = v
			}
		}
		return m
	}
	bad := without(AttrFrameIndex)
	bad[AttrFrameIndex] = &types.AttributeValueMemberN{Value: "1.5"}
	for name, item := range map[string]map[string]types.AttributeValue{
		"no movie": without(AttrMovieID), "no frame": without(AttrFrameIndex), "fractional frame": bad,
	} {
		if _, err := UnmarshalFrame(item); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := FrameIndexOf(map[string]types.AttributeValue{AttrFrameIndex: &types.AttributeValueMemberS{Value: "1"}}); err == nil {
		t.Error("string frame index accepted")
	}
}
