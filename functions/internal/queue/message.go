package queue

import (
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// LambdaMessage converts a message received with the SQS API (ReceiveMessage
// with every system and message attribute) into the record Lambda's SQS
// event source delivers, so that tests and the local stack hand the handler
// real events.SQSEvent payloads.
func LambdaMessage(m sqstypes.Message, queueARN, region string) events.SQSMessage {
	out := events.SQSMessage{
		MessageId:              aws.ToString(m.MessageId),
		ReceiptHandle:          aws.ToString(m.ReceiptHandle),
		Body:                   aws.ToString(m.Body),
		Md5OfBody:              aws.ToString(m.MD5OfBody),
		Md5OfMessageAttributes: aws.ToString(m.MD5OfMessageAttributes),
		Attributes:             make(map[string]string, len(m.Attributes)),
		MessageAttributes:      make(map[string]events.SQSMessageAttribute, len(m.MessageAttributes)),
		EventSourceARN:         queueARN,
		EventSource:            "aws:sqs",
		AWSRegion:              region,
	}
	for k, v := range m.Attributes {
		out.Attributes[k] = v
	}
	for k, v := range m.MessageAttributes {
		a := events.SQSMessageAttribute{
			StringValue: v.StringValue, BinaryValue: v.BinaryValue, DataType: aws.ToString(v.DataType),
			StringListValues: v.StringListValues, BinaryListValues: v.BinaryListValues,
		}
		// Lambda sends empty lists, never null.
		if a.StringListValues == nil {
			a.StringListValues = []string{}
		}
		if a.BinaryListValues == nil {
			a.BinaryListValues = [][]byte{}
		}
		out.MessageAttributes[k] = a
	}
	return out
}
