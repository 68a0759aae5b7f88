package events

import (
	"encoding/json"
	"fmt"
	"regexp"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/movietrace/tracinglocks/domain"
)

// Redacted replaces a secret value in a logged record.
const Redacted = "[redacted]"

// RedactRecord returns the record as JSON for a log line, with every lease
// ID removed: a movie row's lease.id is a capability (an analysis lease ID
// lets its holder edit the movie), so it must never reach the logs. The
// rest of the record is kept verbatim, for diagnosing why it failed.
//
// A lease attribute that is a map loses its "id"; a lease attribute of any
// other shape (a malformed row) is replaced whole, since where its ID is
// cannot be known. The record itself is not modified.
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

// RedactImage returns a copy of a stream image without the lease ID (see
// RedactRecord). The input is not modified.
func RedactImage(img map[string]lambdaevents.DynamoDBAttributeValue) map[string]lambdaevents.DynamoDBAttributeValue {
	lease, ok := img[AttrLease]
	if !ok {
		return img
	}
	out := make(map[string]lambdaevents.DynamoDBAttributeValue, len(img))
	for k, v := range img {
		out[k] = v
	}
	if lease.DataType() != lambdaevents.DataTypeMap || lease.IsNull() {
		out[AttrLease] = lambdaevents.NewStringAttribute(Redacted)
		return out
	}
	fields := lease.Map()
	redacted := make(map[string]lambdaevents.DynamoDBAttributeValue, len(fields))
	for k, v := range fields {
		redacted[k] = v
	}
	for k, v := range redacted {
		// "id" is the lease ID; any other value shaped like one (a malformed
		// row that misspells the field) goes too.
		if k == "id" || (v.DataType() == lambdaevents.DataTypeString && !v.IsNull() && domain.ValidLeaseID(v.String())) {
			redacted[k] = lambdaevents.NewStringAttribute(Redacted)
		}
	}
	out[AttrLease] = lambdaevents.NewMapAttribute(redacted)
	return out
}

var idShaped = regexp.MustCompile(`[0-9a-fA-F]{32}`)

// RedactIDs removes everything shaped like a lease or job ID from free text
// (an error message about a malformed record may quote a value).
func RedactIDs(s string) string { return idShaped.ReplaceAllString(s, Redacted) }
