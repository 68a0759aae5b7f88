// Package webauth is the page's sign-in module: src/auth.js (OpenID Connect
// through the npm package oidc-client-ts), bundled by esbuild's Go API into
// auth.bundle.js (`make web`, package bundle), embedded here and served as
// /auth.js. The deployed page gets the same file (make web-dist).
package webauth

import (
	_ "embed"
	"net/http"
)

//go:embed auth.bundle.js
var bundle []byte

// Path is where the page loads the module from.
const Path = "/auth.js"

// Bundle is the built module.
func Bundle() []byte { return bundle }

// Register serves the module at GET /auth.js.
func Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+Path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(bundle)
	})
}
