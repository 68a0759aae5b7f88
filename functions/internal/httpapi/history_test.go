package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/schema"
)

// TestHistory: a movie's audit items come back newest first, in pages
// linked by an opaque cursor, with who (as a name, and whether it was the
// caller), when, the settings and the traced range, and the safe summary of
// a failure; never a job ID or a user ID. An unknown movie is a 404.
func TestHistory(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			a := newAPI(t, tr)
			id := a.createMovie()
			job1, job2 := "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
			put := func(e events.Event) {
				e.MovieID = id
				item, err := schema.MarshalAuditItem(e)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := a.fx.client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &a.fx.tables.Audit, Item: item}); err != nil {
					t.Fatal(err)
				}
			}
			trace := func(e events.Event) events.Event {
				e.TrimStart, e.TrimEnd, e.CaptureInterval = 0, 300, 2
				return e
			}
			put(trace(events.Event{Type: events.TracingStarted, JobID: job1, UserID: alice[0], UserName: alice[1], At: t0, FromFrame: 10, Version: 3}))
			put(trace(events.Event{Type: events.TracingFailed, JobID: job1, UserID: alice[0], UserName: alice[1], At: t0.Add(time.Minute),
				FromFrame: 10, Version: 6, Summary: "The tracer failed at frame 60 at /home/x/main.go:12", Frames: 24, FirstFrame: 0, LastFrame: 46}))
			put(trace(events.Event{Type: events.TracingStarted, JobID: job2, UserID: bob[0], UserName: bob[1], At: t0.Add(2 * time.Minute), Version: 9}))
			put(trace(events.Event{Type: events.TracingCompleted, JobID: job2, UserID: bob[0], UserName: bob[1], At: t0.Add(3 * time.Minute),
				Version: 12, Frames: 150, FirstFrame: 0, LastFrame: 298}))

			var all []httpapi.HistoryEvent
			path := "/movies/" + id + "/history?limit=3"
			pages := 0
			for {
				r := a.alice().do("GET", path, nil).want(200)
				for _, leak := range []string{job1, job2, alice[0], bob[0], "/home"} {
					if strings.Contains(string(r.body), leak) {
						t.Fatalf("the history shows %q: %s", leak, r.body)
					}
				}
				var p httpapi.HistoryPage
				r.decode(&p)
				all = append(all, p.Events...)
				pages++
				if p.Next == nil {
					break
				}
				path = "/movies/" + id + "/history?limit=3&cursor=" + *p.Next
			}
			if pages != 2 || len(all) != 4 {
				t.Fatalf("%d events in %d pages, want 4 in 2: %+v", len(all), pages, all)
			}
			wantTypes := []string{"completed", "started", "failed", "started"}
			for i, e := range all {
				if e.Type != wantTypes[i] {
					t.Fatalf("event %d is %q, want %q (newest first): %+v", i, e.Type, wantTypes[i], all)
				}
				if e.Settings == nil || e.Settings.Trim != (httpapi.TrimView{Start: 0, End: 300}) || e.Settings.CaptureInterval != 2 {
					t.Errorf("event %d settings %+v", i, e.Settings)
				}
			}
			failed := all[2]
			if !failed.Yours || failed.UserName != alice[1] || failed.At != "2026-12-02T12:01:00.000Z" || failed.FromFrame != 10 ||
				failed.Frames == nil || *failed.Frames != 24 || failed.FirstFrame == nil || *failed.FirstFrame != 0 || *failed.LastFrame != 46 ||
				!strings.HasPrefix(failed.Summary, "The tracer failed at frame 60") {
				t.Errorf("the failed event as Alice sees it: %+v", failed)
			}
			if all[0].Yours || all[0].UserName != bob[1] || all[1].Frames != nil {
				t.Errorf("Bob's events as Alice sees them: %+v %+v", all[0], all[1])
			}
			a.alice().get("no-such-movie/history").problem(404, domain.CodeNotFound)
			a.anonymous().get(id + "/history").want(401)
		})
	}
}
