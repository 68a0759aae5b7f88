package schema

import (
	"encoding/json"
	"fmt"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/events"
)

// RedactRecord returns the record as JSON for a log line, with every lease
// ID removed: a movie row's lease.id is a capability (an analysis lease ID
// lets its holder edit the movie), so it must never reach the logs. The
// rest of the record is kept, for diagnosing why it failed.
//
// The lease's "id" is replaced whatever its shape; a lease attribute that is
// not a map (a malformed row) is replaced whole. Beyond that, any text
// shaped like a lease ID, anywhere in the images (a malformed row may hold
// one in the wrong attribute), is replaced too; the only ID kept is the
// last job's jobId, a job ID, which users see anyway. The record itself is
// not modified.
func RedactRecord(rec lambdaevents.DynamoDBEventRecord) (b json.RawMessage, err error) {
	defer func() {
		// A hand-built record may hold zero DynamoDBAttributeValues, whose
		// MarshalJSON panics; Lambda's never do.
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("redact record: unencodable attribute value (%v)", r)
		}
	}()
	rec.Change.Keys = RedactImage(rec.Change.Keys)
	rec.Change.NewImage = RedactImage(rec.Change.NewImage)
	rec.Change.OldImage = RedactImage(rec.Change.OldImage)
	return json.Marshal(rec)
}

// RedactImage returns a copy of a stream image without lease IDs (see
// RedactRecord). The input is not modified.
func RedactImage(img map[string]lambdaevents.DynamoDBAttributeValue) map[string]lambdaevents.DynamoDBAttributeValue {
	if img == nil {
		return nil
	}
	out := make(map[string]lambdaevents.DynamoDBAttributeValue, len(img))
	for k, v := range img {
		switch {
		case k == AttrLease && (v.DataType() != lambdaevents.DataTypeMap || v.IsNull()):
			v = lambdaevents.NewStringAttribute(events.Redacted)
		case k == AttrLease:
			fields := make(map[string]lambdaevents.DynamoDBAttributeValue, len(v.Map()))
			for fk, fv := range v.Map() {
				if fk == "id" {
					fv = lambdaevents.NewStringAttribute(events.Redacted)
				}
				fields[fk] = redactValue(fv, 2)
			}
			v = lambdaevents.NewMapAttribute(fields)
		case k == AttrLastJob && v.DataType() == lambdaevents.DataTypeMap && !v.IsNull():
			fields := make(map[string]lambdaevents.DynamoDBAttributeValue, len(v.Map()))
			for fk, fv := range v.Map() {
				if fk != "jobId" {
					fv = redactValue(fv, 2)
				}
				fields[fk] = fv
			}
			v = lambdaevents.NewMapAttribute(fields)
		default:
			v = redactValue(v, 1)
		}
		out[events.RedactIDs(k)] = v
	}
	return out
}

// redactValue replaces ID-shaped text in strings, string sets and, within
// DynamoDB's nesting limit, maps and lists (deeper values are replaced).
func redactValue(v lambdaevents.DynamoDBAttributeValue, depth int) lambdaevents.DynamoDBAttributeValue {
	if v.IsNull() {
		return v
	}
	if depth > maxDepth {
		return lambdaevents.NewStringAttribute(events.Redacted)
	}
	switch v.DataType() {
	case lambdaevents.DataTypeString:
		return lambdaevents.NewStringAttribute(events.RedactIDs(v.String()))
	case lambdaevents.DataTypeStringSet:
		ss := make([]string, len(v.StringSet()))
		for i, s := range v.StringSet() {
			ss[i] = events.RedactIDs(s)
		}
		return lambdaevents.NewStringSetAttribute(ss)
	case lambdaevents.DataTypeMap:
		m := make(map[string]lambdaevents.DynamoDBAttributeValue, len(v.Map()))
		for k, e := range v.Map() {
			m[events.RedactIDs(k)] = redactValue(e, depth+1)
		}
		return lambdaevents.NewMapAttribute(m)
	case lambdaevents.DataTypeList:
		l := make([]lambdaevents.DynamoDBAttributeValue, len(v.List()))
		for i, e := range v.List() {
			l[i] = redactValue(e, depth+1)
		}
		return lambdaevents.NewListAttribute(l)
	default:
		return v
	}
}
