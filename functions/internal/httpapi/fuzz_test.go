package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"testing"

	"github.com/movietrace/tracinglocks/domain"
)

// Fuzz targets for every request decoder. Each one checks, for any input:
// no panic; a refusal is a 400 (malformed) or a 422 (invalid_input) that
// names a field; an accepted body is valid JSON whose value passes the
// domain's own validation, and encoding the value and decoding it again
// gives the same value. Seeds: testdata/fuzz/<target>/ and f.Add below.

func checkRefusal(t *testing.T, input any, err error) {
	t.Helper()
	var m *malformed
	if errors.As(err, &m) {
		if m.field == "" || m.reason == "" {
			t.Fatalf("%q: malformed without field or reason: %+v", input, m)
		}
		return
	}
	e, ok := domain.AsError(err)
	if !ok || e.Code != domain.CodeInvalid || e.Field == "" {
		t.Fatalf("%q: refusal %v is neither 400 nor 422 with a field", input, err)
	}
}

func acceptedJSON(t *testing.T, data []byte) {
	t.Helper()
	if !json.Valid(data) {
		t.Fatalf("accepted invalid JSON %q", data)
	}
}

func FuzzDecodeMarkers(f *testing.F) {
	for _, s := range []string{
		`{"markers":[]}`,
		`{"markers":[{"id":"a","label":"left eye","x":0.25,"y":0.75}]}`,
		`{"markers":[{"id":"a","x":0,"y":1},{"id":"b","x":1,"y":0}]}`,
		`{"markers":[{"id":"a","x":"0","y":1}]}`,
		`{"markers":[{"id":"a","x":0,"y":1,"z":2}]}`,
		`{"markers":null}`, `{}`, `[]`, ``, `{"markers":[{"id":"é","x":0,"y":0}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := decodeMarkers(data)
		if err != nil {
			checkRefusal(t, data, err)
			return
		}
		acceptedJSON(t, data)
		if err := domain.ValidateMarkers(ms); err != nil {
			t.Fatalf("%q: accepted markers the domain refuses: %v", data, err)
		}
		views := make([]map[string]any, len(ms))
		for i, m := range ms {
			views[i] = map[string]any{"id": m.ID, "label": m.Label, "x": m.X, "y": m.Y}
		}
		again, err := decodeMarkers(mustJSON(t, map[string]any{"markers": views}))
		if err != nil || !reflect.DeepEqual(again, ms) {
			t.Fatalf("%q: round trip %v, %v; want %v", data, again, err, ms)
		}
	})
}

func FuzzDecodeTrim(f *testing.F) {
	for _, s := range []string{`{"start":0,"end":10}`, `{"end":5,"start":1}`, `{"start":-1,"end":1}`, `{"start":0.5,"end":1}`,
		`{"start":0}`, `{"start":0,"end":1e2}`, `{"start":0,"end":10,"start":1}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := decodeTrim(data)
		if err != nil {
			checkRefusal(t, data, err)
			return
		}
		acceptedJSON(t, data)
		again, err := decodeTrim(mustJSON(t, map[string]int{"start": tr.Start, "end": tr.End}))
		if err != nil || again != tr {
			t.Fatalf("%q: round trip %v, %v; want %v", data, again, err, tr)
		}
	})
}

func FuzzDecodeCaptureInterval(f *testing.F) {
	for _, s := range []string{`{"captureInterval":1}`, `{"captureInterval":10000}`, `{"captureInterval":2.5}`,
		`{"captureInterval":"2"}`, `{"captureInterval":-0}`, `{"interval":2}`, `{"captureInterval":99999999999999999999}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := decodeCaptureInterval(data)
		if err != nil {
			checkRefusal(t, data, err)
			return
		}
		acceptedJSON(t, data)
		again, err := decodeCaptureInterval(mustJSON(t, map[string]int{"captureInterval": n}))
		if err != nil || again != n {
			t.Fatalf("%q: round trip %v, %v; want %v", data, again, err, n)
		}
	})
}

func FuzzDecodeTrace(f *testing.F) {
	for _, s := range []string{`{"fromFrame":0}`, `{"fromFrame":299}`, `{"fromFrame":-1}`, `{"fromFrame":"0"}`, `{}`, ` {"fromFrame":1} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := decodeTrace(data)
		if err != nil {
			checkRefusal(t, data, err)
			return
		}
		acceptedJSON(t, data)
		again, err := decodeTrace(mustJSON(t, map[string]int{"fromFrame": n}))
		if err != nil || again != n {
			t.Fatalf("%q: round trip %v, %v; want %v", data, again, err, n)
		}
	})
}

func FuzzDecodeKey(f *testing.F) {
	for _, s := range []string{`{"markerId":"m1","frame":3,"x":0.25,"y":0.75}`, `{"frame":0,"x":0,"y":1,"markerId":"a"}`,
		`{"markerId":"m1","frame":-1,"x":0,"y":0}`, `{"markerId":"m1","frame":3,"x":2,"y":0}`, `{"markerId":1,"frame":3,"x":0,"y":0}`,
		`{"markerId":"m1","frame":3.5,"x":0,"y":0}`, `{}`, `null`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := decodeKey(data)
		if err != nil {
			checkRefusal(t, data, err)
			return
		}
		acceptedJSON(t, data)
		again, err := decodeKey(mustJSON(t, map[string]any{"markerId": k.MarkerID, "frame": k.Frame, "x": k.X, "y": k.Y}))
		if err != nil || again != k {
			t.Fatalf("%q: round trip %v, %v; want %v", data, again, err, k)
		}
	})
}

func FuzzDecodeRelease(f *testing.F) {
	for _, s := range []string{``, `  `, `{}`, `{"leaseId":"0123456789abcdef0123456789abcdef"}`, `{"leaseId":5}`, `{"lease":"x"}`, `leaseId=x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := decodeRelease(data)
		if err != nil {
			checkRefusal(t, data, err)
			return
		}
		if id == "" {
			return // empty body or no leaseId: the header decides
		}
		acceptedJSON(t, data)
		again, err := decodeRelease(mustJSON(t, map[string]string{"leaseId": id}))
		if err != nil || again != id {
			t.Fatalf("%q: round trip %q, %v; want %q", data, again, err, id)
		}
	})
}

func FuzzDecodeFramesQuery(f *testing.F) {
	for _, s := range []string{``, `from=0`, `from=10&limit=1000`, `format=csv`, `from=1&from=2`, `limit=0`, `page=2`, `from=%2B1`, `from=-0`, `format=xml`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return // net/http hands the handler only what it could parse
		}
		fq, err := decodeFramesQuery(q)
		if err != nil {
			checkRefusal(t, raw, err)
			return
		}
		if fq.From < 0 || fq.From >= domain.MaxFrameCount || fq.Limit < 1 || fq.Limit > MaxFrameLimit {
			t.Fatalf("%q: accepted out of bounds %+v", raw, fq)
		}
		v := url.Values{"from": {fmt.Sprint(fq.From)}, "limit": {fmt.Sprint(fq.Limit)}}
		if fq.FormatSet {
			v.Set("format", map[bool]string{true: "csv", false: "json"}[fq.CSV])
		}
		again, err := decodeFramesQuery(v)
		if err != nil || again != fq {
			t.Fatalf("%q: round trip %+v, %v; want %+v", raw, again, err, fq)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func FuzzDecodeHistoryQuery(f *testing.F) {
	for _, s := range []string{``, `limit=1`, `limit=100`, `limit=101`, `cursor=`, `cursor=abc`, `limit=1&limit=2`, `page=2`,
		`cursor=MjAyNi0xMi0wMlQxMjowMDowMC4wMDVafjAxMjM0NTY3ODlhYmNkZWY`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		hq, err := decodeHistoryQuery(q)
		if err != nil {
			checkRefusal(t, raw, err)
			return
		}
		if hq.Limit < 1 || hq.Limit > MaxHistoryLimit {
			t.Fatalf("%q: accepted limit %d", raw, hq.Limit)
		}
		v := url.Values{"limit": {fmt.Sprint(hq.Limit)}}
		if hq.After != nil {
			v.Set("cursor", hq.After.Cursor())
		}
		again, err := decodeHistoryQuery(v)
		if err != nil || again.Limit != hq.Limit || (again.After == nil) != (hq.After == nil) || (hq.After != nil && *again.After != *hq.After) {
			t.Fatalf("%q: round trip %+v, %v; want %+v", raw, again, err, hq)
		}
	})
}

func FuzzDecodeCalibration(f *testing.F) {
	for _, s := range []string{
		`{"line":{"x1":0.25,"y1":0.5,"x2":0.75,"y2":0.5},"length":2,"unit":"m","origin":{"x":0.5,"y":0.5}}`,
		`{"frame":3,"line":{"x1":0,"y1":0,"x2":1,"y2":0},"length":1e-3,"unit":"mm","origin":{"x":0,"y":1},"angle":-45,"yUp":false,` +
			`"yLine":{"x1":0,"y1":0,"x2":0,"y2":1},"yLength":0.5}`,
		`{"line":{"x1":0.3,"y1":0.3,"x2":0.3,"y2":0.3},"length":2,"unit":"m","origin":{"x":0.5,"y":0.5}}`,
		`{"line":{},"length":-1,"unit":"furlong","origin":{"x":2,"y":0}}`,
		`{"line":null}`, `{}`, `[]`, ``, `{"yUp":1}`, `{"length":1e999}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeCalibration(data)
		if err != nil {
			checkRefusal(t, data, err)
			return
		}
		acceptedJSON(t, data)
		if err := c.Validate(); err != nil {
			t.Fatalf("%q: accepted a calibration the domain refuses: %v", data, err)
		}
		if _, _, err := c.Scales(640, 480); err != nil {
			t.Fatalf("%q: accepted a calibration without scales: %v", data, err)
		}
		v := calibrationView(domain.Movie{Calibration: &c})
		body := map[string]any{"frame": v.Frame, "line": v.Line, "length": v.Length, "unit": v.Unit, "origin": v.Origin, "angle": v.Angle, "yUp": v.YUp}
		if v.YLine != nil {
			body["yLine"], body["yLength"] = v.YLine, v.YLength
		}
		again, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := decodeCalibration(again)
		if err != nil || c2 != c {
			t.Fatalf("%q -> %s -> %+v, %v; want %+v", data, again, c2, err, c)
		}
	})
}
