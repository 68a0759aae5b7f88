package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
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

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
