package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	streamstypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/movietrace/tracinglocks/domain"
)

// maxDepth is DynamoDB's own nesting limit for maps and lists; a deeper
// image cannot come from DynamoDB.
const maxDepth = 32

// FromStreamImage converts a Lambda stream image (the JSON form Lambda hands
// to the function) into the SDK's attribute values, so the item codecs of
// this package read stream images and GetItem results alike. Every type is
// handled (S, N, B, BOOL, NULL, M, L, SS, NS, BS); a zero DynamoDBAttributeValue
// (which Lambda never produces) and nesting deeper than DynamoDB allows are
// errors. Numbers are passed through as strings, as DynamoDB sends them.
func FromStreamImage(image map[string]events.DynamoDBAttributeValue) (map[string]types.AttributeValue, error) {
	if image == nil {
		return nil, nil
	}
	out := make(map[string]types.AttributeValue, len(image))
	for k, v := range image {
		av, err := fromStream(v, 1)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

// FromStreamAttributeValue converts one Lambda attribute value.
func FromStreamAttributeValue(v events.DynamoDBAttributeValue) (types.AttributeValue, error) {
	return fromStream(v, 1)
}

var errNoValue = errors.New("attribute value has no type (zero DynamoDBAttributeValue)")

func fromStream(v events.DynamoDBAttributeValue, depth int) (types.AttributeValue, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	dt := v.DataType()
	// The zero value claims DataTypeBinary (iota 0) but holds nothing; its
	// accessors would panic. Lambda's JSON decoder never produces it.
	if v.IsNull() && dt != events.DataTypeNull {
		return nil, errNoValue
	}
	switch dt {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: slices.Clone(v.Binary())}, nil
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeNull:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: slices.Clone(v.StringSet())}, nil
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: slices.Clone(v.NumberSet())}, nil
	case events.DataTypeBinarySet:
		bs := v.BinarySet()
		out := make([][]byte, len(bs))
		for i, b := range bs {
			out[i] = slices.Clone(b)
		}
		return &types.AttributeValueMemberBS{Value: out}, nil
	case events.DataTypeList:
		l := v.List()
		out := make([]types.AttributeValue, len(l))
		for i, e := range l {
			av, err := fromStream(e, depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = av
		}
		return &types.AttributeValueMemberL{Value: out}, nil
	case events.DataTypeMap:
		m := v.Map()
		out := make(map[string]types.AttributeValue, len(m))
		for k, e := range m {
			av, err := fromStream(e, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", k, err)
			}
			out[k] = av
		}
		return &types.AttributeValueMemberM{Value: out}, nil
	default:
		return nil, fmt.Errorf("unknown attribute data type %d", dt)
	}
}

// ToStreamImage is the inverse of FromStreamImage: SDK attribute values in
// Lambda's form. It is how records read with the DynamoDB Streams API (after
// attributevalue.FromDynamoDBStreamsMap) become the records Lambda delivers.
func ToStreamImage(item map[string]types.AttributeValue) (map[string]events.DynamoDBAttributeValue, error) {
	if item == nil {
		return nil, nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(item))
	for k, v := range item {
		lv, err := toStream(v, 1)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", k, err)
		}
		out[k] = lv
	}
	return out, nil
}

func toStream(v types.AttributeValue, depth int) (events.DynamoDBAttributeValue, error) {
	if depth > maxDepth {
		return events.DynamoDBAttributeValue{}, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value), nil
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value), nil
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(slices.Clone(v.Value)), nil
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value), nil
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute(), nil
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(slices.Clone(v.Value)), nil
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(slices.Clone(v.Value)), nil
	case *types.AttributeValueMemberBS:
		out := make([][]byte, len(v.Value))
		for i, b := range v.Value {
			out[i] = slices.Clone(b)
		}
		return events.NewBinarySetAttribute(out), nil
	case *types.AttributeValueMemberL:
		out := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			lv, err := toStream(e, depth+1)
			if err != nil {
				return events.DynamoDBAttributeValue{}, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = lv
		}
		return events.NewListAttribute(out), nil
	case *types.AttributeValueMemberM:
		out := make(map[string]events.DynamoDBAttributeValue, len(v.Value))
		for k, e := range v.Value {
			lv, err := toStream(e, depth+1)
			if err != nil {
				return events.DynamoDBAttributeValue{}, fmt.Errorf("%q: %w", k, err)
			}
			out[k] = lv
		}
		return events.NewMapAttribute(out), nil
	default:
		return events.DynamoDBAttributeValue{}, fmt.Errorf("unsupported attribute value %T", v)
	}
}

// FromStreamsRecord converts a record read with the DynamoDB Streams API
// (GetRecords) into the record Lambda would deliver for it. streamARN is the
// eventSourceARN Lambda sets (the Streams API records do not carry it).
// Tests and the local stack use it to feed the real stream to the handler.
func FromStreamsRecord(rec streamstypes.Record, streamARN string) (events.DynamoDBEventRecord, error) {
	out := events.DynamoDBEventRecord{
		AWSRegion:      deref(rec.AwsRegion),
		EventID:        deref(rec.EventID),
		EventName:      string(rec.EventName),
		EventSource:    deref(rec.EventSource),
		EventVersion:   deref(rec.EventVersion),
		EventSourceArn: streamARN,
	}
	if rec.UserIdentity != nil {
		out.UserIdentity = &events.DynamoDBUserIdentity{
			Type: deref(rec.UserIdentity.Type), PrincipalID: deref(rec.UserIdentity.PrincipalId),
		}
	}
	sr := rec.Dynamodb
	if sr == nil {
		return events.DynamoDBEventRecord{}, errors.New("streams record has no dynamodb section")
	}
	var err error
	ch := &out.Change
	if sr.ApproximateCreationDateTime != nil {
		ch.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *sr.ApproximateCreationDateTime}
	}
	ch.SequenceNumber = deref(sr.SequenceNumber)
	if sr.SizeBytes != nil {
		ch.SizeBytes = *sr.SizeBytes
	}
	ch.StreamViewType = string(sr.StreamViewType)
	for _, img := range []struct {
		from map[string]streamstypes.AttributeValue
		to   *map[string]events.DynamoDBAttributeValue
	}{{sr.Keys, &ch.Keys}, {sr.NewImage, &ch.NewImage}, {sr.OldImage, &ch.OldImage}} {
		if img.from == nil {
			continue
		}
		ddb, cerr := attributevalue.FromDynamoDBStreamsMap(img.from)
		if cerr != nil {
			return events.DynamoDBEventRecord{}, fmt.Errorf("convert streams image: %w", cerr)
		}
		if *img.to, err = ToStreamImage(ddb); err != nil {
			return events.DynamoDBEventRecord{}, err
		}
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Change is one decoded movie-row change: the row before and after the
// commit. Old is nil for an INSERT, New is nil for a REMOVE.
type Change struct {
	Old, New *domain.Movie
}

// DecodeRecord decodes a movies-table stream record into a Change. Any error
// is permanent: the same record can never decode (a retry cannot help).
// A record without the images its event name implies is an error, because
// the table's stream must be NEW_AND_OLD_IMAGES.
func DecodeRecord(rec events.DynamoDBEventRecord) (Change, error) {
	var wantOld, wantNew bool
	switch events.DynamoDBOperationType(rec.EventName) {
	case events.DynamoDBOperationTypeInsert:
		wantNew = true
	case events.DynamoDBOperationTypeModify:
		wantOld, wantNew = true, true
	case events.DynamoDBOperationTypeRemove:
		wantOld = true
	default:
		return Change{}, fmt.Errorf("stream record: unknown eventName %q", rec.EventName)
	}
	var c Change
	var err error
	if wantOld {
		if c.Old, err = decodeImage("OldImage", rec.Change.OldImage); err != nil {
			return Change{}, err
		}
	}
	if wantNew {
		if c.New, err = decodeImage("NewImage", rec.Change.NewImage); err != nil {
			return Change{}, err
		}
	}
	if c.Old != nil && c.New != nil && c.Old.ID != c.New.ID {
		return Change{}, errors.New("stream record: OldImage and NewImage are different movies")
	}
	return c, nil
}

func decodeImage(name string, img map[string]events.DynamoDBAttributeValue) (*domain.Movie, error) {
	if len(img) == 0 {
		return nil, fmt.Errorf("stream record: no %s (the stream must be NEW_AND_OLD_IMAGES)", name)
	}
	item, err := FromStreamImage(img)
	if err != nil {
		return nil, fmt.Errorf("stream record %s: %w", name, err)
	}
	m, err := UnmarshalMovie(item)
	if err != nil {
		return nil, fmt.Errorf("stream record %s: %w", name, err)
	}
	if !domain.ValidMovieID(m.ID) {
		return nil, fmt.Errorf("stream record %s: malformed %s", name, AttrMovieID)
	}
	return &m, nil
}

// DecodeEvents reads Lambda-format DynamoDB stream events: one event object
// ({"Records": [...]}) or a JSON array of them. aws-lambda-go's attribute
// decoder can panic on some malformed input (a non-string inside "BS"); that
// is reported as an error here.
func DecodeEvents(data []byte) (evs []events.DynamoDBEvent, err error) {
	defer func() {
		if r := recover(); r != nil {
			evs, err = nil, fmt.Errorf("decode stream events: malformed attribute value (%v)", r)
		}
	}()
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		err = json.Unmarshal(data, &evs)
	} else {
		var ev events.DynamoDBEvent
		err = json.Unmarshal(data, &ev)
		evs = []events.DynamoDBEvent{ev}
	}
	if err != nil {
		return nil, fmt.Errorf("decode stream events: %w", err)
	}
	return evs, nil
}

// DecodeImageJSON decodes one image in Lambda's JSON form, recovering the
// decoder's panics as errors (see DecodeEvents).
func DecodeImageJSON(data []byte) (img map[string]events.DynamoDBAttributeValue, err error) {
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("decode image: malformed attribute value (%v)", r)
		}
	}()
	if err := json.Unmarshal(data, &img); err != nil {
		return nil, fmt.Errorf("decode image: %w", err)
	}
	return img, nil
}
