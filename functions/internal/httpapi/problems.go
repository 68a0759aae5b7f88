package httpapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/emf"
	"github.com/movietrace/tracinglocks/schema"
)

// Codes the HTTP edge adds to the domain's vocabulary. They are part of the
// API contract (the `code` member of every problem), like the domain codes.
const (
	CodeMalformed        domain.Code = "malformed_request"      // 400: not JSON, unknown field, wrong type
	CodeUnauthenticated  domain.Code = "unauthenticated"        // 401: no identity
	CodeMethodNotAllowed domain.Code = "method_not_allowed"     // 405
	CodeTooLarge         domain.Code = "body_too_large"         // 413: over MaxBodyBytes
	CodeUnsupportedMedia domain.Code = "unsupported_media_type" // 415: a JSON body without application/json
	CodeUnreadable       domain.Code = "movie_unreadable"       // 500: the movie's stored row is malformed
	CodeInternal         domain.Code = "internal"               // 500: anything that is not a refusal
)

// ProblemTypeBase prefixes every problem's `type`: the type of a problem
// with code c is ProblemTypeBase + c (docs/api.md describes each).
const ProblemTypeBase = "https://tracinglocks.dev/problems/"

// problemKinds is the one mapping from refusal code to HTTP status and
// title. A code that is not here is a bug and becomes a 500.
var problemKinds = map[domain.Code]struct {
	status int
	title  string
}{
	domain.CodeNotFound:          {http.StatusNotFound, "Not found"},
	domain.CodeInvalid:           {http.StatusUnprocessableEntity, "Invalid value"},
	domain.CodeLeaseRequired:     {http.StatusPreconditionRequired, "Lease required"},
	domain.CodeLeaseHeld:         {http.StatusConflict, "Another browser is editing this movie"},
	domain.CodeTracingInProgress: {http.StatusConflict, "A trace is in progress"},
	domain.CodeLeaseLost:         {http.StatusConflict, "The lease is no longer held"},
	// Never reach the API in practice (the store turns not_held into a
	// successful release; claims are the worker's), mapped for completeness.
	domain.CodeAlreadyClaimed:  {http.StatusConflict, "Already claimed"},
	domain.CodeNotHeld:         {http.StatusConflict, "Not held"},
	domain.CodeExists:          {http.StatusConflict, "A movie with this ID exists"},
	domain.CodeNotTracing:      {http.StatusConflict, "No trace is running"},
	domain.CodeSettingsChanged: {http.StatusConflict, "The settings changed; try again"},
	domain.CodeNotYourTrace:    {http.StatusForbidden, "Only the user who started the trace can cancel it"},
	// The upload lifecycle.
	domain.CodeFileTooLarge:      {http.StatusRequestEntityTooLarge, "File too large"},
	domain.CodeNotVideo:          {http.StatusUnsupportedMediaType, "Not a video type"},
	domain.CodeNotAwaitingUpload: {http.StatusConflict, "The upload was already processed"},
	domain.CodeMovieNotReady:     {http.StatusConflict, "The movie has no ingested video"},

	CodeMalformed:        {http.StatusBadRequest, "Malformed request"},
	CodeUnauthenticated:  {http.StatusUnauthorized, "Authentication required"},
	CodeMethodNotAllowed: {http.StatusMethodNotAllowed, "Method not allowed"},
	CodeTooLarge:         {http.StatusRequestEntityTooLarge, "Request body too large"},
	CodeUnsupportedMedia: {http.StatusUnsupportedMediaType, "Unsupported media type"},
	CodeUnreadable:       {http.StatusInternalServerError, "Movie record unreadable"},
	CodeInternal:         {http.StatusInternalServerError, "Internal error"},
}

// Problem is the RFC 9457 body of every error response.
type Problem struct {
	Type     string      `json:"type"`
	Title    string      `json:"title"`
	Status   int         `json:"status"`
	Detail   string      `json:"detail"`
	Instance string      `json:"instance"`
	Code     domain.Code `json:"code"`
	// RequestID is the request ID of the log line, for support.
	RequestID string `json:"requestId"`
	// Field names the offending input of a 400 or 422.
	Field string `json:"field,omitempty"`
	// Holder describes the live lease behind a 409.
	Holder *HolderView `json:"holder,omitempty"`
}

// problemFor builds the problem for err. The second result is false for an
// error that is not a refusal: a generic 500 whose body says nothing of err.
func problemFor(err error) (Problem, bool) {
	e, ok := domain.AsError(err)
	if !ok {
		return Problem{Code: CodeInternal, Detail: "The request could not be completed. Try again later."}, false
	}
	kind, known := problemKinds[e.Code]
	if !known {
		return Problem{Code: CodeInternal, Detail: "The request could not be completed. Try again later."}, false
	}
	p := Problem{Code: e.Code, Detail: e.Message, Field: e.Field, Status: kind.status}
	if e.Holder != nil {
		v := holderView(*e.Holder)
		p.Holder = &v
	}
	return p, true
}

// writeError answers err as a problem. Only errors that are not refusals are
// logged here (at error level, with the error text); every request also gets
// its one access line from the logging middleware.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	st := stateOf(r)
	p, refusal := problemFor(err)
	if !refusal {
		st.internal = err
	}
	var bad *schema.MalformedMovieError
	if errors.As(err, &bad) {
		// Not a refusal (it is logged), but not a mystery either: this one
		// movie's row needs repair, the others are fine.
		p = Problem{Code: CodeUnreadable, Detail: "This movie's stored record cannot be read, so it cannot be shown or " +
			"changed until an operator repairs it. Other movies are not affected."}
	}
	h.writeProblem(w, r, p)
}

func (h *Handler) writeProblem(w http.ResponseWriter, r *http.Request, p Problem) {
	st := stateOf(r)
	kind := problemKinds[p.Code]
	p.Type = ProblemTypeBase + string(p.Code)
	p.Title = kind.title
	p.Status = kind.status
	p.Instance = r.URL.Path
	p.RequestID = st.requestID
	if p.Detail == "" {
		p.Detail = kind.title
	}
	st.code = p.Code
	h.countConflict(r, p.Code)
	if p.Code == CodeUnauthenticated {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tracinglocks"`)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// malformed is a 400: the body or query cannot be read as the request type.
type malformed struct {
	field  string
	reason string
}

func (e *malformed) Error() string { return e.field + ": " + e.reason }

// asRefusal turns the edge's own decode errors into domain-style refusals so
// that one table maps everything.
func asRefusal(err error) error {
	var m *malformed
	if errors.As(err, &m) {
		return &domain.Error{Code: CodeMalformed, Field: m.field, Message: m.reason}
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &domain.Error{Code: CodeTooLarge, Message: "the request body exceeds 64 KiB"}
	}
	return err
}

// logLevel is the level of a request's access line.
func logLevel(status int) slog.Level {
	if status >= 500 {
		return slog.LevelError
	}
	return slog.LevelInfo
}

// countConflict counts a 409 lease_held or lease_lost as a LeaseConflicts
// metric (package emf): the reason only, nothing of the request.
func (h *Handler) countConflict(r *http.Request, code domain.Code) {
	if h.cfg.Metrics == nil || (code != domain.CodeLeaseHeld && code != domain.CodeLeaseLost) {
		return
	}
	err := h.cfg.Metrics.Emit(map[string]string{emf.DimensionFunction: string(emf.API), emf.DimensionReason: string(code)},
		emf.Metric{Name: emf.LeaseConflicts, Value: 1, Unit: emf.Count})
	if err != nil {
		h.cfg.Logger.WarnContext(r.Context(), "could not write metrics", slog.String("error", err.Error()))
	}
}
