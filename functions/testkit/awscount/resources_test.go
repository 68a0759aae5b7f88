package awscount

import (
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

func TestResourcesOfInputs(t *testing.T) {
	c := Named(map[string]string{"MOVIES_TABLE": "t-movies", "FRAMES_TABLE": "t-frames", "MOVIES_BUCKET": "b", "TRACE_QUEUE_URL": "http://q/jobs"})
	for _, tc := range []struct {
		in   any
		want []string
	}{
		{&dynamodb.GetItemInput{TableName: aws.String("t-movies")}, []string{"MOVIES_TABLE"}},
		{&dynamodb.QueryInput{TableName: aws.String("t-movies"), IndexName: aws.String("history")}, []string{"MOVIES_TABLE/index/history"}},
		{&dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
			{ConditionCheck: &ddbtypes.ConditionCheck{TableName: aws.String("t-movies")}},
			{Put: &ddbtypes.Put{TableName: aws.String("t-frames")}},
		}}, []string{"MOVIES_TABLE:ConditionCheck", "FRAMES_TABLE:Put"}},
		{&s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("tracker/m/s/9")}, []string{"MOVIES_BUCKET/tracker/…"}},
		{&s3.ListObjectsV2Input{Bucket: aws.String("b"), Prefix: aws.String("frames/m/")}, []string{"MOVIES_BUCKET?prefix=frames/…"}},
		{&s3.DeleteObjectsInput{Bucket: aws.String("b"), Delete: &s3types.Delete{Objects: []s3types.ObjectIdentifier{{Key: aws.String("frames/m/1.png")}}}},
			[]string{"MOVIES_BUCKET/frames/…"}},
		{&sqs.SendMessageInput{QueueUrl: aws.String("http://q/jobs")}, []string{"TRACE_QUEUE_URL"}},
		{&sqs.SendMessageInput{QueueUrl: aws.String("http://q/other")}, []string{"unnamed:http://q/other"}},
	} {
		if got := c.resources(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%T: %v, want %v", tc.in, got, tc.want)
		}
	}
	for key, want := range map[string]string{"uploads/m1": "uploads/…", "frames/": "frames/", "x": "x"} {
		if got := KeyPattern(key); got != want {
			t.Errorf("KeyPattern(%q) = %q, want %q", key, got, want)
		}
	}
}
