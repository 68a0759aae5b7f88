package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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
}

// FrameImages is the frame provider as the API uses it (media.Provider):
// frame n's image, decoded from the movie's rendition, and a URL of a whole
// chunk of it.
type FrameImages interface {
	Image(ctx context.Context, m domain.Movie, n int) ([]byte, error)
	ChunkURL(ctx context.Context, m domain.Movie, k int, expires time.Duration) (string, error)
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
func (unconfigured) Image(context.Context, domain.Movie, int) ([]byte, error) {
	return nil, errUnconfigured
}
func (unconfigured) ChunkURL(context.Context, domain.Movie, int, time.Duration) (string, error) {
	return "", errUnconfigured
}
func (unconfigured) Create(context.Context, domain.Movie) error { return errUnconfigured }

// Defaults of the upload settings.
const (
	DefaultMaxUploadBytes = 2 << 30 // MOVIE_MAX_BYTES
	// MaxPutBytes is the largest file one presigned PUT carries (S3's
	// limit of a single PUT): a larger one goes in parts.
	MaxPutBytes         = 5 << 30
	DefaultUploadExpiry = time.Hour
	// ChunkURLExpiry is how long a chunk's URL is valid; the redirect to
	// it may be cached for ChunkRedirectMaxAge, inside that.
	ChunkURLExpiry      = 20 * time.Minute
	ChunkRedirectMaxAge = 9 * time.Minute
	// FrameImageCacheControl: a frame's image never changes (a movie is
	// ingested once; a new file is a new movie with a new ID).
	FrameImageCacheControl = "private, max-age=31536000, immutable"
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
	id, keyed, err := createdID(r, c.user.ID, h.cfg.NewID)
	if err != nil {
		return err
	}
	cmd := domain.CreateMovie{
		ID: id, Title: req.Title, MaxBytes: h.cfg.MaxUploadBytes, Now: c.now,
		Upload: domain.Upload{FileName: req.FileName, ContentType: req.ContentType, SizeBytes: req.SizeBytes,
			ExpiresAt: c.now.Add(h.cfg.UploadExpiry), AddedBy: c.user},
	}
	if err := cmd.Validate(); err != nil {
		return err
	}
	inParts := req.Parts && h.cfg.Multipart != nil && req.SizeBytes > h.cfg.PartBytes
	if !inParts && req.SizeBytes > MaxPutBytes {
		// S3 would refuse the PUT only once the client has sent 5 GiB.
		msg := fmt.Sprintf("a file over %d bytes (5 GiB) cannot be uploaded in one PUT", MaxPutBytes)
		if h.cfg.Multipart == nil {
			msg += ", and this API has no upload in parts"
		} else {
			msg += ": ask for an upload in parts (\"parts\": true)"
		}
		return &domain.Error{Code: domain.CodeFileTooLarge, Field: "sizeBytes", Message: msg}
	}
	var upload UploadView
	if inParts {
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
		if keyed && domain.ErrorCode(err) == domain.CodeExists {
			return &domain.Error{Code: domain.CodeExists, Field: HeaderIdempotencyKey,
				Message: "this Idempotency-Key was already used for another movie; send a new key for a new movie"}
		}
		return err
	}
	if keyed {
		// A retry with the same key is answered with the movie as first
		// stored (its upload expiry); a fresh PUT URL is signed each time.
		if stored, err := h.cfg.Movies.Get(r.Context(), m.ID); err == nil && cmd.Replays(stored) {
			m = stored
		}
	}
	stateOf(r).movieID = m.ID
	w.Header().Set("Location", "/movies/"+m.ID)
	upload.ExpiresAt = formatTime(m.Upload.ExpiresAt)
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

// GET /movies/{id}/frames/{n}/image: frame n as a JPEG, decoded from the
// movie's rendition by the frame provider: the very frame the tracer reads
// (its luma within 40 dB PSNR of the tracer's gray), upright, in colour, at
// the rendition's size. It never changes, so the browser keeps it.
func (h *Handler) frameImage(w http.ResponseWriter, r *http.Request, c call) error {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 0 || n >= domain.MaxFrameCount || strconv.Itoa(n) != r.PathValue("n") {
		return &domain.Error{Code: domain.CodeNotFound, Field: "n", Message: "frame numbers are integers from 0"}
	}
	m, err := h.readyMovie(r, c)
	if err != nil {
		return err
	}
	if n >= m.FrameCount {
		return &domain.Error{Code: domain.CodeNotFound, Field: "n", Message: "the movie has frames 0 to " + strconv.Itoa(m.FrameCount-1)}
	}
	began := time.Now()
	img, err := h.cfg.Images.Image(r.Context(), m, n)
	if err != nil {
		return err
	}
	// How long the image took (a cached one ~0 ms; make bench-viewer reads it).
	w.Header().Set("Server-Timing", "image;dur="+strconv.FormatFloat(float64(time.Since(began).Microseconds())/1000, 'f', 1, 64))
	w.Header().Set("Content-Type", "image/jpeg")
	w.Header().Set("Cache-Control", FrameImageCacheControl)
	w.Header().Set("Content-Length", strconv.Itoa(len(img)))
	_, err = w.Write(img)
	return err
}

// GET /movies/{id}/chunks/{k}: chunk k of the movie's rendition (an H.264
// MP4 of Video.ChunkFrames frames, frames k*ChunkFrames on): a 302 to its
// presigned URL (a download, a <video>), or, when Accept names
// application/json, that URL in a ChunkView (the page, which decodes chunks
// itself with WebCodecs: a fetch that follows a redirect to another origin
// would carry the page's identity headers to S3).
func (h *Handler) chunk(w http.ResponseWriter, r *http.Request, c call) error {
	k, err := strconv.Atoi(r.PathValue("k"))
	if err != nil || k < 0 || strconv.Itoa(k) != r.PathValue("k") {
		return &domain.Error{Code: domain.CodeNotFound, Field: "k", Message: "chunk numbers are integers from 0"}
	}
	m, err := h.readyMovie(r, c)
	if err != nil {
		return err
	}
	if m.Video.ChunkFrames < 1 || k*m.Video.ChunkFrames >= m.FrameCount {
		return &domain.Error{Code: domain.CodeNotFound, Field: "k", Message: "the movie has no chunk " + strconv.Itoa(k)}
	}
	url, err := h.cfg.Images.ChunkURL(r.Context(), m, k, ChunkURLExpiry)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "private, max-age="+strconv.Itoa(int(ChunkRedirectMaxAge/time.Second)))
	w.Header().Add("Vary", "Accept")
	if listedTypes(strings.Join(r.Header.Values("Accept"), ","))["application/json"] {
		first := k * m.Video.ChunkFrames
		return writeJSON(w, http.StatusOK, ChunkView{Chunk: k, FirstFrame: first, FrameCount: min(m.Video.ChunkFrames, m.FrameCount-first),
			URL: url, ExpiresAt: formatTime(c.now.Add(ChunkURLExpiry))})
	}
	w.Header().Set("Location", url)
	w.WriteHeader(http.StatusFound)
	return nil
}

// readyMovie reads a movie that has a rendition.
func (h *Handler) readyMovie(r *http.Request, c call) (domain.Movie, error) {
	m, err := h.cfg.Movies.Get(r.Context(), c.movieID)
	if err != nil {
		return domain.Movie{}, err
	}
	if m.Video == nil {
		return domain.Movie{}, &domain.Error{Code: domain.CodeNotFound, Message: domain.NoVideoMessage(m)}
	}
	return m, nil
}

// HeaderIdempotencyKey makes POST /movies idempotent: the movie's ID is
// derived from the caller and the key, so a retry with the same key (after
// a lost answer) names the same movie and is answered 201 with it, while
// another request with the same key is a 409.
const HeaderIdempotencyKey = "Idempotency-Key"

// createdID is the new movie's ID: derived from the caller and the
// Idempotency-Key when one is sent (keyed), else fresh.
func createdID(r *http.Request, userID string, newID func() string) (id string, keyed bool, err error) {
	vs := r.Header.Values(HeaderIdempotencyKey)
	switch {
	case len(vs) == 0:
		return newMovieID(newID()), false, nil
	case len(vs) > 1:
		return "", false, &malformed{field: HeaderIdempotencyKey, reason: "must be sent once"}
	case !validIdempotencyKey(vs[0]):
		return "", false, domain.Invalid(HeaderIdempotencyKey, "must be 8-128 of A-Z a-z 0-9 - _ . :")
	}
	sum := sha256.Sum256([]byte(userID + "\x00" + vs[0]))
	return newMovieID(hex.EncodeToString(sum[:])), true, nil
}

func validIdempotencyKey(k string) bool {
	if len(k) < 8 || len(k) > 128 {
		return false
	}
	for _, c := range k {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("-_.:", c)) {
			return false
		}
	}
	return true
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
