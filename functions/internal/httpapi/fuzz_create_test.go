package httpapi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// FuzzDecodeCreateMovie: any body either decodes to a request (then valid
// JSON, and the domain's CreateMovie judges it: accepted, or refused with a
// code of the upload vocabulary naming a field) or is refused as a 400/422
// naming a field. Seeds: testdata/fuzz/FuzzDecodeCreateMovie and below.
func FuzzDecodeCreateMovie(f *testing.F) {
	for _, s := range []string{
		`{"title":"Mouse","fileName":"a.mp4","contentType":"video/mp4","sizeBytes":1234}`,
		`{"title":"🐟","fileName":"../x","contentType":"video/mp4","sizeBytes":1}`,
		`{"title":"a","fileName":"a.mp4","contentType":"application/pdf","sizeBytes":1}`,
		`{"title":"a","fileName":"a.mp4","contentType":"video/mp4","sizeBytes":-1}`,
		`{"title":"a","fileName":"a.mp4","contentType":"video/mp4","sizeBytes":1e3}`,
		`{"title":"a","title":"b"}`, `{}`, `[]`, ``, `{"title":"\u202e"}`,
		`{"title":"a","fileName":"a.mp4","contentType":"video/mp4","sizeBytes":99999999,"parts":true}`,
		`{"title":"a","fileName":"a.mp4","contentType":"video/mp4","sizeBytes":9,"parts":"yes"}`,
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := decodeCreateMovie(data)
		if err != nil {
			checkRefusal(t, data, err)
			return
		}
		acceptedJSON(t, data)
		cmd := domain.CreateMovie{ID: "m1", Title: req.Title, MaxBytes: 1 << 30, Now: now,
			Upload: domain.Upload{FileName: req.FileName, ContentType: req.ContentType, SizeBytes: req.SizeBytes, ExpiresAt: now.Add(time.Hour)}}
		if err := cmd.Validate(); err != nil {
			e, ok := domain.AsError(err)
			if !ok || e.Field == "" {
				t.Fatalf("%q: refusal %v names no field", data, err)
			}
			switch e.Code {
			case domain.CodeInvalid, domain.CodeNotVideo, domain.CodeFileTooLarge:
			default:
				t.Fatalf("%q: unexpected refusal %v", data, err)
			}
			return
		}
		// Accepted: re-encoding the request decodes to the same request.
		again, err := json.Marshal(map[string]any{"title": req.Title, "fileName": req.FileName, "contentType": req.ContentType, "sizeBytes": req.SizeBytes, "parts": req.Parts})
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeCreateMovie(again)
		if err != nil || back != req {
			t.Fatalf("%q: round trip %+v -> %+v (%v)", data, req, back, err)
		}
	})
}
