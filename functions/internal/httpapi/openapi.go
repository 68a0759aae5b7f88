package httpapi

import (
	_ "embed"
	"net/http"
)

// OpenAPIDocument is the OpenAPI 3.1 description of every route. Tests
// validate real responses against it (openapi_test.go).
//
//go:embed openapi.json
var OpenAPIDocument []byte

// GET /openapi.json
func (h *Handler) openAPI(w http.ResponseWriter, _ *http.Request, _ call) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(OpenAPIDocument)
	return nil
}
