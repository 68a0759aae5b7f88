package queue_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/movietrace/tracinglocks/functions/internal/queue"
)

// TestLambdaMessageIsLambdaShaped: a received message converts to exactly the
// record Lambda's SQS event source delivers.
func TestLambdaMessageIsLambdaShaped(t *testing.T) {
	m := sqstypes.Message{
		MessageId: aws.String("059f36b4-87a3-44ab-83d2-661975830a7d"), ReceiptHandle: aws.String("AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a"),
		Body: aws.String(`{"movieId":"m1"}`), MD5OfBody: aws.String("e4e68fb7bd0e697a0ae8f1bb342846b3"),
		MD5OfMessageAttributes: aws.String("00484c68...59e48f06"),
		Attributes: map[string]string{
			"ApproximateReceiveCount": "1", "SentTimestamp": "1545082649183",
			"SenderId": "AIDAIENQZJOLO23YVJ4VO", "ApproximateFirstReceiveTimestamp": "1545082649185",
		},
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{
			"trace": {DataType: aws.String("String"), StringValue: aws.String("abc")},
		},
	}
	got := queue.LambdaMessage(m, "arn:aws:sqs:us-east-1:123456789012:jobs", "us-east-1")
	const lambdaJSON = `{"Records":[{
	  "messageId":"059f36b4-87a3-44ab-83d2-661975830a7d","receiptHandle":"AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a",
	  "body":"{\"movieId\":\"m1\"}",
	  "attributes":{"ApproximateReceiveCount":"1","SentTimestamp":"1545082649183","SenderId":"AIDAIENQZJOLO23YVJ4VO","ApproximateFirstReceiveTimestamp":"1545082649185"},
	  "messageAttributes":{"trace":{"stringValue":"abc","stringListValues":[],"binaryListValues":[],"dataType":"String"}},
	  "md5OfMessageAttributes":"00484c68...59e48f06",
	  "md5OfBody":"e4e68fb7bd0e697a0ae8f1bb342846b3","eventSource":"aws:sqs",
	  "eventSourceARN":"arn:aws:sqs:us-east-1:123456789012:jobs","awsRegion":"us-east-1"}]}`
	var want events.SQSEvent
	if err := json.Unmarshal([]byte(lambdaJSON), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want.Records[0]) {
		t.Fatalf("got  %+v\nwant %+v", got, want.Records[0])
	}
	// And it survives Lambda's JSON round trip unchanged.
	b, _ := json.Marshal(events.SQSEvent{Records: []events.SQSMessage{got}})
	var back events.SQSEvent
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Records[0], got) {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if empty := queue.LambdaMessage(sqstypes.Message{}, "", ""); empty.Attributes == nil || empty.MessageAttributes == nil {
		t.Fatal("nil maps: Lambda sends {}")
	}
}
