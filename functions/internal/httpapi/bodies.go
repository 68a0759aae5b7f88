package httpapi

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/movietrace/tracinglocks/domain"
)

// The request bodies of the API's writes, decoded with decode.go's strict
// JSON machinery.

// decodeMarkers decodes {"markers": [{"id", "label", "x", "y", "frame"}, ...]}
// ("frame", the frame the marker was placed on, is optional: 0) and
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
					"frame": intField(&mk.Frame, new(bool)),
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

// decodeKey decodes a correction {"markerId": string, "frame": int, "x":
// number, "y": number}, every field required.
func decodeKey(data []byte) (domain.Key, error) {
	var k domain.Key
	var idSet, frameSet, xSet, ySet bool
	err := decodeObject(data, "", map[string]fieldFunc{
		"markerId": stringField(&k.MarkerID, &idSet),
		"frame":    intField(&k.Frame, &frameSet),
		"x":        numberField(&k.X, &xSet),
		"y":        numberField(&k.Y, &ySet),
	})
	if err == nil {
		err = firstErr(required("markerId", idSet), required("frame", frameSet), required("x", xSet), required("y", ySet))
	}
	if err != nil {
		return domain.Key{}, err
	}
	return k, nil
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

func unitInterval(f float64) bool { return f >= 0 && f <= 1 }
