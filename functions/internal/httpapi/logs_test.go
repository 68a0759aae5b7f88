package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
)

// A full flow, then: every log line is one JSON access record with the
// agreed fields, and no lease or job ID appears in any log line, nor in any
// response but the one that granted it (a finished or dead job's ID is shown
// as lastJob.jobId; nothing else may carry one).
func TestNoLeaseIDInLogsOrResponses(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			a := newAPI(t, tr)
			id := a.createMovie()
			al, bo := a.alice(), a.bob()
			var secrets []string

			al.open(id).want(201)
			secrets = append(secrets, al.lease)
			bo.open(id).problem(409, domain.CodeLeaseHeld)
			al.heartbeat(id).want(200)
			al.editMarkers(id, markers(httpapi.MarkerView{ID: "m1", X: 0.2, Y: 0.3})).want(200)
			al.editTrim(id, 0, 200).want(200)
			al.editInterval(id, 2).want(200)
			al.editTrim(id, 0, 999).problem(422, domain.CodeInvalid)
			al.do("PUT", "/movies/"+id+"/trim", `{"start":0,"end":10,"leaseId":"`+al.lease+`"}`, al.withLease()).problem(400, httpapi.CodeMalformed)
			al.get(id).want(200)
			al.do("GET", "/movies", nil).want(200)
			al.do("GET", "/movies/"+id+"/frames", nil).want(200)

			var ts httpapi.TraceStarted
			al.trace(id, 0).want(202).decode(&ts)
			secrets = append(secrets, ts.JobID)
			a.runJob(id, []domain.Frame{{Index: 0, Points: []domain.Point{{MarkerID: "m1", X: 0.2, Y: 0.3}}}}, false)
			al.do("GET", "/movies/"+id+"/frames?format=csv", nil).want(200)
			al.get(id).want(200)
			al.editInterval(id, 3).problem(409, domain.CodeTracingInProgress) // a valid, no longer live Lease-Id
			al.heartbeat(id).problem(409, domain.CodeLeaseLost)
			al.release(id).want(204)
			al.beacon(id).want(204)
			bo.open(id).problem(409, domain.CodeTracingInProgress)

			a.clock.Advance(leaseDuration) // the trace stalls
			al.get(id).want(200)
			bo.open(id).want(201)
			secrets = append(secrets, bo.lease)
			bo.trace(id, 0).want(202).decode(&ts)
			secrets = append(secrets, ts.JobID)
			a.runJob(id, nil, true)
			bo.get(id).want(200)
			al.open(id).want(201)
			secrets = append(secrets, al.lease)
			anon := a.anonymous()
			anon.lease = al.lease
			anon.beacon(id).want(204)

			// The log: one JSON line per request, with the agreed fields.
			lines := strings.Split(strings.TrimSpace(a.logs.String()), "\n")
			if len(lines) != len(a.exchanges) {
				t.Fatalf("%d log lines for %d requests", len(lines), len(a.exchanges))
			}
			for i, line := range lines {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("line %d is not JSON: %s", i, line)
				}
				for _, k := range []string{"time", "level", "msg", "requestId", "method", "route", "movieId", "status", "code", "latencyMs", "userId"} {
					if _, ok := rec[k]; !ok {
						t.Fatalf("line %d has no %s: %s", i, k, line)
					}
				}
				ex := a.exchanges[i]
				wantMovie := id
				if ex.path == "/movies" {
					wantMovie = ""
				}
				if rec["msg"] != "request" || rec["method"] != ex.method || rec["movieId"] != wantMovie || int(rec["status"].(float64)) != ex.status {
					t.Fatalf("line %d %s does not describe %s %s -> %d", i, line, ex.method, ex.path, ex.status)
				}
				if !strings.HasPrefix(rec["route"].(string), ex.method+" /movies/{id}") && rec["route"] != "GET /movies" {
					t.Fatalf("line %d route %v for %s %s", i, rec["route"], ex.method, ex.path)
				}
				if want := "INFO"; ex.status < 500 && rec["level"] != want {
					t.Fatalf("line %d: a %d is logged at %v, want %s (refusals are not errors)", i, ex.status, rec["level"], want)
				}
				if ex.header.Get("X-Request-Id") != rec["requestId"] {
					t.Fatalf("line %d requestId %v, response said %q", i, rec["requestId"], ex.header.Get("X-Request-Id"))
				}
				if tr.name == "lambda" && (!strings.HasPrefix(rec["requestId"].(string), "req-") || !strings.HasPrefix(fmt.Sprint(rec["awsRequestId"]), "lambda-")) {
					t.Fatalf("line %d: in Lambda the request IDs come from the event and context: %s", i, line)
				}
			}
			if strings.Contains(a.logs.String(), "Lease-Id") || strings.Contains(a.logs.String(), "lease-id") {
				t.Fatal("the Lease-Id header reached the log")
			}
			for _, s := range secrets {
				if strings.Contains(a.logs.String(), s) {
					t.Fatalf("lease ID %s… in the log", s[:6])
				}
			}

			// The responses: an ID only in the response that granted it.
			granted := 0
			for _, ex := range a.exchanges {
				body := string(ex.body)
				isGrant := (ex.status == 201 && strings.HasSuffix(ex.path, "/analysis-lease")) || ex.status == 202
				var d map[string]any
				if json.Unmarshal(ex.body, &d) == nil {
					if lj, ok := d["lastJob"].(map[string]any); ok {
						delete(lj, "jobId") // a finished or dead job's ID, by design
						b, _ := json.Marshal(d)
						body = string(b)
					}
				}
				for _, s := range secrets {
					inBody := strings.Contains(body, s)
					if inBody && isGrant {
						granted++
						continue
					}
					if inBody {
						t.Errorf("%s %s -> %d carries lease ID %s…: %s", ex.method, ex.path, ex.status, s[:6], body)
					}
					for k, vs := range ex.header {
						if strings.Contains(strings.Join(vs, ","), s) {
							t.Errorf("%s %s -> %d: header %s carries a lease ID", ex.method, ex.path, ex.status, k)
						}
					}
				}
			}
			if granted != len(secrets) {
				t.Fatalf("%d IDs seen in their grants, want %d", granted, len(secrets))
			}
		})
	}
}
