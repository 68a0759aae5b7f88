package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	streamstypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
)

// everyType is an image in Lambda's JSON holding each DynamoDB type, nested.
const everyType = `{
 "s": {"S": "text"}, "n": {"N": "-12.5e3"}, "b": {"B": "AAEC/w=="}, "t": {"BOOL": true},
 "null": {"NULL": true}, "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2.5"]},
 "bs": {"BS": ["AQ==", "Ag=="]}, "empty": {"S": ""},
 "l": {"L": [{"S": "x"}, {"N": "1"}, {"M": {"deep": {"L": [{"NULL": true}]}}}]},
 "m": {"M": {"k": {"BOOL": false}, "inner": {"M": {}}}}
}`

func TestFromStreamImageEveryType(t *testing.T) {
	img, err := DecodeImageJSON([]byte(everyType))
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromStreamImage(img)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]types.AttributeValue{
		"s":     &types.AttributeValueMemberS{Value: "text"},
		"n":     &types.AttributeValueMemberN{Value: "-12.5e3"},
		"b":     &types.AttributeValueMemberB{Value: []byte{0, 1, 2, 255}},
		"t":     &types.AttributeValueMemberBOOL{Value: true},
		"null":  &types.AttributeValueMemberNULL{Value: true},
		"ss":    &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
		"ns":    &types.AttributeValueMemberNS{Value: []string{"1", "2.5"}},
		"bs":    &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2}}},
		"empty": &types.AttributeValueMemberS{Value: ""},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberS{Value: "x"},
			&types.AttributeValueMemberN{Value: "1"},
			&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
				"deep": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberNULL{Value: true}}},
			}},
		}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"k":     &types.AttributeValueMemberBOOL{Value: false},
			"inner": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
	back, err := ToStreamImage(got)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, img), mustJSON(t, back); a != b {
		t.Fatalf("round trip changed the image:\n%s\n%s", a, b)
	}
}

func TestFromStreamImageRejects(t *testing.T) {
	if _, err := FromStreamImage(map[string]lambdaevents.DynamoDBAttributeValue{"x": {}}); err == nil {
		t.Error("zero attribute value accepted")
	}
	deep := lambdaevents.NewStringAttribute("bottom")
	for range maxDepth {
		deep = lambdaevents.NewListAttribute([]lambdaevents.DynamoDBAttributeValue{deep})
	}
	if _, err := FromStreamImage(map[string]lambdaevents.DynamoDBAttributeValue{"x": deep}); err == nil {
		t.Error("nesting beyond DynamoDB's limit accepted")
	}
	if _, err := ToStreamImage(map[string]types.AttributeValue{"x": &types.UnknownUnionMember{Tag: "Z"}}); err == nil {
		t.Error("unknown union member accepted")
	}
	// aws-lambda-go's decoder panics on a non-string inside BS; we report it.
	if _, err := DecodeImageJSON([]byte(`{"x":{"BS":[1]}}`)); err == nil {
		t.Error("BS of numbers accepted")
	}
	if _, err := DecodeEvents([]byte(`{"Records":[{"dynamodb":{"NewImage":{"x":{"BS":[{}]}}}}]}`)); err == nil {
		t.Error("event with BS of objects accepted")
	}
}

func TestDecodeEventsObjectOrArray(t *testing.T) {
	one := `{"Records":[{"eventName":"INSERT","dynamodb":{"SequenceNumber":"1"}}]}`
	for _, in := range []string{one, " \n[" + one + "," + one + "]"} {
		evs, err := DecodeEvents([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if len(ev.Records) != 1 || ev.Records[0].Change.SequenceNumber != "1" {
				t.Fatalf("decoded %+v", evs)
			}
		}
	}
	if _, err := DecodeEvents([]byte(`{"Records": 3}`)); err == nil {
		t.Error("garbage accepted")
	}
}

func TestFromStreamsRecord(t *testing.T) {
	m, err := domain.NewMovie("movie-1", "Movie", 10, 25, t0)
	if err != nil {
		t.Fatal(err)
	}
	item, err := MarshalMovie(m)
	if err != nil {
		t.Fatal(err)
	}
	img, err := ToStreamImage(item)
	if err != nil {
		t.Fatal(err)
	}
	streamsImg := toStreamsTypes(t, item)
	when := time.Unix(1_800_000_000, 0)
	rec := streamstypes.Record{
		AwsRegion: aws.String("us-east-1"), EventID: aws.String("e1"), EventName: streamstypes.OperationTypeInsert,
		EventSource: aws.String("aws:dynamodb"), EventVersion: aws.String("1.1"),
		Dynamodb: &streamstypes.StreamRecord{
			ApproximateCreationDateTime: &when,
			Keys:                        map[string]streamstypes.AttributeValue{AttrMovieID: &streamstypes.AttributeValueMemberS{Value: "movie-1"}},
			NewImage:                    streamsImg,
			SequenceNumber:              aws.String("000100"), SizeBytes: aws.Int64(99),
			StreamViewType: streamstypes.StreamViewTypeNewAndOldImages,
		},
	}
	got, err := FromStreamsRecord(rec, "arn:stream")
	if err != nil {
		t.Fatal(err)
	}
	if got.EventName != "INSERT" || got.EventSourceArn != "arn:stream" || got.Change.SequenceNumber != "000100" ||
		got.Change.SizeBytes != 99 || !got.Change.ApproximateCreationDateTime.Equal(when) || got.AWSRegion != "us-east-1" ||
		got.Change.StreamViewType != "NEW_AND_OLD_IMAGES" || got.Change.OldImage != nil {
		t.Fatalf("converted %+v", got)
	}
	if mustJSON(t, got.Change.NewImage) != mustJSON(t, img) {
		t.Fatal("image changed")
	}
	c, err := DecodeRecord(got)
	if err != nil {
		t.Fatal(err)
	}
	if c.Old != nil || c.New == nil || c.New.ID != "movie-1" || !c.New.UpdatedAt.Equal(t0) {
		t.Fatalf("decoded %+v", c)
	}
	if _, err := FromStreamsRecord(streamstypes.Record{}, ""); err == nil {
		t.Error("record without dynamodb section accepted")
	}
}

func TestDecodeRecordRejects(t *testing.T) {
	m, _ := domain.NewMovie("movie-1", "Movie", 10, 25, t0)
	other, _ := domain.NewMovie("movie-2", "Movie", 10, 25, t0)
	img := func(m domain.Movie) map[string]lambdaevents.DynamoDBAttributeValue {
		item, err := MarshalMovie(m)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ToStreamImage(item)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	bad := img(m)
	bad[AttrVersion] = lambdaevents.NewStringAttribute("seven")
	noID := img(m)
	delete(noID, AttrMovieID)
	badID := img(m)
	badID[AttrMovieID] = lambdaevents.NewStringAttribute("../etc")
	for name, rec := range map[string]lambdaevents.DynamoDBEventRecord{
		"unknown event":   {EventName: "UPSERT"},
		"modify, no old":  {EventName: "MODIFY", Change: lambdaevents.DynamoDBStreamRecord{NewImage: img(m)}},
		"insert, no new":  {EventName: "INSERT", Change: lambdaevents.DynamoDBStreamRecord{Keys: img(m)}},
		"wrong type":      {EventName: "INSERT", Change: lambdaevents.DynamoDBStreamRecord{NewImage: bad}},
		"no movie ID":     {EventName: "INSERT", Change: lambdaevents.DynamoDBStreamRecord{NewImage: noID}},
		"bad movie ID":    {EventName: "INSERT", Change: lambdaevents.DynamoDBStreamRecord{NewImage: badID}},
		"different items": {EventName: "MODIFY", Change: lambdaevents.DynamoDBStreamRecord{OldImage: img(other), NewImage: img(m)}},
	} {
		if _, err := DecodeRecord(rec); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c, err := DecodeRecord(lambdaevents.DynamoDBEventRecord{EventName: "REMOVE", Change: lambdaevents.DynamoDBStreamRecord{OldImage: img(m)}})
	if err != nil || c.New != nil || c.Old == nil {
		t.Errorf("remove: %+v %v", c, err)
	}
}

// FuzzFromStreamImage feeds arbitrary JSON images: decoding never panics,
// and whatever converts survives the round trip through the SDK's types and
// the movie codec and Derive do not panic on it.
func FuzzFromStreamImage(f *testing.F) {
	f.Add([]byte(everyType))
	f.Add([]byte(`{"movieId":{"S":"m1"},"version":{"N":"3"},"lease":{"M":{"kind":{"S":"tracing"},"id":{"S":"x"}}}}`))
	f.Add([]byte(`{"x":{"NULL":false}}`))
	f.Add([]byte(`{"x":{"L":[{"L":[{"L":[]}]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := DecodeImageJSON(data)
		if err != nil {
			return
		}
		item, err := FromStreamImage(img)
		if err != nil {
			return
		}
		back, err := ToStreamImage(item)
		if err != nil {
			t.Fatalf("converted image does not convert back: %v", err)
		}
		again, err := FromStreamImage(back)
		if err != nil || !reflect.DeepEqual(normalize(item), normalize(again)) {
			t.Fatalf("round trip changed %#v into %#v (%v)", item, again, err)
		}
		if _, err := RedactRecord(lambdaevents.DynamoDBEventRecord{Change: lambdaevents.DynamoDBStreamRecord{NewImage: img}}); err != nil {
			t.Fatalf("redact: %v", err)
		}
		if m, err := UnmarshalMovie(item); err == nil {
			_ = events.Derive(&m, &m)
			_ = events.Derive(nil, &m)
		}
	})
}

// normalize maps nil and empty byte slices alike: JSON cannot tell them
// apart ("B": "" decodes to an empty, non-nil slice).
func normalize(item map[string]types.AttributeValue) string {
	b, _ := json.Marshal(toJSONable(&types.AttributeValueMemberM{Value: item}))
	return string(b)
}

func toJSONable(v types.AttributeValue) any {
	switch v := v.(type) {
	case *types.AttributeValueMemberM:
		m := map[string]any{}
		for k, e := range v.Value {
			m[k] = toJSONable(e)
		}
		return map[string]any{"M": m}
	case *types.AttributeValueMemberL:
		l := []any{}
		for _, e := range v.Value {
			l = append(l, toJSONable(e))
		}
		return map[string]any{"L": l}
	default:
		return v
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// toStreamsTypes mirrors an SDK item into the Streams API's own types.
func toStreamsTypes(t *testing.T, item map[string]types.AttributeValue) map[string]streamstypes.AttributeValue {
	t.Helper()
	out := map[string]streamstypes.AttributeValue{}
	for k, v := range item {
		out[k] = toStreamsValue(t, v)
	}
	return out
}

func toStreamsValue(t *testing.T, v types.AttributeValue) streamstypes.AttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return &streamstypes.AttributeValueMemberS{Value: v.Value}
	case *types.AttributeValueMemberN:
		return &streamstypes.AttributeValueMemberN{Value: v.Value}
	case *types.AttributeValueMemberBOOL:
		return &streamstypes.AttributeValueMemberBOOL{Value: v.Value}
	case *types.AttributeValueMemberNULL:
		return &streamstypes.AttributeValueMemberNULL{Value: v.Value}
	case *types.AttributeValueMemberL:
		var l []streamstypes.AttributeValue
		for _, e := range v.Value {
			l = append(l, toStreamsValue(t, e))
		}
		return &streamstypes.AttributeValueMemberL{Value: l}
	case *types.AttributeValueMemberM:
		return &streamstypes.AttributeValueMemberM{Value: toStreamsTypes(t, v.Value)}
	default:
		t.Fatalf("unexpected %T in a movie item", v)
		return nil
	}
}

func TestRedactRecord(t *testing.T) {
	leaseImg := func(kind, id string) map[string]lambdaevents.DynamoDBAttributeValue {
		return map[string]lambdaevents.DynamoDBAttributeValue{
			AttrMovieID: lambdaevents.NewStringAttribute("movie-1"),
			AttrLease: lambdaevents.NewMapAttribute(map[string]lambdaevents.DynamoDBAttributeValue{
				"kind": lambdaevents.NewStringAttribute(kind), "id": lambdaevents.NewStringAttribute(id),
				"userName": lambdaevents.NewStringAttribute("Alice"),
				"Id":       lambdaevents.NewStringAttribute(lease2), // a misspelt field holding an ID
			}),
		}
	}
	rec := lambdaevents.DynamoDBEventRecord{EventName: "MODIFY", Change: lambdaevents.DynamoDBStreamRecord{
		OldImage: leaseImg("analysis", lease1),
		NewImage: map[string]lambdaevents.DynamoDBAttributeValue{
			AttrMovieID: lambdaevents.NewStringAttribute("movie-1"),
			AttrLease:   lambdaevents.NewStringAttribute("garbage " + lease1), // malformed: not a map
			AttrTitle:   lambdaevents.NewStringAttribute("misplaced " + lease2),
			AttrMarkers: lambdaevents.NewListAttribute([]lambdaevents.DynamoDBAttributeValue{
				lambdaevents.NewMapAttribute(map[string]lambdaevents.DynamoDBAttributeValue{
					"label": lambdaevents.NewStringSetAttribute([]string{lease1}),
					lease2:  lambdaevents.NewNumberAttribute("1"),
				})}),
			AttrLastJob: lambdaevents.NewMapAttribute(map[string]lambdaevents.DynamoDBAttributeValue{
				"jobId":          lambdaevents.NewStringAttribute(job1),
				"failureSummary": lambdaevents.NewStringAttribute("lost " + lease1),
			}),
		},
		SequenceNumber: "42",
	}}
	b, err := RedactRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Contains(s, lease1) || strings.Contains(s, lease2) {
		t.Fatalf("lease ID in %s", s)
	}
	for _, keep := range []string{"movie-1", "Alice", `"42"`, "analysis", events.Redacted, job1, "misplaced", "lost"} {
		if !strings.Contains(s, keep) {
			t.Errorf("redacted record lost %q: %s", keep, s)
		}
	}
	// The input is untouched.
	if rec.Change.OldImage[AttrLease].Map()["id"].String() != lease1 {
		t.Error("RedactRecord modified its input")
	}
	// A hand-built record with a zero value is an error, not a panic.
	rec.Change.NewImage = map[string]lambdaevents.DynamoDBAttributeValue{"x": {}}
	if _, err := RedactRecord(rec); err == nil {
		t.Error("zero value encoded")
	}
}
