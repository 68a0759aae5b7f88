package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"testing"

	"github.com/movietrace/tracinglocks/functions/envvar"
)

// The movies bucket: private, encrypted, TLS-only, unversioned, with the
// two lifecycle rules for abandoned uploads.
func TestMoviesBucket(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st, tpl := fx.stacks[key], fx.templates[key]
		hasProps(t, tpl, "AWS::S3::Bucket", map[string]any{
			"PublicAccessBlockConfiguration": map[string]any{
				"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true,
			},
			"BucketEncryption": map[string]any{"ServerSideEncryptionConfiguration": arrEq(map[string]any{
				"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"},
			})},
			"VersioningConfiguration": absent(),
			"LoggingConfiguration":    obj(map[string]any{"DestinationBucketName": ref(st, st.MovieAccessLogs)}),
			"LifecycleConfiguration": map[string]any{"Rules": arrEq(
				map[string]any{"Id": "abort-incomplete-multipart-uploads", "Status": "Enabled",
					"AbortIncompleteMultipartUpload": map[string]any{"DaysAfterInitiation": AbortMultipartDays}},
				map[string]any{"Id": "expire-abandoned-uploads", "Status": "Enabled", "Prefix": UploadPrefix,
					"TagFilters":       arrEq(map[string]any{"Key": PendingTagKey, "Value": PendingTagValue}),
					"ExpirationInDays": PendingUploadExpiryDays},
			)},
		})
		// TLS only: a Deny on aws:SecureTransport false.
		hasProps(t, tpl, "AWS::S3::BucketPolicy", map[string]any{
			"Bucket": ref(st, st.MoviesBucket),
			"PolicyDocument": obj(map[string]any{"Statement": arr(obj(map[string]any{
				"Effect": "Deny", "Action": "s3:*",
				"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
			}))}),
		})
	}
}

// S3 -> SQS -> ingest: object-created events under uploads/ only, to the
// upload queue (encrypted, TLS-only, with a DLQ), consumed one at a time
// with partial batch responses.
func TestUploadNotificationToIngest(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st, tpl := fx.stacks[key], fx.templates[key]
		hasProps(t, tpl, "Custom::S3BucketNotifications", map[string]any{
			"BucketName": ref(st, st.MoviesBucket),
			"NotificationConfiguration": map[string]any{"QueueConfigurations": arrEq(map[string]any{
				"Events":   arrEq("s3:ObjectCreated:*"),
				"QueueArn": getAtt(st, st.UploadQueue, "Arn"),
				"Filter": map[string]any{"Key": map[string]any{"FilterRules": arrEq(
					map[string]any{"Name": "prefix", "Value": UploadPrefix})}},
			})},
		})
		hasProps(t, tpl, "AWS::SQS::Queue", map[string]any{
			"SqsManagedSseEnabled": true,
			"VisibilityTimeout":    QueueVisibilityFactor * IngestTimeoutSeconds,
			"RedrivePolicy": map[string]any{"deadLetterTargetArn": getAtt(st, st.UploadDLQ, "Arn"),
				"maxReceiveCount": DLQMaxReceiveCount},
		})
		// S3 may send to the queue (and only for this bucket).
		hasProps(t, tpl, "AWS::SQS::QueuePolicy", map[string]any{
			"PolicyDocument": obj(map[string]any{"Statement": arr(obj(map[string]any{
				"Effect": "Allow", "Principal": map[string]any{"Service": "s3.amazonaws.com"},
				"Condition": map[string]any{"ArnLike": map[string]any{"aws:SourceArn": getAtt(st, st.MoviesBucket, "Arn")}},
			}))}),
		})
		hasProps(t, tpl, "AWS::Lambda::EventSourceMapping", map[string]any{
			"EventSourceArn":        getAtt(st, st.UploadQueue, "Arn"),
			"FunctionName":          ref(st, st.Functions[Ingest]),
			"BatchSize":             1,
			"FunctionResponseTypes": arrEq("ReportBatchItemFailures"),
		})
		p := props(functionResource(t, fx, key, Ingest))
		if p["Timeout"] != float64(IngestTimeoutSeconds) || p["MemorySize"] != float64(IngestMemoryMB) {
			t.Errorf("%s: ingest timeout %v memory %v", key, p["Timeout"], p["MemorySize"])
		}
	}
}

// The ffmpeg layer: an arm64 asset (build/ffmpeg-layer, `make layer`) on
// the ingest and the worker, which find the binaries through FFMPEG and
// FFPROBE under /opt.
func TestFFmpegLayer(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st, tpl := fx.stacks[key], fx.templates[key]
		// The ffmpeg layer, and the AWS CLI layer of CDK's BucketDeployment (web.go).
		check(t, "two layers", func() { tpl.ResourceCountIs(strp("AWS::Lambda::LayerVersion"), num(2)) })
		hasProps(t, tpl, "AWS::Lambda::LayerVersion", map[string]any{
			"CompatibleArchitectures": arrEq("arm64"),
			"CompatibleRuntimes":      arrEq("provided.al2023"),
			"Content":                 obj(map[string]any{"S3Key": assertions.Match_StringLikeRegexp(strp(`\.zip$`))}),
		})
		layer := map[string]any{"Ref": logicalID(st, st.FFmpegLayer)}
		// The API decodes frame images from the movie's chunks (functions/internal/media), so it has the layer too.
		for _, name := range []string{Ingest, Worker, API} {
			p := props(functionResource(t, fx, key, name))
			layers, _ := p["Layers"].([]any)
			if len(layers) != 1 || !equalJSON(layers[0], layer) {
				t.Errorf("%s/%s: layers %v, want [%v]", key, name, layers, layer)
			}
			vars := p["Environment"].(map[string]any)["Variables"].(map[string]any)
			if vars[envvar.FFmpeg] != LayerFFmpeg || vars[envvar.FFprobe] != LayerFFprobe {
				t.Errorf("%s/%s: FFMPEG %v FFPROBE %v", key, name, vars[envvar.FFmpeg], vars[envvar.FFprobe])
			}
		}
		for _, name := range []string{StreamProcessor, Sweeper} {
			if _, has := props(functionResource(t, fx, key, name))["Layers"]; has {
				t.Errorf("%s/%s: a layer it does not use", key, name)
			}
		}
	}
}

func strp(s string) *string   { return &s }
func num(f float64) *float64  { return &f }
func equalJSON(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }
