package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
)

// garbage is one malformed or invalid request: the problem it must get, and
// the field that problem must name.
type garbage struct {
	name   string
	method string
	path   string // after /movies/{id}
	body   string
	opts   []reqOpt // besides the browser's own Lease-Id
	noCT   bool     // send no Content-Type
	status int
	code   domain.Code
	field  string
}

// calib is a calibration body from its members; okLine a valid line.
func calib(members string) string { return "{" + members + "}" }

const okLine = `{"x1":0.25,"y1":0.5,"x2":0.75,"y2":0.5}`

func markerBody(items ...string) string { return `{"markers":[` + strings.Join(items, ",") + `]}` }

var garbageCases = func() []garbage {
	const m, tr, ci, tc, rel, cal = "/markers", "/trim", "/capture-interval", "/traces", "/analysis-lease/release", "/calibration"
	bad400 := func(name, method, path, body, field string) garbage {
		return garbage{name: name, method: method, path: path, body: body, status: 400, code: httpapi.CodeMalformed, field: field}
	}
	bad422 := func(name, method, path, body, field string) garbage {
		return garbage{name: name, method: method, path: path, body: body, status: 422, code: domain.CodeInvalid, field: field}
	}
	many := make([]string, domain.MaxMarkers+1)
	for i := range many {
		many[i] = fmt.Sprintf(`{"id":"m%d","x":0,"y":0}`, i)
	}
	return []garbage{
		// markers
		bad400("markers: JSON cut short", "PUT", m, `{"markers": [`, "markers"),
		bad400("markers: not JSON", "PUT", m, `markers=1`, "body"),
		bad400("markers: empty body", "PUT", m, ``, "body"),
		bad400("markers: an array, not an object", "PUT", m, `[]`, "body"),
		bad422("markers: missing", "PUT", m, `{}`, "markers"),
		bad400("markers: null", "PUT", m, `{"markers": null}`, "markers"),
		bad400("markers: an object", "PUT", m, `{"markers": {}}`, "markers"),
		bad400("markers: item not an object", "PUT", m, markerBody(`1`), "markers[0]"),
		bad400("markers: x a string", "PUT", m, markerBody(`{"id":"a","x":"0.5","y":0}`), "markers[0].x"),
		bad400("markers: y null", "PUT", m, markerBody(`{"id":"a","x":0.5,"y":null}`), "markers[0].y"),
		bad400("markers: id a number", "PUT", m, markerBody(`{"id":7,"x":0.5,"y":0}`), "markers[0].id"),
		bad400("markers: unknown field in item", "PUT", m, markerBody(`{"id":"a","x":0.5,"y":0,"z":1}`), "markers[0].z"),
		bad400("markers: unknown top-level field", "PUT", m, `{"markers":[],"extra":1}`, "extra"),
		bad400("markers: duplicate field", "PUT", m, `{"markers":[],"markers":[]}`, "markers"),
		bad400("markers: trailing data", "PUT", m, `{"markers":[]} {}`, "body"),
		bad400("markers: number too big", "PUT", m, markerBody(`{"id":"a","x":1e400,"y":0}`), "markers[0].x"),
		bad400("markers: invalid UTF-8 label", "PUT", m, markerBody("{\"id\":\"a\",\"label\":\"\xff\",\"x\":0,\"y\":0}"), "markers[0].label"),
		bad422("markers: y missing", "PUT", m, markerBody(`{"id":"a","x":0.5}`), "markers[0].y"),
		bad422("markers: x below 0", "PUT", m, markerBody(`{"id":"a","x":-0.1,"y":0}`), "markers[0].x"),
		bad422("markers: y above 1", "PUT", m, markerBody(`{"id":"a","x":0,"y":1.0001}`), "markers[0].y"),
		bad422("markers: bad id", "PUT", m, markerBody(`{"id":"a b","x":0.5,"y":0}`), "markers[0].id"),
		bad422("markers: empty id", "PUT", m, markerBody(`{"id":"","x":0.5,"y":0}`), "markers[0].id"),
		bad422("markers: duplicate id", "PUT", m, markerBody(`{"id":"a","x":0,"y":0}`, `{"id":"a","x":1,"y":1}`), "markers[1].id"),
		bad422("markers: label too long", "PUT", m, markerBody(`{"id":"a","label":"`+strings.Repeat("x", 65)+`","x":0,"y":0}`), "markers[0].label"),
		bad422("markers: control character in label", "PUT", m, markerBody(`{"id":"a","label":"bell\u0007","x":0,"y":0}`), "markers[0].label"),
		bad422("markers: too many", "PUT", m, markerBody(many...), "markers"),
		// The bound is reported before the item beyond it is read (issue 21,
		// mutant httpapi-array-max): here that item is also a duplicate.
		bad422("markers: too many, the extra one malformed", "PUT", m,
			markerBody(append(many[:domain.MaxMarkers:domain.MaxMarkers], `{"id":"m0","x":0,"y":0}`)...), "markers"),
		// trim
		bad400("trim: start a string", "PUT", tr, `{"start":"0","end":10}`, "start"),
		bad400("trim: start a fraction", "PUT", tr, `{"start":0.5,"end":10}`, "start"),
		bad400("trim: end an exponent", "PUT", tr, `{"start":0,"end":1e2}`, "end"),
		bad400("trim: end overflows", "PUT", tr, `{"start":0,"end":99999999999999999999}`, "end"),
		bad400("trim: unknown field", "PUT", tr, `{"start":0,"end":10,"step":1}`, "step"),
		bad422("trim: end missing", "PUT", tr, `{"start":0}`, "end"),
		bad422("trim: negative start", "PUT", tr, `{"start":-1,"end":10}`, "trim"),
		bad422("trim: empty range", "PUT", tr, `{"start":10,"end":10}`, "trim"),
		bad422("trim: past the movie", "PUT", tr, `{"start":0,"end":301}`, "trim.end"),
		// capture interval
		bad400("interval: fraction", "PUT", ci, `{"captureInterval":2.5}`, "captureInterval"),
		bad400("interval: boolean", "PUT", ci, `{"captureInterval":true}`, "captureInterval"),
		bad400("interval: wrong name", "PUT", ci, `{"interval":2}`, "interval"),
		bad422("interval: missing", "PUT", ci, `{}`, "captureInterval"),
		bad422("interval: zero", "PUT", ci, `{"captureInterval":0}`, "captureInterval"),
		bad422("interval: negative", "PUT", ci, `{"captureInterval":-3}`, "captureInterval"),
		// traces
		bad400("trace: fromFrame a string", "POST", tc, `{"fromFrame":"0"}`, "fromFrame"),
		bad400("trace: unknown field", "POST", tc, `{"fromFrame":0,"toFrame":3}`, "toFrame"),
		bad400("trace: not an object", "POST", tc, `"go"`, "body"),
		bad422("trace: fromFrame missing", "POST", tc, `{}`, "fromFrame"),
		bad422("trace: fromFrame negative", "POST", tc, `{"fromFrame":-1}`, "fromFrame"),
		bad422("trace: fromFrame past the trim", "POST", tc, `{"fromFrame":300}`, "fromFrame"),
		// key frames (corrections)
		bad400("keys: not JSON", "PUT", "/keys", `frame=3`, "body"),
		bad400("keys: an array", "PUT", "/keys", `[]`, "body"),
		bad422("keys: marker missing", "PUT", "/keys", `{"frame":0,"x":0.5,"y":0.5}`, "markerId"),
		bad422("keys: frame missing", "PUT", "/keys", `{"markerId":"m1","x":0.5,"y":0.5}`, "frame"),
		bad400("keys: frame a fraction", "PUT", "/keys", `{"markerId":"m1","frame":1.5,"x":0.5,"y":0.5}`, "frame"),
		bad400("keys: x a string", "PUT", "/keys", `{"markerId":"m1","frame":0,"x":"0.5","y":0.5}`, "x"),
		bad400("keys: unknown field", "PUT", "/keys", `{"markerId":"m1","frame":0,"x":0.5,"y":0.5,"z":1}`, "z"),
		bad400("keys: duplicate field", "PUT", "/keys", `{"markerId":"m1","frame":0,"frame":1,"x":0.5,"y":0.5}`, "frame"),
		bad422("keys: x above 1", "PUT", "/keys", `{"markerId":"m1","frame":0,"x":1.5,"y":0.5}`, "x"),
		bad422("keys: negative frame", "PUT", "/keys", `{"markerId":"m1","frame":-1,"x":0.5,"y":0.5}`, "frame"),
		bad422("keys: a marker ID with a slash", "PUT", "/keys", `{"markerId":"a/b","frame":0,"x":0.5,"y":0.5}`, "markerId"),
		bad422("keys: an unknown marker", "PUT", "/keys", `{"markerId":"nobody","frame":0,"x":0.5,"y":0.5}`, "markerId"),
		bad422("keys: a frame beyond the trim", "PUT", "/keys", `{"markerId":"m1","frame":100000,"x":0.5,"y":0.5}`, "frame"),
		// calibration
		bad400("calibration: not JSON", "PUT", cal, `line=1`, "body"),
		bad400("calibration: line not an object", "PUT", cal, `{"line":[0,0,1,1],"length":1,"unit":"m","origin":{"x":0,"y":0}}`, "line"),
		bad400("calibration: length a string", "PUT", cal, calib(`"line":`+okLine+`,"length":"2","unit":"m","origin":{"x":0.5,"y":0.5}`), "length"),
		bad400("calibration: length NaN", "PUT", cal, calib(`"line":`+okLine+`,"length":NaN,"unit":"m","origin":{"x":0.5,"y":0.5}`), "length"),
		bad400("calibration: length overflows", "PUT", cal, calib(`"line":`+okLine+`,"length":1e400,"unit":"m","origin":{"x":0.5,"y":0.5}`), "length"),
		bad400("calibration: yUp a string", "PUT", cal, calib(`"line":`+okLine+`,"length":2,"unit":"m","origin":{"x":0.5,"y":0.5},"yUp":"yes"`), "yUp"),
		bad400("calibration: unknown field", "PUT", cal, calib(`"line":`+okLine+`,"length":2,"unit":"m","origin":{"x":0.5,"y":0.5},"scale":1`), "scale"),
		bad400("calibration: unknown line field", "PUT", cal, calib(`"line":{"x1":0,"y1":0,"x2":1,"y2":1,"z":0},"length":2,"unit":"m","origin":{"x":0.5,"y":0.5}`), "line.z"),
		bad422("calibration: line missing", "PUT", cal, calib(`"length":2,"unit":"m","origin":{"x":0.5,"y":0.5}`), "line"),
		bad422("calibration: line end missing", "PUT", cal, calib(`"line":{"x1":0,"y1":0,"x2":1},"length":2,"unit":"m","origin":{"x":0.5,"y":0.5}`), "line.y2"),
		bad422("calibration: zero-length line", "PUT", cal, calib(`"line":{"x1":0.3,"y1":0.3,"x2":0.3,"y2":0.3},"length":2,"unit":"m","origin":{"x":0.5,"y":0.5}`), "line"),
		bad422("calibration: zero length", "PUT", cal, calib(`"line":`+okLine+`,"length":0,"unit":"m","origin":{"x":0.5,"y":0.5}`), "lineLength"),
		bad422("calibration: negative length", "PUT", cal, calib(`"line":`+okLine+`,"length":-2,"unit":"m","origin":{"x":0.5,"y":0.5}`), "lineLength"),
		bad422("calibration: absurd length", "PUT", cal, calib(`"line":`+okLine+`,"length":1e12,"unit":"m","origin":{"x":0.5,"y":0.5}`), "lineLength"),
		bad422("calibration: unknown unit", "PUT", cal, calib(`"line":`+okLine+`,"length":2,"unit":"parsec","origin":{"x":0.5,"y":0.5}`), "unit"),
		bad422("calibration: origin outside the frame", "PUT", cal, calib(`"line":`+okLine+`,"length":2,"unit":"m","origin":{"x":1.5,"y":0.5}`), "origin"),
		bad422("calibration: angle beyond a turn", "PUT", cal, calib(`"line":`+okLine+`,"length":2,"unit":"m","origin":{"x":0.5,"y":0.5},"angle":720`), "angle"),
		bad422("calibration: frame past the movie", "PUT", cal, calib(`"frame":300,"line":`+okLine+`,"length":2,"unit":"m","origin":{"x":0.5,"y":0.5}`), "frame"),
		bad422("calibration: yLine without yLength", "PUT", cal, calib(`"line":`+okLine+`,"length":2,"unit":"m","origin":{"x":0.5,"y":0.5},"yLine":{"x1":0.5,"y1":0.1,"x2":0.5,"y2":0.9}`), "yLine"),
		bad422("calibration: parallel lines", "PUT", cal, calib(`"line":`+okLine+`,"length":2,"unit":"m","origin":{"x":0.5,"y":0.5},"yLine":{"x1":0.1,"y1":0.9,"x2":0.6,"y2":0.9},"yLength":2`), "yLine"),
		// results query
		bad400("results: unknown parameter", "GET", "/results?units=cm", ``, "units"),
		bad400("results: smooth not a number", "GET", "/results?smooth=a", ``, "smooth"),
		bad422("results: smooth too wide", "GET", "/results?smooth=11", ``, "smooth"),
		bad422("results: unknown layout", "GET", "/results?format=csv&layout=tall", ``, "layout"),
		bad422("results: wide JSON", "GET", "/results?format=json&layout=wide", ``, "layout"),
		bad422("results: unknown format", "GET", "/results?format=xlsx", ``, "format"),
		// beacon release (sent without the page's Lease-Id header)
		{name: "release: leaseId a number", method: "POST", path: rel, body: `{"leaseId":5}`, noCT: true, status: 400, code: httpapi.CodeMalformed, field: "leaseId"},
		{name: "release: unknown field", method: "POST", path: rel, body: `{"lease":"x"}`, noCT: true, status: 400, code: httpapi.CodeMalformed, field: "lease"},
		{name: "release: not JSON", method: "POST", path: rel, body: `leaseId=abc`, noCT: true, status: 400, code: httpapi.CodeMalformed, field: "body"},
		{name: "release: malformed leaseId", method: "POST", path: rel, body: `{"leaseId":"ZZ"}`, noCT: true, status: 422, code: domain.CodeInvalid, field: "leaseId"},
		// frames query
		bad400("frames: from not a number", "GET", "/frames?from=abc", ``, "from"),
		bad400("frames: from twice", "GET", "/frames?from=1&from=2", ``, "from"),
		bad400("frames: unknown parameter", "GET", "/frames?page=2", ``, "page"),
		bad400("frames: from with a plus", "GET", "/frames?from=%2B1", ``, "from"),
		bad422("frames: negative from", "GET", "/frames?from=-1", ``, "from"),
		bad422("frames: from past the longest movie", "GET", fmt.Sprintf("/frames?from=%d", domain.MaxFrameCount), ``, "from"),
		bad422("frames: limit too big", "GET", "/frames?limit=1001", ``, "limit"),
		bad422("frames: unknown format", "GET", "/frames?format=xml", ``, "format"),
		// history query
		bad400("history: limit not a number", "GET", "/history?limit=ten", ``, "limit"),
		bad400("history: limit twice", "GET", "/history?limit=1&limit=2", ``, "limit"),
		bad400("history: unknown parameter", "GET", "/history?page=2", ``, "page"),
		bad422("history: limit zero", "GET", "/history?limit=0", ``, "limit"),
		bad422("history: limit too big", "GET", "/history?limit=101", ``, "limit"),
		bad400("history: cursor not base64", "GET", "/history?cursor=%21%21", ``, "cursor"),
		bad400("history: cursor of another shape", "GET", "/history?cursor=MjAyNg", ``, "cursor"),
		bad400("history: cursor too long", "GET", "/history?cursor="+strings.Repeat("A", 65), ``, "cursor"),
		// rename
		bad400("title: not JSON", "PUT", "/title", `title=x`, "body"),
		bad400("title: a number", "PUT", "/title", `{"title":5}`, "title"),
		bad400("title: unknown field", "PUT", "/title", `{"title":"a","name":"b"}`, "name"),
		bad422("title: missing", "PUT", "/title", `{}`, "title"),
		bad422("title: empty", "PUT", "/title", `{"title":""}`, "title"),
		bad422("title: bidi override", "PUT", "/title", `{"title":"a\u202eb"}`, "title"),
		// an upload in parts (decoded before the movie is read)
		bad400("parts: not JSON", "POST", "/upload/parts", `parts`, "body"),
		bad400("parts: numbers not a list", "POST", "/upload/parts", `{"uploadId":"u1","partNumbers":3}`, "partNumbers"),
		bad400("parts: a fraction", "POST", "/upload/parts", `{"uploadId":"u1","partNumbers":[1.5]}`, "partNumbers[0]"),
		bad422("parts: a part twice", "POST", "/upload/parts", `{"uploadId":"u1","partNumbers":[1,1]}`, "partNumbers[1]"),
		bad422("parts: part 0", "POST", "/upload/parts", `{"uploadId":"u1","partNumbers":[0]}`, "partNumbers[0]"),
		bad422("parts: part 10001", "POST", "/upload/parts", `{"uploadId":"u1","partNumbers":[10001]}`, "partNumbers[0]"),
		bad422("parts: none", "POST", "/upload/parts", `{"uploadId":"u1","partNumbers":[]}`, "partNumbers"),
		bad422("parts: no upload ID", "POST", "/upload/parts", `{"partNumbers":[1]}`, "uploadId"),
		bad422("parts: upload ID with a space", "POST", "/upload/parts", `{"uploadId":"u 1","partNumbers":[1]}`, "uploadId"),
		bad400("complete: unknown field in a part", "POST", "/upload/complete", `{"uploadId":"u1","parts":[{"partNumber":1,"etag":"e","size":5}]}`, "parts[0].size"),
		bad422("complete: out of order", "POST", "/upload/complete", `{"uploadId":"u1","parts":[{"partNumber":2,"etag":"e"}]}`, "parts[0].partNumber"),
		bad422("complete: no ETag", "POST", "/upload/complete", `{"uploadId":"u1","parts":[{"partNumber":1}]}`, "parts[0].etag"),
		bad422("complete: empty ETag", "POST", "/upload/complete", `{"uploadId":"u1","parts":[{"partNumber":1,"etag":""}]}`, "parts[0].etag"),
		bad422("complete: no parts", "POST", "/upload/complete", `{"uploadId":"u1","parts":[]}`, "parts"),
		bad400("complete: parts null", "POST", "/upload/complete", `{"uploadId":"u1","parts":null}`, "parts"),
		bad400("abort: upload ID a number", "POST", "/upload/abort", `{"uploadId":7}`, "uploadId"),
		bad422("abort: no upload ID", "POST", "/upload/abort", `{}`, "uploadId"),
		bad422("abort: upload ID too long", "POST", "/upload/abort", `{"uploadId":"`+strings.Repeat("u", 1025)+`"}`, "uploadId"),
		// headers and body framing
		{name: "edit: Lease-Id twice", method: "PUT", path: ci, body: `{"captureInterval":2}`,
			opts: []reqOpt{header(httpapi.HeaderLeaseID, "0123456789abcdef0123456789abcdef")}, status: 400, code: httpapi.CodeMalformed, field: httpapi.HeaderLeaseID},
		{name: "edit: not application/json", method: "PUT", path: ci, body: `{"captureInterval":2}`,
			opts: []reqOpt{header("Content-Type", "text/plain")}, noCT: true, status: 415, code: httpapi.CodeUnsupportedMedia, field: "Content-Type"},
		{name: "edit: body over 64 KiB", method: "PUT", path: m, body: `{"markers":[],"x":"` + strings.Repeat("a", httpapi.MaxBodyBytes) + `"}`,
			status: 413, code: httpapi.CodeTooLarge},
		{name: "heartbeat: Lease-Id twice", method: "PUT", path: "/analysis-lease",
			opts: []reqOpt{header(httpapi.HeaderLeaseID, "0123456789abcdef0123456789abcdef")}, noCT: true, status: 400, code: httpapi.CodeMalformed, field: httpapi.HeaderLeaseID},
	}
}()

// Every decoder refuses garbage with a problem naming the field, and a
// refused request stores nothing: the row's version and lease are as
// before.
func TestGarbageInput(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			a := newAPI(t, tr)
			id := a.createMovie()
			al := a.alice()
			al.open(id).want(201)
			before := a.row(id)
			for _, g := range garbageCases {
				opts := append([]reqOpt{}, g.opts...)
				if !strings.HasSuffix(g.path, "/release") {
					opts = append(opts, al.withLease())
				}
				var body any
				if g.method != "GET" {
					body = g.body
				}
				if !g.noCT && g.method != "GET" {
					opts = append(opts, header("Content-Type", "application/json"))
				}
				r := al.doRaw(g.method, "/movies/"+id+g.path, body, opts...)
				if r.status != g.status {
					t.Errorf("%s: status %d, want %d: %s", g.name, r.status, g.status, r.body)
					continue
				}
				p := r.problem(g.status, g.code)
				if p.Field != g.field {
					t.Errorf("%s: field %q, want %q (%s)", g.name, p.Field, g.field, p.Detail)
				}
			}
			after := a.row(id)
			if after.Version != before.Version || after.Lease == nil || after.Lease.ID != al.lease {
				t.Fatalf("garbage changed the row: version %d -> %d", before.Version, after.Version)
			}
		})
	}
}
