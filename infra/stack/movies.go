package stack

import (
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3notifications"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/movietrace/tracinglocks/functions/envvar"
)

// Movie storage: the movies bucket, the upload queue its notifications go
// to, the ingest function that probes each upload, and the ffmpeg layer.
const (
	// Ingest is the ingest function: S3 object created -> SQS -> probe,
	// frame images, ready / ingest_failed.
	Ingest = "ingest"
	// IngestTimeoutSeconds: decoding and writing the frame images of a long
	// movie takes minutes (README: measured for a 1-minute 1080p clip).
	IngestTimeoutSeconds = 15 * 60
	IngestMemoryMB       = 2048
	// UploadPrefix holds the uploaded movies (uploads/<movieId>); only it
	// notifies the ingest. FramesPrefix holds the renditions
	// (frames/<movieId>/chunks/<k>.mp4, package media). TrackerPrefix holds the tracer's
	// checkpoints (tracker/<movieId>/<settings>/<frame>).
	UploadPrefix  = "uploads/"
	FramesPrefix  = "frames/"
	TrackerPrefix = "tracker/"
	// AbortMultipartDays: incomplete multipart uploads are aborted (their
	// parts deleted) after this many days.
	AbortMultipartDays = 1
	// PendingUploadExpiryDays: an uploaded object still tagged
	// upload=pending (the ingest removes the tag when the movie is ready)
	// is deleted after this many days: an upload whose movie never became
	// ready, expired or was deleted cannot stay behind.
	PendingUploadExpiryDays = 3
	// PendingTagKey / PendingTagValue is the tag every presigned upload
	// carries (the API signs x-amz-tagging).
	PendingTagKey   = "upload"
	PendingTagValue = "pending"

	// FFmpegLayerDir is the layer asset under AssetRoot, with bin/ffmpeg and
	// bin/ffprobe (linux-arm64 static builds from npm; `make layer`).
	FFmpegLayerDir = "ffmpeg-layer"
	// In Lambda a layer is extracted under /opt.
	LayerFFmpeg  = "/opt/bin/ffmpeg"
	LayerFFprobe = "/opt/bin/ffprobe"
)

// addMovieStorage creates the bucket, the upload queue and its DLQ, the
// ingest function with the ffmpeg layer, the S3 -> SQS notification and the
// SQS -> ingest event source, and grants the API (presigned uploads, frame
// images, deletion) and the worker (reading the movie it traces, with the
// same layer) what they use of the bucket.
func (s *Stack) addMovieStorage() {
	s.MovieAccessLogs = awss3.NewBucket(s.Stack, jsii.String("MovieAccessLogs"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_PREFERRED,
		RemovalPolicy:     s.removal,
		AutoDeleteObjects: jsii.Bool(!s.cfg.Retain()),
		LifecycleRules:    &[]*awss3.LifecycleRule{{Id: jsii.String("expire-access-logs"), Expiration: awscdk.Duration_Days(jsii.Number(90))}},
	})
	cdknag.NagSuppressions_AddResourceSuppressions(s.MovieAccessLogs, &[]*cdknag.NagPackSuppression{{
		Id:     jsii.String("AwsSolutions-S1"),
		Reason: jsii.String("This is the server access log bucket of the movies bucket; logging it into itself would loop."),
	}}, jsii.Bool(false))

	s.MoviesBucket = awss3.NewBucket(s.Stack, jsii.String("MoviesBucket"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		Versioned:         jsii.Bool(false),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		RemovalPolicy:     s.removal,
		// A destroy environment (dev) empties its buckets on cdk destroy,
		// which otherwise fails on a non-empty bucket; retain keeps them.
		AutoDeleteObjects:      jsii.Bool(!s.cfg.Retain()),
		ServerAccessLogsBucket: s.MovieAccessLogs,
		ServerAccessLogsPrefix: jsii.String("movies/"),
		LifecycleRules: &[]*awss3.LifecycleRule{
			{Id: jsii.String("abort-incomplete-multipart-uploads"),
				AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(AbortMultipartDays))},
			{Id: jsii.String("expire-abandoned-uploads"), Prefix: jsii.String(UploadPrefix),
				TagFilters: &map[string]interface{}{PendingTagKey: PendingTagValue},
				Expiration: awscdk.Duration_Days(jsii.Number(PendingUploadExpiryDays))},
		},
	})
	// Browsers PUT the movie and GET frame images straight from S3: from
	// the distribution's origin (addWeb) and from corsOrigin when set.
	if s.cfg.CORSOrigin != "" {
		s.MoviesBucket.AddCorsRule(movieCORSRule(jsii.String(s.cfg.CORSOrigin)))
	}

	s.UploadDLQ = s.queue("MovieUploadDLQ", &awssqs.QueueProps{RetentionPeriod: awscdk.Duration_Days(jsii.Number(14))})
	s.UploadQueue = s.queue("MovieUploadQueue", &awssqs.QueueProps{
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(QueueVisibilityFactor * IngestTimeoutSeconds)),
		RetentionPeriod:   awscdk.Duration_Days(jsii.Number(4)),
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: s.UploadDLQ, MaxReceiveCount: jsii.Number(DLQMaxReceiveCount)},
	})
	s.MoviesBucket.AddEventNotification(awss3.EventType_OBJECT_CREATED, awss3notifications.NewSqsDestination(s.UploadQueue),
		&awss3.NotificationKeyFilter{Prefix: jsii.String(UploadPrefix)})

	s.FFmpegLayer = awslambda.NewLayerVersion(s.Stack, jsii.String("FFmpegLayer"), &awslambda.LayerVersionProps{
		Code:                    awslambda.Code_FromAsset(jsii.String(filepath.Join(s.assetRoot, FFmpegLayerDir)), nil),
		CompatibleArchitectures: &[]awslambda.Architecture{awslambda.Architecture_ARM_64()},
		CompatibleRuntimes:      &[]awslambda.Runtime{awslambda.Runtime_PROVIDED_AL2023()},
		Description:             jsii.String("Static ffmpeg and ffprobe for linux-arm64 (npm @ffmpeg-installer/linux-arm64, @ffprobe-installer/linux-arm64)"),
		License:                 jsii.String("GPL-3.0-or-later"),
		RemovalPolicy:           s.removal,
	})

	bucket := s.MoviesBucket.BucketName()
	ingestRole := s.function(Ingest, "Movie uploads: probe with ffprobe, write frame images, ready or ingest_failed",
		IngestTimeoutSeconds, IngestMemoryMB, map[string]*string{
			envvar.MoviesTable:  s.Movies.TableName(),
			envvar.MoviesBucket: bucket,
			envvar.FFmpeg:       jsii.String(LayerFFmpeg),
			envvar.FFprobe:      jsii.String(LayerFFprobe),
			// Each range of a long movie continues in a new invocation
			// through the upload queue (wiring.IngestContinuation).
			envvar.UploadQueueURL: s.UploadQueue.QueueUrl(),
		})
	ingest := s.Functions[Ingest]
	ingest.AddLayers(s.FFmpegLayer)
	uploads := s.MoviesBucket.ArnForObjects(jsii.String(UploadPrefix + "*"))
	frames := s.MoviesBucket.ArnForObjects(jsii.String(FramesPrefix + "*"))
	checkpoints := s.MoviesBucket.ArnForObjects(jsii.String(TrackerPrefix + "*"))
	allow(ingestRole, "MoviesIngest", []*string{s.Movies.TableArn()}, "dynamodb:GetItem", "dynamodb:UpdateItem")
	allow(ingestRole, "ReadUploads", []*string{uploads}, "s3:GetObject", "s3:DeleteObject", "s3:DeleteObjectTagging")
	// It writes the chunks and its decision record (media.DecisionKey),
	// reads the record in later ranges, and reads the last chunk back when
	// the range that ends the movie stored none (the rendition's size).
	allow(ingestRole, "WriteFrames", []*string{frames}, "s3:PutObject", "s3:DeleteObject", "s3:GetObject")
	allow(ingestRole, "ContinueIngest", []*string{s.UploadQueue.QueueArn()}, "sqs:SendMessage")
	allow(ingestRole, "ListMovieObjects", []*string{s.MoviesBucket.BucketArn()}, "s3:ListBucket")
	ingest.AddEventSource(awslambdaeventsources.NewSqsEventSource(s.UploadQueue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(1),
		ReportBatchItemFailures: jsii.Bool(true),
	}))

	// The API presigns uploads (PutObject with the pending tag) and
	// redirects to frame images (ListBucket: a missing one is a 404, not a
	// 403). It deletes nothing: the sweeper finishes deletions (purge).
	apiRole := s.Roles[API]
	allow(apiRole, "PresignUploads", []*string{uploads}, "s3:PutObject", "s3:PutObjectTagging")
	allow(apiRole, "FrameImages", []*string{frames}, "s3:GetObject")
	allow(apiRole, "ListMovieObjects", []*string{s.MoviesBucket.BucketArn()}, "s3:ListBucket")
	s.Functions[API].AddEnvironment(jsii.String(envvar.MoviesBucket), bucket, nil)
	// It decodes a frame's image from the movie's rendition (package media).
	s.Functions[API].AddLayers(s.FFmpegLayer)
	s.Functions[API].AddEnvironment(jsii.String(envvar.FFmpeg), jsii.String(LayerFFmpeg), nil)
	s.Functions[API].AddEnvironment(jsii.String(envvar.FFprobe), jsii.String(LayerFFprobe), nil)

	// The tracer reads a movie's rendition (package media: the chunks the
	// page's images come from), never its upload.
	workerRole := s.Roles[Worker]
	allow(workerRole, "ReadRenditions", []*string{frames}, "s3:GetObject")
	// Its checkpoints, so a trace split across invocations continues exactly.
	allow(workerRole, "TrackerCheckpoints", []*string{checkpoints}, "s3:GetObject", "s3:PutObject")
	// A segment that starts where no checkpoint was saved (the first of a
	// trace, a retrace after a new trim start) reads a missing key: S3
	// answers 404 only to a caller allowed s3:ListBucket, 403 otherwise,
	// which the tracer cannot tell from a real denial. Listing is limited to
	// the checkpoints' prefix when a prefix is given; the 404 decision of a
	// GetObject carries no s3:prefix, hence IfExists.
	workerRole.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("CheckpointsMissingIs404"), Actions: jsii.Strings("s3:ListBucket"),
		Resources:  &[]*string{s.MoviesBucket.BucketArn()},
		Conditions: &map[string]interface{}{"StringLikeIfExists": map[string]interface{}{"s3:prefix": []string{TrackerPrefix + "*"}}},
	}))
	// The sweeper expires uploads that never arrived and deletes a late file
	// (wiring.Sweeper gives the expiry only the upload object to delete;
	// functions/sweeper's TestSweeperOperationsAreListed).
	allow(s.Roles[Sweeper], "ExpireUploads", []*string{uploads}, "s3:DeleteObject")
	// It also finishes deletions (purge.Finisher): every object under a
	// deleting movie's prefixes, whatever the prefix, so it lists the bucket
	// and deletes under any prefix.
	allow(s.Roles[Sweeper], "PurgeMovieObjects", []*string{s.MoviesBucket.ArnForObjects(jsii.String("*"))}, "s3:DeleteObject")
	allow(s.Roles[Sweeper], "ListMovieObjects", []*string{s.MoviesBucket.BucketArn()}, "s3:ListBucket")
	s.Functions[Sweeper].AddEnvironment(jsii.String(envvar.MoviesBucket), bucket, nil)
	worker := s.Functions[Worker]
	worker.AddLayers(s.FFmpegLayer)
	worker.AddEnvironment(jsii.String(envvar.MoviesBucket), bucket, nil)
	worker.AddEnvironment(jsii.String(envvar.FFmpeg), jsii.String(LayerFFmpeg), nil)
	worker.AddEnvironment(jsii.String(envvar.FFprobe), jsii.String(LayerFFprobe), nil)

	arn := "Resource::<" + *s.Stack.GetLogicalId(s.MoviesBucket.Node().DefaultChild().(awss3.CfnBucket)) + ".Arn>/"
	for _, role := range []string{Ingest, API} {
		cdknag.NagSuppressions_AddResourceSuppressions(s.Roles[role], &[]*cdknag.NagPackSuppression{{
			Id: jsii.String("AwsSolutions-IAM5"),
			Reason: jsii.String("Object actions are scoped to the movies bucket's uploads/*, frames/* and tracker/* prefixes; " +
				"object ARNs under a prefix can only be named with a wildcard."),
			AppliesTo: &[]interface{}{
				jsii.String(arn + UploadPrefix + "*"), jsii.String(arn + FramesPrefix + "*"), jsii.String(arn + TrackerPrefix + "*"),
			},
		}}, jsii.Bool(true))
	}
	cdknag.NagSuppressions_AddResourceSuppressions(workerRole, &[]*cdknag.NagPackSuppression{{
		Id:        jsii.String("AwsSolutions-IAM5"),
		Reason:    jsii.String("The worker reads only the movies' renditions under frames/* and its own checkpoints under tracker/*; prefixes need a wildcard."),
		AppliesTo: &[]interface{}{jsii.String(arn + FramesPrefix + "*"), jsii.String(arn + TrackerPrefix + "*")},
	}}, jsii.Bool(true))
	cdknag.NagSuppressions_AddResourceSuppressions(s.Roles[Sweeper], &[]*cdknag.NagPackSuppression{{
		Id:        jsii.String("AwsSolutions-IAM5"),
		Reason:    jsii.String("The sweeper deletes late files of expired uploads under uploads/* and every object of a deleted movie under any prefix (a movie's objects are found by listing); prefixes need a wildcard."),
		AppliesTo: &[]interface{}{jsii.String(arn + UploadPrefix + "*"), jsii.String(arn + "*")},
	}}, jsii.Bool(true))
	// The bucket notification is set by CDK's own custom resource (a
	// singleton Lambda with a managed basic-execution policy and
	// s3:PutBucketNotification on *).
	cdknag.NagSuppressions_AddResourceSuppressionsByPath(s.Stack,
		jsii.String("/"+*s.Stack.StackName()+"/BucketNotificationsHandler050a0587b7544547bf325f094a3db834/Role/Resource"),
		&[]*cdknag.NagPackSuppression{
			{Id: jsii.String("AwsSolutions-IAM4"), Reason: jsii.String("CDK's own bucket-notifications custom resource uses the AWS managed basic execution policy; it only writes its logs.")},
			{Id: jsii.String("AwsSolutions-IAM5"), Reason: jsii.String("CDK's own bucket-notifications custom resource needs s3:PutBucketNotification, which it is granted on * by CDK itself.")},
		}, jsii.Bool(true))
}
