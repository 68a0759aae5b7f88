package lossy_test

import (
	"context"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/functions/local/lossy"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/schema"
)

// TestLosesAnswersAfterTheWriteTookEffect: through the proxy losing every
// write answer, a PutItem fails for its caller (as a 500 or a closed
// connection, with the SDK not retrying) yet DynamoDB Local holds the item;
// reads are never lost; with share 0 nothing is.
func TestLosesAnswersAfterTheWriteTookEffect(t *testing.T) {
	if os.Getenv("DYNAMODB_ENDPOINT") == "" {
		t.Skip("needs DynamoDB Local (run under withemulators)")
	}
	clean := testenv.DynamoDB(t)
	tables := testenv.NewTables(t, clean)
	for _, share := range []float64{1, 0} {
		p, err := lossy.Start(os.Getenv("DYNAMODB_ENDPOINT"), lossy.DynamoDB, share, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Stop() })
		via := testenv.DynamoDB(t, func(o *dynamodb.Options) {
			o.BaseEndpoint = aws.String(p.URL)
			o.RetryMaxAttempts = 1
		})
		ctx := context.Background()
		for i := range 10 {
			id := testenv.UniqueName(t, "lossy")
			_, err := via.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tables.Movies),
				Item: map[string]types.AttributeValue{schema.AttrMovieID: &types.AttributeValueMemberS{Value: id}}})
			if (err == nil) != (share == 0) {
				t.Fatalf("share %v, put %d: %v", share, i, err)
			}
			key := map[string]types.AttributeValue{schema.AttrMovieID: &types.AttributeValueMemberS{Value: id}}
			got, err := via.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tables.Movies), Key: key, ConsistentRead: aws.Bool(true)})
			if err != nil || len(got.Item) == 0 {
				t.Fatalf("share %v: the write did not take effect or the read was lost: %v", share, err)
			}
		}
		c := p.Counts()
		if c.Forwarded["PutItem"] != 10 || c.Forwarded["GetItem"] != 10 || c.Lost["GetItem"] != 0 || c.Lost["PutItem"] != int(share*10) {
			t.Fatalf("share %v: counts %+v", share, c)
		}
	}
}
