package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// MovieFiles is the movies bucket as the API uses it (s3store.MovieFiles
// implements it): presigned uploads, frame image URLs, deletion.
type MovieFiles interface {
	// PresignUploadURL returns the PUT that uploads the movie's file
	// (exactly size bytes of contentType, valid for expires): its URL and
	// the headers the client must send.
	PresignUploadURL(ctx context.Context, movieID, contentType string, size int64, expires time.Duration) (url string, headers map[string]string, err error)
	// FrameImageURL returns a URL of frame n's image, valid for expires.
	FrameImageURL(ctx context.Context, movieID string, n int, expires time.Duration) (string, error)
}

// MovieCatalog creates movie rows (dynamo.MovieStore implements it): a
// conditional put of a new movie.
type MovieCatalog interface {
	Create(ctx context.Context, m domain.Movie) error
}

// unconfigured stands in for missing movie files or catalog.
type unconfigured struct{}

var errUnconfigured = errors.New("httpapi: no movie files or catalog configured")

func (unconfigured) PresignUploadURL(context.Context, string, string, int64, time.Duration) (string, map[string]string, error) {
	return "", nil, errUnconfigured
}
func (unconfigured) FrameImageURL(context.Context, string, int, time.Duration) (string, error) {
	return "", errUnconfigured
}
func (unconfigured) Create(context.Context, domain.Movie) error { return errUnconfigured }

// Defaults of the upload settings.
const (
	DefaultMaxUploadBytes = 2 << 30 // MOVIE_MAX_BYTES
	DefaultUploadExpiry   = time.Hour
	// FrameURLExpiry is how long a frame image URL is valid from its
	// signing time, which the store rounds down to FrameURLExpiry/2 so that
	// repeated requests get the same URL (s3store.FrameImageURL): a URL
	// handed out is valid for at least 10 minutes. The redirect to it may be
	// cached for FrameRedirectMaxAge, inside that.
	FrameURLExpiry      = 20 * time.Minute
	FrameRedirectMaxAge = 9 * time.Minute
)

// UploadView is the upload part of POST /movies: one PUT (Method PUT, URL,
// Headers), or, for a client that asked for parts and a file larger than
// one part, an upload in parts (Method MULTIPART, UploadID, PartBytes and
// every part's URL; see multipart.go).
type UploadView struct {
	Method    string            `json:"method"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers"`
	ExpiresAt string            `json:"expiresAt"`
	UploadID  string            `json:"uploadId,omitempty"`
	PartBytes int64             `json:"partBytes,omitempty"`
	Parts     []PartURL         `json:"parts,omitempty"`
}

// MovieCreated is the 201 of POST /movies.
type MovieCreated struct {
	Movie  MovieDetail `json:"movie"`
	Upload UploadView  `json:"upload"`
}

// POST /movies {title, fileName, contentType, sizeBytes, parts?}: a new
// movie awaiting its upload, and the presigned PUT that uploads it (with
// "parts": true and a file larger than one part, the presigned parts of a
// multipart upload instead). Creating is the domain's CreateMovie, stored by
// a conditional put.
func (h *Handler) createMovie(w http.ResponseWriter, r *http.Request, c call) error {
	body, err := readBody(w, r, true)
	if err != nil {
		return err
	}
	req, err := decodeCreateMovie(body)
	if err != nil {
		return err
	}
	cmd := domain.CreateMovie{
		ID: newMovieID(h.cfg.NewID()), Title: req.Title, MaxBytes: h.cfg.MaxUploadBytes, Now: c.now,
		Upload: domain.Upload{FileName: req.FileName, ContentType: req.ContentType, SizeBytes: req.SizeBytes,
			ExpiresAt: c.now.Add(h.cfg.UploadExpiry), AddedBy: c.user},
	}
	if err := cmd.Validate(); err != nil {
		return err
	}
	var upload UploadView
	if req.Parts && h.cfg.Multipart != nil && req.SizeBytes > h.cfg.PartBytes {
		upload, err = h.startMultipart(r.Context(), cmd.ID, req.ContentType, req.SizeBytes, cmd.Upload.ExpiresAt)
	} else {
		var url string
		var headers map[string]string
		url, headers, err = h.cfg.Files.PresignUploadURL(r.Context(), cmd.ID, req.ContentType, req.SizeBytes, h.cfg.UploadExpiry)
		upload = UploadView{Method: http.MethodPut, URL: url, Headers: headers, ExpiresAt: formatTime(cmd.Upload.ExpiresAt)}
	}
	if err != nil {
		return err
	}
	m := cmd.Movie()
	if err := h.cfg.Catalog.Create(r.Context(), m); err != nil {
		return err
	}
	stateOf(r).movieID = m.ID
	w.Header().Set("Location", "/movies/"+m.ID)
	return writeJSON(w, http.StatusCreated, MovieCreated{Movie: detail(m, c.now, c.user), Upload: upload})
}

// DELETE /movies/{id}: domain.DeleteMovie, one conditional write (no live
// lease, else 409 with the holder) that marks the movie deleting; from then
// on the API shows it as gone (404) and the sweeper removes its files, its
// traced frames and at last its row (purge.Finisher), however long that
// takes. A repeated DELETE of a deleting movie (a retry whose answer was
// lost) is the same 204; once the row is gone it is a 404.
func (h *Handler) deleteMovie(w http.ResponseWriter, r *http.Request, c call) error {
	if _, err := h.cfg.Movies.Commit(r.Context(), c.movieID, domain.DeleteMovie{Now: c.now}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// GET /movies/{id}/frames/{n}/image: 302 to the image of frame n (a
// presigned URL), the exact frame the tracer reads. The redirect may be
// cached privately, and the image (which never changes: a movie is ingested
// once) is served as immutable from a URL that stays the same for a while,
// so stepping back and forth reuses the browser's copy.
func (h *Handler) frameImage(w http.ResponseWriter, r *http.Request, c call) error {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 0 || n >= domain.MaxFrameCount || strconv.Itoa(n) != r.PathValue("n") {
		return &domain.Error{Code: domain.CodeNotFound, Field: "n", Message: "frame numbers are integers from 0"}
	}
	m, err := h.cfg.Movies.Get(r.Context(), c.movieID)
	if err != nil {
		return err
	}
	if m.Video == nil {
		return &domain.Error{Code: domain.CodeNotFound, Message: domain.NoVideoMessage(m)}
	}
	if n >= m.FrameCount {
		return &domain.Error{Code: domain.CodeNotFound, Field: "n", Message: "the movie has frames 0 to " + strconv.Itoa(m.FrameCount-1)}
	}
	url, err := h.cfg.Files.FrameImageURL(r.Context(), c.movieID, n, FrameURLExpiry)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "private, max-age="+strconv.Itoa(int(FrameRedirectMaxAge/time.Second)))
	w.Header().Set("Location", url)
	w.WriteHeader(http.StatusFound)
	return nil
}

// newMovieID is "mv-" and up to 20 characters of a fresh random ID.
func newMovieID(id string) string {
	if len(id) > 20 {
		id = id[:20]
	}
	return "mv-" + id
}

// createRequest is the body of POST /movies.
type createRequest struct {
	Title, FileName, ContentType string
	SizeBytes                    int64
	// Parts: the client can upload in parts.
	Parts bool
}

// decodeCreateMovie decodes {title, fileName, contentType, sizeBytes, parts?}
// strictly; the values themselves are the domain's to judge.
func decodeCreateMovie(data []byte) (createRequest, error) {
	var req createRequest
	var size int
	var titleSet, nameSet, typeSet, sizeSet, partsSet bool
	err := decodeObject(data, "", map[string]fieldFunc{
		"title":       stringField(&req.Title, &titleSet),
		"fileName":    stringField(&req.FileName, &nameSet),
		"contentType": stringField(&req.ContentType, &typeSet),
		"sizeBytes":   intField(&size, &sizeSet),
		"parts":       boolField(&req.Parts, &partsSet),
	})
	if err == nil {
		err = firstErr(required("title", titleSet), required("fileName", nameSet),
			required("contentType", typeSet), required("sizeBytes", sizeSet))
	}
	if err != nil {
		return createRequest{}, err
	}
	req.SizeBytes = int64(size)
	return req, nil
}
