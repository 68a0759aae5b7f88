package httpapi

import (
	"maps"
	"mime"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/movietrace/tracinglocks/domain"
)

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
	l := listedTypes(accept)
	return l["text/csv"] && !l["application/json"] && !l["application/*"]
}

// listedTypes: the media types an Accept header names (parameters and
// malformed parts ignored).
func listedTypes(accept string) map[string]bool {
	l := map[string]bool{}
	for _, part := range strings.Split(accept, ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil {
			l[mt] = true
		}
	}
	return l
}
