package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
)

// TestMalformedRowIsSkippedAndNamed: hand-written movie rows that cannot be
// read as movies (a number stored as text, a lease that is not a map and
// holds a lease ID) sit in DynamoDB Local beside good ones. GET /movies
// lists the good ones (200) and logs each bad one, redacted; the bad
// movie's own routes answer the movie_unreadable problem, not a bare 500.
func TestMalformedRowIsSkippedAndNamed(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			client := testenv.DynamoDB(t)
			tbl := testenv.NewTables(t, client)
			fx := &fixture{client: client, tables: tbl,
				movies: dynamo.NewMovieStore(client, tbl.Movies), frames: dynamo.NewFrameStore(client, tbl.Frames)}
			a := newAPIOn(t, tr, fx)
			good := []string{a.createMovie(), a.createMovie()}
			secret := token.New()
			badCount, badLease := "mv-bad-count-"+token.New()[:8], "mv-bad-lease-"+token.New()[:8]
			for id, broken := range map[string]map[string]types.AttributeValue{
				badCount: {"frameCount": &types.AttributeValueMemberS{Value: "many"}},
				badLease: {"lease": &types.AttributeValueMemberS{Value: "held by " + secret}},
			} {
				item := map[string]types.AttributeValue{
					"movieId": &types.AttributeValueMemberS{Value: id}, "title": &types.AttributeValueMemberS{Value: "Broken " + id},
					"status": &types.AttributeValueMemberS{Value: "ready"}, "frameCount": &types.AttributeValueMemberN{Value: "300"},
					"frameRate": &types.AttributeValueMemberN{Value: "30"}, "version": &types.AttributeValueMemberN{Value: "1"},
				}
				for k, v := range broken {
					item[k] = v
				}
				if _, err := client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &tbl.Movies, Item: item}); err != nil {
					t.Fatal(err)
				}
			}

			al := a.alice()
			var list httpapi.MovieList
			al.do("GET", "/movies", nil).want(200).decode(&list)
			listed := map[string]bool{}
			for _, m := range list.Movies {
				listed[m.ID] = true
			}
			if len(list.Movies) != 2 || !listed[good[0]] || !listed[good[1]] {
				t.Errorf("listed %v, want exactly the two good movies %v", listed, good)
			}
			logs := a.logs.String()
			for _, id := range []string{badCount, badLease} {
				if !strings.Contains(logs, `"msg":"malformed movie row left out of the list"`) || !strings.Contains(logs, `"movieId":"`+id+`"`) {
					t.Errorf("the skipped row %s is not logged:\n%s", id, logs)
				}
				p := al.get(id).problem(500, httpapi.CodeUnreadable)
				if !strings.Contains(p.Detail, "cannot be read") || strings.Contains(p.Detail, "many") || strings.Contains(p.Detail, secret) {
					t.Errorf("detail %q", p.Detail)
				}
				al.do("GET", "/movies/"+id+"/frames", nil)
				al.open(id).problem(500, httpapi.CodeUnreadable)
			}
			for _, m := range good {
				al.get(m).want(200)
			}
			if logs := a.logs.String(); strings.Contains(logs, secret) {
				t.Errorf("a lease ID from a malformed row reached the logs:\n%s", logs)
			}
		})
	}
}
