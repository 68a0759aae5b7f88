package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// addOutputs exports what an operator and the tools need: the API URL, the
// table names and the queue URLs.
func (s *Stack) addOutputs() {
	output := func(id, description string, value *string) {
		awscdk.NewCfnOutput(s.Stack, jsii.String(id), &awscdk.CfnOutputProps{Value: value, Description: jsii.String(description)})
	}
	output("ApiUrl", "Base URL of the HTTP API", s.Stage.Url())
	output("MoviesTableName", "Movies table (MOVIES_TABLE)", s.Movies.TableName())
	output("FramesTableName", "Frames table (FRAMES_TABLE)", s.Frames.TableName())
	output("AuditTableName", "Audit table (AUDIT_TABLE)", s.Audit.TableName())
	output("TraceQueueUrl", "Trace-job queue (TRACE_QUEUE_URL)", s.TraceQueue.QueueUrl())
	output("TraceDlqUrl", "Trace-job dead-letter queue", s.TraceDLQ.QueueUrl())
	output("MoviesBucketName", "Movies bucket (MOVIES_BUCKET)", s.MoviesBucket.BucketName())
	output("MovieUploadQueueUrl", "S3 upload notifications -> ingest", s.UploadQueue.QueueUrl())
	output("MovieUploadDlqUrl", "Upload notifications ingest gave up on (docs/operations.md#UploadDlqDepthAlarm)", s.UploadDLQ.QueueUrl())
	output("StreamFailureQueueUrl", "Stream event source on-failure destination", s.StreamFailures.QueueUrl())
}
