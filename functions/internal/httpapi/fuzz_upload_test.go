package httpapi

import (
	"reflect"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// Fuzz targets for the decoders of an upload in parts and of a rename
// (see fuzz_test.go for what every target checks).

func FuzzDecodePartNumbers(f *testing.F) {
	for _, s := range []string{
		`{"uploadId":"abc","partNumbers":[1,2,3]}`, `{"uploadId":"abc","partNumbers":[2]}`,
		`{"uploadId":"abc","partNumbers":[1,1]}`, `{"uploadId":"abc","partNumbers":[0]}`, `{"uploadId":"abc","partNumbers":[10001]}`,
		`{"uploadId":"abc","partNumbers":[]}`, `{"uploadId":"a b","partNumbers":[1]}`, `{"uploadId":"","partNumbers":[1]}`,
		`{"uploadId":"abc","partNumbers":[1.5]}`, `{"partNumbers":[1]}`, `{"uploadId":"abc"}`, `[]`, ``, `{"uploadId":"é","partNumbers":[1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, numbers, err := decodePartNumbers(data)
		if err != nil {
			checkRefusal(t, data, err)
			return
		}
		acceptedJSON(t, data)
		if validUploadID(id) != nil || len(numbers) == 0 || len(numbers) > domain.MaxParts {
			t.Fatalf("%q: accepted %q %v", data, id, numbers)
		}
		seen := map[int]bool{}
		for _, n := range numbers {
			if n < 1 || n > domain.MaxParts || seen[n] {
				t.Fatalf("%q: accepted part number %d", data, n)
			}
			seen[n] = true
		}
		id2, again, err := decodePartNumbers(mustJSON(t, map[string]any{"uploadId": id, "partNumbers": numbers}))
		if err != nil || id2 != id || !reflect.DeepEqual(again, numbers) {
			t.Fatalf("%q: round trip %q %v, %v", data, id2, again, err)
		}
	})
}

func FuzzDecodeCompletedParts(f *testing.F) {
	for _, s := range []string{
		`{"uploadId":"abc","parts":[{"partNumber":1,"etag":"\"e1\""},{"partNumber":2,"etag":"\"e2\""}]}`,
		`{"uploadId":"abc","parts":[{"partNumber":2,"etag":"x"}]}`, `{"uploadId":"abc","parts":[{"partNumber":1}]}`,
		`{"uploadId":"abc","parts":[{"partNumber":1,"etag":""}]}`, `{"uploadId":"abc","parts":[{"partNumber":1,"etag":"x","size":1}]}`,
		`{"uploadId":"abc","parts":[]}`, `{"uploadId":"abc","parts":null}`, `{"parts":[]}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, parts, err := decodeCompletedParts(data)
		if err != nil {
			checkRefusal(t, data, err)
			return
		}
		acceptedJSON(t, data)
		if validUploadID(id) != nil || len(parts) == 0 {
			t.Fatalf("%q: accepted %q %v", data, id, parts)
		}
		views := make([]map[string]any, len(parts))
		for i, p := range parts {
			if int(p.Number) != i+1 || p.ETag == "" || len(p.ETag) > 200 {
				t.Fatalf("%q: accepted part %d: %+v", data, i, p)
			}
			views[i] = map[string]any{"partNumber": p.Number, "etag": p.ETag}
		}
		id2, again, err := decodeCompletedParts(mustJSON(t, map[string]any{"uploadId": id, "parts": views}))
		if err != nil || id2 != id || !reflect.DeepEqual(again, parts) {
			t.Fatalf("%q: round trip %q %v, %v", data, id2, again, err)
		}
	})
}

func FuzzDecodeAbort(f *testing.F) {
	for _, s := range []string{`{"uploadId":"abc"}`, `{"uploadId":""}`, `{"uploadId":1}`, `{"uploadId":"a\u0000"}`, `{}`, `null`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := decodeAbort(data)
		if err != nil {
			checkRefusal(t, data, err)
			return
		}
		acceptedJSON(t, data)
		if again, err := decodeAbort(mustJSON(t, map[string]any{"uploadId": id})); err != nil || again != id || validUploadID(id) != nil {
			t.Fatalf("%q: %q round trip %q, %v", data, id, again, err)
		}
	})
}

// FuzzDecodeTitle: a decoded title is judged by the domain's RenameMovie:
// accepted, or refused with invalid_input naming "title".
func FuzzDecodeTitle(f *testing.F) {
	for _, s := range []string{`{"title":"Trial 2"}`, `{"title":""}`, `{"title":" x"}`, `{"title":"a\u202eb"}`, `{"title":5}`,
		`{"title":"a","title":"b"}`, `{"name":"a"}`, `{}`, ``, "{\"title\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		title, err := decodeTitle(data)
		if err != nil {
			checkRefusal(t, data, err)
			return
		}
		acceptedJSON(t, data)
		if err := (domain.RenameMovie{UserID: "u", Title: title, Now: now}).Validate(); err != nil {
			if e, ok := domain.AsError(err); !ok || e.Code != domain.CodeInvalid || e.Field != "title" {
				t.Fatalf("%q: refusal %v", data, err)
			}
			return
		}
		if again, err := decodeTitle(mustJSON(t, map[string]any{"title": title})); err != nil || again != title {
			t.Fatalf("%q: round trip %q, %v", data, again, err)
		}
	})
}
