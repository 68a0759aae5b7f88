package schema

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/domain"
)

// PointItem is one stored marker position. The pixel coordinates,
// confidence and lost flag are left out when zero (items of older traces
// have none of them).
type PointItem struct {
	MarkerID   string  `dynamodbav:"markerId"`
	X          float64 `dynamodbav:"x"`
	Y          float64 `dynamodbav:"y"`
	PX         float64 `dynamodbav:"px,omitempty"`
	PY         float64 `dynamodbav:"py,omitempty"`
	Confidence float64 `dynamodbav:"confidence,omitempty"`
	Lost       bool    `dynamodbav:"lost,omitempty"`
	Doubt      string  `dynamodbav:"doubt,omitempty"`
}

// FrameItem is one row of the frames table: the traced positions of a
// movie's markers on one frame, and the job that wrote them.
type FrameItem struct {
	MovieID string      `dynamodbav:"movieId"`
	Index   int         `dynamodbav:"frame"`
	JobID   string      `dynamodbav:"jobId"`
	Points  []PointItem `dynamodbav:"points"`
}

// NewFrameItem converts a domain frame of a movie to its stored form. Points
// is never nil, so the attribute is always a list.
func NewFrameItem(movieID string, f domain.Frame) FrameItem {
	it := FrameItem{MovieID: movieID, Index: f.Index, JobID: f.JobID, Points: make([]PointItem, len(f.Points))}
	for i, p := range f.Points {
		it.Points[i] = PointItem{MarkerID: p.MarkerID, X: p.X, Y: p.Y, PX: p.PX, PY: p.PY, Confidence: p.Confidence, Lost: p.Lost, Doubt: p.Doubt}
	}
	return it
}

// Frame converts a stored frame to the domain's.
func (it FrameItem) Frame() domain.Frame {
	f := domain.Frame{Index: it.Index, JobID: it.JobID, Points: make([]domain.Point, len(it.Points))}
	for i, p := range it.Points {
		f.Points[i] = domain.Point{MarkerID: p.MarkerID, X: p.X, Y: p.Y, PX: p.PX, PY: p.PY, Confidence: p.Confidence, Lost: p.Lost, Doubt: p.Doubt}
	}
	return f
}

// FrameKey is the key of a movie's frame in the frames table.
func FrameKey(movieID string, index int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrMovieID:    &types.AttributeValueMemberS{Value: movieID},
		AttrFrameIndex: &types.AttributeValueMemberN{Value: strconv.Itoa(index)},
	}
}

// MarshalFrame encodes a movie's frame as a DynamoDB item.
func MarshalFrame(movieID string, f domain.Frame) (map[string]types.AttributeValue, error) {
	item, err := attributevalue.MarshalMap(NewFrameItem(movieID, f))
	if err != nil {
		return nil, fmt.Errorf("encode frame item: %w", err)
	}
	return item, nil
}

// UnmarshalFrame decodes a frame item (from Query). An item without a movie
// ID or frame index is an error.
func UnmarshalFrame(item map[string]types.AttributeValue) (FrameItem, error) {
	if _, ok := item[AttrMovieID].(*types.AttributeValueMemberS); !ok {
		return FrameItem{}, fmt.Errorf("decode frame item: no %s", AttrMovieID)
	}
	if _, ok := item[AttrFrameIndex].(*types.AttributeValueMemberN); !ok {
		return FrameItem{}, fmt.Errorf("decode frame item: no %s", AttrFrameIndex)
	}
	var it FrameItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return FrameItem{}, fmt.Errorf("decode frame item: %w", err)
	}
	return it, nil
}

// FrameIndexOf reads the frame index of a frames-table key or item.
func FrameIndexOf(item map[string]types.AttributeValue) (int, error) {
	n, ok := item[AttrFrameIndex].(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("frame key: no %s", AttrFrameIndex)
	}
	var i int
	if err := attributevalue.Unmarshal(n, &i); err != nil {
		return 0, fmt.Errorf("frame key: %w", err)
	}
	return i, nil
}
