package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/movietrace/tracinglocks/domain"
)

// The request decoders are strict: a body is exactly one JSON object with
// known fields, each at most once and of the right JSON type. A violation
// is a 400 malformed_request naming the field ("markers[2].x"); a value of
// the right type that the domain refuses is a 422 invalid_input (returned
// by the domain's Validate/Decide, or here for a missing field). Every
// decoder is a pure function of its input so that it can be fuzzed.

// readBody reads a bounded request body. When jsonOnly is set the body must
// be declared application/json (or a +json type).
func readBody(w http.ResponseWriter, r *http.Request, jsonOnly bool) ([]byte, error) {
	if jsonOnly {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || !(mt == "application/json" || strings.HasSuffix(mt, "+json")) {
			return nil, &domain.Error{Code: CodeUnsupportedMedia, Field: "Content-Type", Message: "the body must be application/json"}
		}
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, err
		}
		return nil, &malformed{field: "body", reason: "the body could not be read"}
	}
	return data, nil
}

// fieldFunc decodes one member's raw value; path is its field path.
type fieldFunc func(path string, raw json.RawMessage) error

// decodeObject decodes data as one JSON object whose members are all in
// fields, each at most once, with nothing after it.
func decodeObject(data []byte, path string, fields map[string]fieldFunc) error {
	name := path
	if name == "" {
		name = "body"
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return syntaxError(name, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return &malformed{field: name, reason: "must be a JSON object"}
	}
	seen := make(map[string]bool, len(fields))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntaxError(name, err)
		}
		key, _ := tok.(string) // inside an object, the decoder only yields string keys
		f, known := fields[key]
		if !known {
			return &malformed{field: joinPath(path, fieldName(key)), reason: "unknown field"}
		}
		fieldPath := joinPath(path, key)
		if seen[key] {
			return &malformed{field: fieldPath, reason: "duplicate field"}
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return syntaxError(fieldPath, err)
		}
		if err := f(fieldPath, raw); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return syntaxError(name, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return &malformed{field: name, reason: "unexpected data after the JSON object"}
	}
	return nil
}

// decodeArray decodes raw as a JSON array of at most max items (one more
// is reported as a 422 with the domain's bound).
func decodeArray(path string, raw json.RawMessage, max int, item func(path string, raw json.RawMessage) error) error {
	if !startsWith(raw, '[') {
		return &malformed{field: path, reason: "must be an array"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return syntaxError(path, err)
	}
	for i := 0; dec.More(); i++ {
		if i == max {
			return domain.Invalid(path, "at most %d items", max)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return syntaxError(path, err)
		}
		if err := item(fmt.Sprintf("%s[%d]", path, i), v); err != nil {
			return err
		}
	}
	return nil
}

func syntaxError(path string, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &malformed{field: path, reason: "not valid JSON"}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &malformed{field: path, reason: "the JSON ends too early"}
	}
	return &malformed{field: path, reason: "not valid JSON"}
}

// fieldName is an unknown key as a problem may quote it: itself when it
// looks like a field name, else quoted and cut to 40 bytes.
func fieldName(key string) string {
	if fieldNamePattern.MatchString(key) {
		return key
	}
	if len(key) > 40 {
		key = strings.ToValidUTF8(key[:40], "") + "..."
	}
	return strconv.Quote(key)
}

var fieldNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func startsWith(raw json.RawMessage, c byte) bool { return len(raw) > 0 && raw[0] == c }

// intField decodes a JSON integer (no fraction, no exponent, no quotes).
func intField(dst *int, set *bool) fieldFunc {
	return func(path string, raw json.RawMessage) error {
		if len(raw) == 0 || !(raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
			return &malformed{field: path, reason: "must be an integer"}
		}
		n, err := strconv.ParseInt(string(raw), 10, 0)
		if err != nil {
			return &malformed{field: path, reason: "must be an integer"}
		}
		*dst, *set = int(n), true
		return nil
	}
}

// numberField decodes a JSON number.
func numberField(dst *float64, set *bool) fieldFunc {
	return func(path string, raw json.RawMessage) error {
		if len(raw) == 0 || !(raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
			return &malformed{field: path, reason: "must be a number"}
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return &malformed{field: path, reason: "must be a number"}
		}
		*dst, *set = f, true
		return nil
	}
}

// stringField decodes a JSON string of valid UTF-8.
func stringField(dst *string, set *bool) fieldFunc {
	return func(path string, raw json.RawMessage) error {
		if !startsWith(raw, '"') {
			return &malformed{field: path, reason: "must be a string"}
		}
		if !utf8.Valid(raw) {
			return &malformed{field: path, reason: "must be valid UTF-8"}
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return &malformed{field: path, reason: "must be a string"}
		}
		*dst, *set = s, true
		return nil
	}
}

func required(path string, set bool) error {
	if !set {
		return domain.Invalid(path, "is required")
	}
	return nil
}

// decodeMarkers decodes {"markers": [{"id", "label", "x", "y"}, ...]} and
// checks each marker on its own, so that a refusal names its index
// ("markers[3].x"); the domain checks the list again when it is applied.
func decodeMarkers(data []byte) ([]domain.Marker, error) {
	var markers []domain.Marker
	var listSet bool
	err := decodeObject(data, "", map[string]fieldFunc{
		"markers": func(path string, raw json.RawMessage) error {
			listSet = true
			markers = []domain.Marker{}
			return decodeArray(path, raw, domain.MaxMarkers, func(path string, raw json.RawMessage) error {
				var mk domain.Marker
				var idSet, labelSet, xSet, ySet bool
				err := decodeObject(raw, path, map[string]fieldFunc{
					"id":    stringField(&mk.ID, &idSet),
					"label": stringField(&mk.Label, &labelSet),
					"x":     numberField(&mk.X, &xSet),
					"y":     numberField(&mk.Y, &ySet),
				})
				if err == nil {
					err = firstErr(required(path+".id", idSet), required(path+".x", xSet), required(path+".y", ySet))
				}
				if err == nil {
					err = checkMarker(path, mk, markers)
				}
				markers = append(markers, mk)
				return err
			})
		},
	})
	if err == nil {
		err = required("markers", listSet)
	}
	if err != nil {
		return nil, err
	}
	return markers, nil
}

// checkMarker is domain.ValidateMarkers for one marker (every rule of a
// marker lives there), with the field path indexed, plus uniqueness against
// the markers before it.
func checkMarker(path string, mk domain.Marker, before []domain.Marker) error {
	if !unitInterval(mk.X) {
		return domain.Invalid(path+".x", "must be within [0, 1]")
	}
	if !unitInterval(mk.Y) {
		return domain.Invalid(path+".y", "must be within [0, 1]")
	}
	if err := domain.ValidateMarkers([]domain.Marker{mk}); err != nil {
		if e, ok := domain.AsError(err); ok {
			// The domain names "markers.<field>"; keep the field, add the index.
			_, leaf, _ := strings.Cut(e.Field, ".")
			return &domain.Error{Code: e.Code, Message: e.Message, Field: joinPath(path, leaf)}
		}
		return err
	}
	for _, b := range before {
		if b.ID == mk.ID {
			return domain.Invalid(path+".id", "duplicate marker ID")
		}
	}
	return nil
}

// decodeTrim decodes {"start": int, "end": int}.
func decodeTrim(data []byte) (domain.Trim, error) {
	var t domain.Trim
	var startSet, endSet bool
	err := decodeObject(data, "", map[string]fieldFunc{
		"start": intField(&t.Start, &startSet),
		"end":   intField(&t.End, &endSet),
	})
	if err == nil {
		err = firstErr(required("start", startSet), required("end", endSet))
	}
	if err != nil {
		return domain.Trim{}, err
	}
	return t, nil
}

// decodeCaptureInterval decodes {"captureInterval": int}.
func decodeCaptureInterval(data []byte) (int, error) {
	var n int
	var set bool
	err := decodeObject(data, "", map[string]fieldFunc{"captureInterval": intField(&n, &set)})
	if err == nil {
		err = required("captureInterval", set)
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// decodeTrace decodes {"fromFrame": int}.
func decodeTrace(data []byte) (int, error) {
	var n int
	var set bool
	err := decodeObject(data, "", map[string]fieldFunc{"fromFrame": intField(&n, &set)})
	if err == nil {
		err = required("fromFrame", set)
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// decodeRelease decodes the beacon body {"leaseId": "..."}; an empty body
// (the lease in the header instead) is allowed.
func decodeRelease(data []byte) (string, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return "", nil
	}
	var id string
	var set bool
	if err := decodeObject(data, "", map[string]fieldFunc{"leaseId": stringField(&id, &set)}); err != nil {
		return "", err
	}
	return id, nil
}

// framesQuery is GET /movies/{id}/frames?from=&limit=&format=.
type framesQuery struct {
	From  int
	Limit int
	CSV   bool // format=csv (Accept: text/csv is handled by the route)
	// FormatSet says format was given, so Accept is not consulted.
	FormatSet bool
}

// Bounds of the frames page.
const (
	DefaultFrameLimit = 100
	MaxFrameLimit     = 1000
)

// decodeFramesQuery decodes the frames query: every parameter at most
// once, none unknown.
func decodeFramesQuery(q url.Values) (framesQuery, error) {
	out := framesQuery{Limit: DefaultFrameLimit}
	// In key order, so that the first problem reported does not vary.
	for _, k := range slices.Sorted(maps.Keys(q)) {
		vs := q[k]
		if len(vs) != 1 {
			return framesQuery{}, &malformed{field: fieldName(k), reason: "must be given at most once"}
		}
		v := vs[0]
		switch k {
		case "from", "limit":
			n, err := strconv.Atoi(v)
			if err != nil || v == "" || v[0] == '+' {
				return framesQuery{}, &malformed{field: k, reason: "must be an integer"}
			}
			if k == "from" {
				if n < 0 || n >= domain.MaxFrameCount {
					return framesQuery{}, domain.Invalid("from", "must be 0-%d", domain.MaxFrameCount-1)
				}
				out.From = n
			} else {
				if n < 1 || n > MaxFrameLimit {
					return framesQuery{}, domain.Invalid("limit", "must be 1-%d", MaxFrameLimit)
				}
				out.Limit = n
			}
		case "format":
			switch v {
			case "json":
			case "csv":
				out.CSV = true
			default:
				return framesQuery{}, domain.Invalid("format", "must be json or csv")
			}
			out.FormatSet = true
		default:
			return framesQuery{}, &malformed{field: fieldName(k), reason: "unknown query parameter"}
		}
	}
	return out, nil
}

// wantsCSV reads Accept when format was not given: CSV when text/csv is
// acceptable and JSON is not listed.
func wantsCSV(accept string) bool {
	var csv, js bool
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "text/csv":
			csv = true
		case "application/json", "application/*":
			js = true
		}
	}
	return csv && !js
}

func unitInterval(f float64) bool { return f >= 0 && f <= 1 }

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
