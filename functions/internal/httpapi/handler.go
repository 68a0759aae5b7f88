package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/events"
	"github.com/movietrace/tracinglocks/functions/emf"
	"github.com/movietrace/tracinglocks/functions/internal/token"
	"github.com/movietrace/tracinglocks/schema"
)

// MovieStore is what the API needs of the movie store
// (dynamo.MovieStore implements it).
type MovieStore interface {
	Get(ctx context.Context, id string) (domain.Movie, error)
	// List returns the movies, and apart the rows that cannot be read as
	// movies (listed without them, each logged).
	List(ctx context.Context) ([]domain.Movie, []*schema.MalformedMovieError, error)
	Commit(ctx context.Context, movieID string, cmd domain.Command) (domain.Movie, error)
	// Release treats "nothing to release" as success.
	Release(ctx context.Context, movieID string, cmd domain.Release) (bool, error)
}

// Config wires a Handler.
type Config struct {
	Movies MovieStore
	Frames FrameReader
	// History reads the audit table for GET /movies/{id}/history.
	History HistoryReader
	Auth    Authenticator
	// Now is the clock every command carries; tests control it.
	Now func() time.Time
	// LeaseDuration is the renewable lease length (LEASE_SECONDS).
	LeaseDuration time.Duration
	// EditIdle is how long the page lets an editor go without an edit
	// before it asks "Still editing?" (EDIT_IDLE_SECONDS; default
	// DefaultEditIdle). The lease grant tells the page.
	EditIdle time.Duration
	// Logger receives one JSON line per request.
	Logger *slog.Logger
	// NewID mints lease and job IDs; token.New when nil.
	NewID func() string

	// The movie files (uploads.go). Without Files and Catalog, POST
	// /movies and the frame images answer 500 (and log why). DELETE
	// /movies/{id} only marks the movie deleting; the sweeper removes its
	// files and frames (purge).
	Files MovieFiles
	// Images is the frame provider (package media): frame images and
	// chunks, from the movie's rendition.
	Images  FrameImages
	Catalog MovieCatalog
	// MaxUploadBytes is the largest file POST /movies accepts
	// (MOVIE_MAX_BYTES; default DefaultMaxUploadBytes); UploadExpiry how
	// long its presigned PUT is valid, and after which a movie whose upload
	// never arrived expires (default DefaultUploadExpiry).
	MaxUploadBytes int64
	UploadExpiry   time.Duration
	// Multipart, when set, uploads a file larger than PartBytes in parts
	// for a client that asks for parts (multipart.go); PartBytes is
	// MOVIE_PART_BYTES (default DefaultPartBytes, at least
	// domain.MinPartBytes).
	Multipart MultipartFiles
	PartBytes int64
	// Metrics, when set, receives the API's business metrics (EMF): a
	// LeaseConflicts count per 409 lease_held or lease_lost.
	Metrics *emf.Writer
}

// Handler is the browser API.
type Handler struct {
	cfg      Config
	mux      *http.ServeMux
	patterns []string // every route's pattern, in registration order
}

// DefaultEditIdle is how long an editor may go without an edit before the
// page asks "Still editing?".
const DefaultEditIdle = 10 * time.Minute

// MaxBodyBytes bounds every request body.
const MaxBodyBytes = 64 << 10

// HeaderLeaseID carries the browser's analysis lease ID.
const HeaderLeaseID = "Lease-Id"

// New returns the handler, or an error when a dependency is missing.
func New(c Config) (*Handler, error) {
	switch {
	case c.Movies == nil:
		return nil, errors.New("httpapi: no movie store")
	case c.Frames == nil:
		return nil, errors.New("httpapi: no frame reader")
	case c.History == nil:
		return nil, errors.New("httpapi: no history reader")
	case c.Auth == nil:
		return nil, errors.New("httpapi: no authenticator")
	case c.Logger == nil:
		return nil, errors.New("httpapi: no logger")
	case c.LeaseDuration <= 0:
		return nil, errors.New("httpapi: lease duration must be positive")
	case c.MaxUploadBytes < 0 || c.UploadExpiry < 0:
		return nil, errors.New("httpapi: upload limits must not be negative")
	case c.PartBytes != 0 && c.PartBytes < domain.MinPartBytes:
		return nil, fmt.Errorf("httpapi: a part must be at least %d bytes", domain.MinPartBytes)
	}
	if c.PartBytes == 0 {
		c.PartBytes = DefaultPartBytes
	}
	if c.Multipart != nil && c.MaxUploadBytes > c.PartBytes*domain.MaxParts {
		return nil, fmt.Errorf("httpapi: a limit of %d bytes needs parts of at least %d bytes (S3 takes %d parts)",
			c.MaxUploadBytes, (c.MaxUploadBytes+domain.MaxParts-1)/domain.MaxParts, domain.MaxParts)
	}
	if c.Images == nil {
		c.Images = unconfigured{}
	}
	if c.Files == nil {
		c.Files = unconfigured{}
	}
	if c.Catalog == nil {
		c.Catalog = unconfigured{}
	}
	if c.MaxUploadBytes == 0 {
		c.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if c.EditIdle <= 0 {
		c.EditIdle = DefaultEditIdle
	}
	if c.UploadExpiry == 0 {
		c.UploadExpiry = DefaultUploadExpiry
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NewID == nil {
		c.NewID = token.New
	}
	h := &Handler{cfg: c, mux: http.NewServeMux()}
	h.routes()
	return h, nil
}

// identity says whether a route needs to know who is calling.
type identity int

const (
	identityRequired identity = iota
	// identityNone: the OpenAPI document, which holds no data.
	identityNone
	// identityOptional: the beacon release. navigator.sendBeacon cannot send
	// an Authorization header, and the lease ID in its body is the whole
	// capability that Release needs (it names no user).
	identityOptional
)

// call is what a route function gets besides the request.
type call struct {
	user    domain.User // zero when the route's identity is not required
	movieID string      // validated; "" on routes without {id}
	now     time.Time
}

type routeFunc func(w http.ResponseWriter, r *http.Request, c call) error

func (h *Handler) routes() {
	h.handle("GET /movies", identityRequired, h.listMovies)
	h.handle("POST /movies", identityRequired, h.createMovie)
	h.handle("GET /movies/{id}", identityRequired, h.getMovie)
	h.handle("DELETE /movies/{id}", identityRequired, h.deleteMovie)
	h.handle("PUT /movies/{id}/title", identityRequired, h.renameMovie)
	h.handle("POST /movies/{id}/upload/parts", identityRequired, h.uploadParts)
	h.handle("POST /movies/{id}/upload/complete", identityRequired, h.completeUpload)
	h.handle("POST /movies/{id}/upload/abort", identityRequired, h.abortUpload)
	h.handle("GET /movies/{id}/frames/{n}/image", identityRequired, h.frameImage)
	h.handle("GET /movies/{id}/chunks/{k}", identityRequired, h.chunk)
	h.handle("POST /movies/{id}/analysis-lease", identityRequired, h.openAnalysis)
	h.handle("PUT /movies/{id}/analysis-lease", identityRequired, h.heartbeat)
	h.handle("DELETE /movies/{id}/analysis-lease", identityRequired, h.release)
	h.handle("POST /movies/{id}/analysis-lease/release", identityOptional, h.releaseBeacon)
	h.handle("POST /movies/{id}/analysis-lease/release-request", identityRequired, h.askRelease)
	h.handle("PUT /movies/{id}/markers", identityRequired, h.editMarkers)
	h.handle("PUT /movies/{id}/keys", identityRequired, h.correctPoint)
	h.handle("PUT /movies/{id}/trim", identityRequired, h.editTrim)
	h.handle("PUT /movies/{id}/capture-interval", identityRequired, h.editCaptureInterval)
	h.handle("PUT /movies/{id}/calibration", identityRequired, h.editCalibration)
	h.handle("DELETE /movies/{id}/calibration", identityRequired, h.clearCalibration)
	h.handle("POST /movies/{id}/traces", identityRequired, h.startTrace)
	h.handle("POST /movies/{id}/traces/cancel", identityRequired, h.cancelTrace)
	h.handle("GET /movies/{id}/frames", identityRequired, h.frames)
	h.handle("GET /movies/{id}/results", identityRequired, h.results)
	h.handle("GET /movies/{id}/history", identityRequired, h.history)
	h.handle("GET /openapi.json", identityNone, h.openAPI)

	// Problems instead of net/http's plain-text 404 and 405.
	allowed := map[string][]string{}
	for _, p := range h.patterns {
		method, path, _ := strings.Cut(p, " ")
		allowed[path] = append(allowed[path], method)
	}
	for path, methods := range allowed {
		allow := strings.Join(methods, ", ")
		h.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			stateOf(r).route = path
			w.Header().Set("Allow", allow)
			h.writeProblem(w, r, Problem{Code: CodeMethodNotAllowed, Detail: "allowed: " + allow})
		})
	}
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		stateOf(r).route = "(unmatched)"
		h.writeProblem(w, r, Problem{Code: domain.CodeNotFound, Detail: "no such route"})
	})
}

// Patterns lists every route's method and path pattern.
func (h *Handler) Patterns() []string { return append([]string(nil), h.patterns...) }

func (h *Handler) handle(pattern string, id identity, fn routeFunc) {
	h.patterns = append(h.patterns, pattern)
	h.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		st := stateOf(r)
		st.route = pattern
		c := call{now: h.cfg.Now()}
		if strings.Contains(pattern, "{id}") {
			movieID := r.PathValue("id")
			if !domain.ValidMovieID(movieID) {
				// Nothing can exist at this URL; the ID never reaches the
				// store or the log.
				h.writeProblem(w, r, Problem{Code: domain.CodeNotFound,
					Detail: "no movie has this ID (movie IDs are 1-64 of A-Z a-z 0-9 _ -)"})
				return
			}
			st.movieID, c.movieID = movieID, movieID
		}
		if id != identityNone {
			user, err := h.cfg.Auth.Authenticate(r)
			switch {
			case err == nil:
				st.userID, c.user = user.ID, user
			case id == identityRequired:
				h.writeError(w, r, err)
				return
			}
		}
		w.Header().Set("Cache-Control", "no-store")
		if err := fn(w, r, c); err != nil {
			h.writeError(w, r, asRefusal(err))
		}
	})
}

// state is what the access log line reports about a request.
type state struct {
	requestID    string
	awsRequestID string
	route        string
	movieID      string
	userID       string
	code         domain.Code
	internal     error
}

type stateKey struct{}

// stateOf returns the request's log state; requests that did not come
// through ServeHTTP (never, in practice) get a throwaway one.
func stateOf(r *http.Request) *state {
	if st, ok := r.Context().Value(stateKey{}).(*state); ok {
		return st
	}
	return &state{}
}

// statusWriter records the status for the access line.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ServeHTTP runs the request and writes its one access line: requestId,
// method, route (the pattern, never the raw path), movieId, status, code,
// latencyMs, userId. The Lease-Id header and request bodies are never
// logged.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	st := &state{requestID: requestID(r)}
	if lc, ok := core.GetRuntimeContextFromContextV2(r.Context()); ok && lc != nil {
		st.awsRequestID = lc.AwsRequestID
	}
	r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
	sw := &statusWriter{ResponseWriter: w}
	sw.Header().Set("X-Request-Id", st.requestID)
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			st.internal = fmt.Errorf("panic: %v", p)
			if sw.status == 0 {
				h.writeProblem(sw, r, Problem{Code: CodeInternal, Detail: "The request could not be completed. Try again later."})
			}
		}
		h.logRequest(r.Context(), r.Method, st, sw.status, time.Since(start))
	}()
	h.mux.ServeHTTP(sw, r)
}

func (h *Handler) logRequest(ctx context.Context, method string, st *state, status int, latency time.Duration) {
	if status == 0 {
		status = http.StatusOK
	}
	attrs := []slog.Attr{
		slog.String("requestId", st.requestID),
		slog.String("method", method),
		slog.String("route", st.route),
		slog.String("movieId", st.movieID),
		slog.Int("status", status),
		slog.String("code", string(st.code)),
		slog.Float64("latencyMs", float64(latency.Microseconds())/1000),
		slog.String("userId", st.userID),
	}
	if st.awsRequestID != "" {
		attrs = append(attrs, slog.String("awsRequestId", st.awsRequestID))
	}
	level := logLevel(status)
	if st.internal != nil {
		level = slog.LevelError
		attrs = append(attrs, slog.String("error", events.RedactIDs(st.internal.Error())))
	}
	h.cfg.Logger.LogAttrs(ctx, level, "request", attrs...)
}

// requestID is the API Gateway request ID inside Lambda, else a fresh one.
// (64 bits: enough to find a log line, and never shaped like a lease ID.)
func requestID(r *http.Request) string {
	if rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok && rc.RequestID != "" && len(rc.RequestID) <= 128 && printable(rc.RequestID) {
		return rc.RequestID
	}
	return token.New()[:16]
}
