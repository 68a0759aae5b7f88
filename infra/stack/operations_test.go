package stack

// iamAction is the IAM action that authorizes an SDK operation (empty: the
// operation has no action of its own, e.g. TransactWriteItems, whose items
// are authorized as PutItem, DeleteItem, ConditionCheckItem).
var iamAction = map[string]string{
	"GetItem": "dynamodb:GetItem", "Query": "dynamodb:Query", "Scan": "dynamodb:Scan", "UpdateItem": "dynamodb:UpdateItem",
	"PutItem": "dynamodb:PutItem", "DeleteItem": "dynamodb:DeleteItem", "BatchWriteItem": "dynamodb:BatchWriteItem",
	"BatchGetItem": "dynamodb:BatchGetItem", "TransactWriteItems": "", "TransactGetItems": "",
	"GetObject": "s3:GetObject", "HeadObject": "s3:GetObject", "PutObject": "s3:PutObject", "DeleteObject": "s3:DeleteObject",
	"DeleteObjects": "s3:DeleteObject", "ListObjectsV2": "s3:ListBucket", "PutObjectTagging": "s3:PutObjectTagging",
	"DeleteObjectTagging": "s3:DeleteObjectTagging", "GetObjectTagging": "s3:GetObjectTagging",
	"SendMessage": "sqs:SendMessage", "SendMessageBatch": "sqs:SendMessage", "ReceiveMessage": "sqs:ReceiveMessage",
	"DeleteMessage": "sqs:DeleteMessage", "ChangeMessageVisibility": "sqs:ChangeMessageVisibility",
	"CreateMultipartUpload": "s3:PutObject", "UploadPart": "s3:PutObject", "CompleteMultipartUpload": "s3:PutObject",
	"AbortMultipartUpload": "s3:AbortMultipartUpload", "CopyObject": "s3:PutObject",
}
