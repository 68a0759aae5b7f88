package stack

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
}

// TestFunctionOperationsAreGranted: every AWS operation a function's code
// sends (functions/<name>/testdata/aws-operations.txt, which that
// function's own test keeps equal to what it observes its handler send
// against the emulators) is authorized by an IAM action its role grants,
// on some resource. The emulators do not check IAM, so without this a
// missing grant shows first in AWS, as AccessDenied: the API once lacked
// PutItem (POST /movies) and DeleteItem and BatchWriteItem (DELETE).
func TestFunctionOperationsAreGranted(t *testing.T) {
	fx := synth(t)
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range Functions {
		path := filepath.Join(root, "functions", fn, "testdata", "aws-operations.txt")
		f, err := os.Open(path)
		if err != nil { // every function has its list and the test that keeps it
			t.Fatal(err)
		}
		var ops []string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
				ops = append(ops, strings.TrimPrefix(line, "presigned "))
			}
		}
		f.Close()
		for _, key := range allStacks() {
			granted := map[string]bool{}
			for g := range grants(t, fx, key, fn) {
				action, _, _ := strings.Cut(g, " on ")
				granted[action] = true
			}
			for _, op := range ops {
				action, known := iamAction[op]
				switch {
				case !known:
					t.Errorf("%s: operation %s has no IAM action in iamAction: add it", fn, op)
				case action != "" && !granted[action]:
					t.Errorf("%s: %s sends %s, but its role does not grant %s", key, fn, op, action)
				}
			}
		}
	}
}
