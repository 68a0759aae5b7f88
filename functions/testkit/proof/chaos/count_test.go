package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/dynamo"
	"github.com/movietrace/tracinglocks/functions/internal/s3store"
	"github.com/movietrace/tracinglocks/functions/testkit/testenv"
	"github.com/movietrace/tracinglocks/schema"
)

// counts are the run's verdicts, read straight from DynamoDB Local and the
// S3 emulator (no proxy in between).
type counts struct {
	ghosts, orphans, atRisk, unsettled, unended int
	// killedTraces: traces the kill stopped, ended by the sweeper with
	// the stalled summary (visibly: not a verdict).
	killedTraces int
	details      []string
}

func (c *counts) note(format string, args ...any) {
	c.details = append(c.details, fmt.Sprintf(format, args...))
}

// rows reads every movie row, whatever its status.
func (r *run) rows() map[string]domain.Movie {
	r.t.Helper()
	store := dynamo.NewMovieStore(testenv.DynamoDB(r.t), r.st.Tables.Movies)
	all, malformed, err := store.List(context.Background())
	if err != nil || len(malformed) > 0 {
		r.t.Fatalf("list: %v (%d malformed)", err, len(malformed))
	}
	out := make(map[string]domain.Movie, len(all))
	for _, m := range all {
		out[m.ID] = m
	}
	return out
}

// frameOwners counts the frame rows per movie ID.
func (r *run) frameOwners() map[string]int {
	r.t.Helper()
	out := map[string]int{}
	p := dynamodb.NewScanPaginator(testenv.DynamoDB(r.t), &dynamodb.ScanInput{TableName: aws.String(r.st.Tables.Frames),
		ProjectionExpression: aws.String("#m"), ExpressionAttributeNames: map[string]string{"#m": schema.AttrMovieID}})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			r.t.Fatal(err)
		}
		for _, it := range page.Items {
			if s, ok := it[schema.AttrMovieID].(*types.AttributeValueMemberS); ok {
				out[s.Value]++
			}
		}
	}
	return out
}

// objectOwner is the movie an object key belongs to: uploads/<id>, or
// <prefix>/<id>/... for everything derived from it.
func objectOwner(key string) string {
	if id, ok := strings.CutPrefix(key, s3store.UploadPrefix); ok {
		return id
	}
	parts := strings.SplitN(key, "/", 3)
	if len(parts) >= 2 {
		return parts[1]
	}
	return key
}

func (r *run) count() counts {
	r.t.Helper()
	ctx := context.Background()
	var c counts
	rows := r.rows()
	for id, m := range rows {
		if !r.live[id] {
			c.ghosts++
			c.note("ghost movie %s (%s)", id, m.Status)
		}
	}
	for id, n := range r.frameOwners() {
		if !r.live[id] {
			c.orphans += n
			c.note("%d frame rows of %s, which does not exist", n, id)
		}
	}
	s3c, bucket := testenv.S3(r.t), r.st.Files.Bucket()
	p := s3.NewListObjectsV2Paginator(s3c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			r.t.Fatal(err)
		}
		for _, o := range page.Contents {
			if id := objectOwner(aws.ToString(o.Key)); !r.live[id] {
				c.orphans++
				c.note("object %s of %s, which does not exist", aws.ToString(o.Key), id)
			}
		}
	}
	for id := range r.live {
		m, ok := rows[id]
		switch {
		case !ok:
			c.unsettled++
			c.note("movie %s is gone", id)
			continue
		case m.Status == domain.StatusAwaitingUpload || m.Status == domain.StatusTracing || m.Status == domain.StatusDeleting,
			m.Status == domain.StatusIngestFailed && m.IngestFailure == "",
			m.Status == domain.StatusFailed && (m.LastJob == nil || m.LastJob.FailureSummary == ""):
			c.unsettled++
			c.note("movie %s ended %s (%q)", id, m.Status, m.IngestFailure)
		}
		if r.traced[id] && (m.LastJob == nil || m.Status == domain.StatusTracing) {
			c.unended++
			c.note("the trace of %s did not end (%s)", id, m.Status)
		}
		if m.Upload != nil && m.Status != domain.StatusAwaitingUpload && m.Status != domain.StatusIngestFailed {
			tags, err := s3c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(bucket), Key: aws.String(s3store.UploadKey(id))})
			if err != nil {
				c.atRisk++
				c.note("the source of %s cannot be read: %v", id, err)
				continue
			}
			for _, tg := range tags.TagSet {
				if aws.ToString(tg.Key)+"="+aws.ToString(tg.Value) == s3store.PendingTag {
					c.atRisk++
					c.note("%s is %s but its source is still tagged pending", id, m.Status)
				}
			}
		}
	}
	statuses, summaries := map[domain.Status]int{}, map[string]int{}
	for id := range r.live {
		m := rows[id]
		statuses[m.Status]++
		if m.Status == domain.StatusFailed && m.LastJob != nil {
			summaries[m.LastJob.FailureSummary]++
		}
	}
	c.note("failed traces' reasons: %v", summaries)
	c.killedTraces = summaries[domain.StalledSummary]
	c.note("final statuses of the %d movies: %v", len(r.live), statuses)
	if m, ok := rows[r.garbage]; !ok || m.Status != domain.StatusIngestFailed {
		c.unsettled++
		c.note("the garbage upload %s ended %s, want ingest_failed", r.garbage, m.Status)
	}
	return c
}

// checkTheCounters plants one ghost row and one orphaned object, checks
// that count sees each, and removes them: the verdicts can fail.
func (r *run) checkTheCounters() {
	r.t.Helper()
	ctx := context.Background()
	const ghost = "chaos-canary"
	m, err := domain.NewMovie(ghost, "Canary", 10, 25, time.Now())
	if err != nil {
		r.t.Fatal(err)
	}
	store := dynamo.NewMovieStore(testenv.DynamoDB(r.t), r.st.Tables.Movies)
	if err := store.Create(ctx, m); err != nil {
		r.t.Fatal(err)
	}
	s3c, bucket, key := testenv.S3(r.t), r.st.Files.Bucket(), s3store.FramesPrefix+ghost+"/0.jpg"
	if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("x")}); err != nil {
		r.t.Fatal(err)
	}
	before := r.count()
	if before.ghosts < 1 || before.orphans < 1 {
		r.t.Fatalf("the counters missed a planted ghost row and object: %+v", before)
	}
	if _, err := testenv.DynamoDB(r.t).DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(r.st.Tables.Movies),
		Key: map[string]types.AttributeValue{schema.AttrMovieID: &types.AttributeValueMemberS{Value: ghost}}}); err != nil {
		r.t.Fatal(err)
	}
	if _, err := s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
		r.t.Fatal(err)
	}
}
