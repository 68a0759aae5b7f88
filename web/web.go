// Package web is the Analyze page: plain HTML, CSS and JavaScript, embedded
// in the binary and served by the local stack next to the API. It is the
// reference client of the browser API (see docs/local.md).
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed index.html *.js actions/*.js views/*.js style.css
var files embed.FS

// Files is the page's files: index.html, the JavaScript modules (the state,
// its helpers and app.js at the top, actions/ and views/ below) and
// style.css.
func Files() fs.FS { return files }

// ModulePatterns are where the page's JavaScript modules are.
var ModulePatterns = []string{"*.js", "actions/*.js", "views/*.js"}

// Register serves the page on mux: GET / (index.html), GET /<module>.js (also under actions/ and views/) and
// GET /style.css. Every other path is left to the API.
func Register(mux *http.ServeMux) { RegisterWithStorage(mux, "") }

// RegisterWithStorage is Register for a page whose frame images come from
// storage at another origin (the API redirects to presigned S3 URLs): the
// Content-Security-Policy lets the page fetch from that origin too.
func RegisterWithStorage(mux *http.ServeMux, storageOrigin string) {
	connect, img := "'self'", "'self' blob: data:"
	if storageOrigin != "" {
		connect += " " + storageOrigin
		img += " " + storageOrigin
	}
	csp := "default-src 'self'; connect-src " + connect + "; img-src " + img + "; style-src 'self'; script-src 'self'; frame-ancestors 'none'"
	static := http.FileServerFS(files)
	serve := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			// The page is small and changes with the binary: always revalidate.
			w.Header().Set("Cache-Control", "no-cache")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Header().Set("Content-Security-Policy", csp)
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/" + name
			if name == "index.html" {
				r2.URL.Path = "/"
			}
			static.ServeHTTP(w, r2)
		}
	}
	mux.HandleFunc("GET /{$}", serve("index.html"))
	for _, pattern := range ModulePatterns {
		scripts, _ := fs.Glob(files, pattern)
		for _, name := range scripts {
			mux.HandleFunc("GET /"+name, serve(name))
		}
	}
	mux.HandleFunc("GET /style.css", serve("style.css"))
}
