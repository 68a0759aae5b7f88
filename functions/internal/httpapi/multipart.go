package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/movietrace/tracinglocks/domain"
)

// MultipartFiles is the multipart upload of a large movie file
// (s3store.Store implements it). Without it POST /movies always answers one
// presigned PUT.
type MultipartFiles interface {
	CreateMultipart(ctx context.Context, movieID, contentType string) (uploadID string, err error)
	PresignPart(ctx context.Context, movieID, uploadID string, n int32, expires time.Duration) (string, error)
	CompleteMultipart(ctx context.Context, movieID, uploadID string, parts []domain.UploadPart) error
	AbortMultipart(ctx context.Context, movieID, uploadID string) error
}

// Part sizes of a multipart upload.
const (
	// DefaultPartBytes is the part size (MOVIE_PART_BYTES): a file larger
	// than one part is uploaded in parts, when the client asks for parts.
	DefaultPartBytes = 16 << 20
)

// PartURL is the presigned PUT of one part.
type PartURL struct {
	Number int    `json:"partNumber"`
	URL    string `json:"url"`
}

// PartURLs answers POST /movies/{id}/upload/parts.
type PartURLs struct {
	Parts     []PartURL `json:"parts"`
	ExpiresAt string    `json:"expiresAt"`
}

// startMultipart begins the upload of a new movie's file in parts and
// presigns every part.
func (h *Handler) startMultipart(ctx context.Context, id, contentType string, size int64, expiresAt time.Time) (UploadView, error) {
	uploadID, err := h.cfg.Multipart.CreateMultipart(ctx, id, contentType)
	if err != nil {
		return UploadView{}, err
	}
	n := domain.PartCount(size, h.cfg.PartBytes)
	numbers := make([]int, n)
	for i := range numbers {
		numbers[i] = i + 1
	}
	parts, err := h.presignParts(ctx, id, uploadID, numbers)
	if err != nil {
		return UploadView{}, err
	}
	return UploadView{Method: MethodMultipart, UploadID: uploadID, PartBytes: h.cfg.PartBytes, Parts: parts,
		Headers: map[string]string{}, ExpiresAt: formatTime(expiresAt)}, nil
}

// MethodMultipart is UploadView.Method of an upload in parts: PUT each
// part's body to its URL, keep the ETag header of each answer, then POST
// /movies/{id}/upload/complete.
const MethodMultipart = "MULTIPART"

func (h *Handler) presignParts(ctx context.Context, id, uploadID string, numbers []int) ([]PartURL, error) {
	out := make([]PartURL, len(numbers))
	for i, n := range numbers {
		url, err := h.cfg.Multipart.PresignPart(ctx, id, uploadID, int32(n), h.cfg.UploadExpiry)
		if err != nil {
			return nil, err
		}
		out[i] = PartURL{Number: n, URL: url}
	}
	return out, nil
}

// awaitingUpload reads the movie and refuses unless its file is still
// awaited.
func (h *Handler) awaitingUpload(ctx context.Context, id string) (domain.Movie, error) {
	if h.cfg.Multipart == nil {
		return domain.Movie{}, &domain.Error{Code: domain.CodeNotFound, Message: "uploads in parts are not configured"}
	}
	m, err := h.cfg.Movies.Get(ctx, id)
	if err != nil {
		return domain.Movie{}, err
	}
	if m.Status == domain.StatusDeleting {
		return domain.Movie{}, &domain.Error{Code: domain.CodeNotFound, Message: domain.NoVideoMessage(m)}
	}
	if m.Status != domain.StatusAwaitingUpload {
		return m, &domain.Error{Code: domain.CodeNotAwaitingUpload, Message: "This movie's file was already received, failed or expired; a new file needs a new movie."}
	}
	return m, nil
}

// POST /movies/{id}/upload/parts {uploadId, partNumbers}: fresh URLs for
// parts still to send (a resumed upload, or URLs that expired).
func (h *Handler) uploadParts(w http.ResponseWriter, r *http.Request, c call) error {
	body, err := readBody(w, r, true)
	if err != nil {
		return err
	}
	uploadID, numbers, err := decodePartNumbers(body)
	if err != nil {
		return err
	}
	if _, err := h.awaitingUpload(r.Context(), c.movieID); err != nil {
		return err
	}
	parts, err := h.presignParts(r.Context(), c.movieID, uploadID, numbers)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, PartURLs{Parts: parts, ExpiresAt: formatTime(c.now.Add(h.cfg.UploadExpiry))})
}

// POST /movies/{id}/upload/complete {uploadId, parts: [{partNumber, etag}]}:
// the parts, in order, become the movie's file (its ingest follows).
func (h *Handler) completeUpload(w http.ResponseWriter, r *http.Request, c call) error {
	body, err := readBody(w, r, true)
	if err != nil {
		return err
	}
	uploadID, parts, err := decodeCompletedParts(body)
	if err != nil {
		return err
	}
	m, err := h.awaitingUpload(r.Context(), c.movieID)
	if domain.ErrorCode(err) == domain.CodeNotAwaitingUpload && m.Video != nil {
		// A retry whose first answer was lost: the file arrived and was
		// ingested; the movie as it now is.
		return writeJSON(w, http.StatusOK, detail(m, c.now, c.user))
	}
	if err != nil {
		return err
	}
	if m.Upload != nil {
		if want := domain.PartCount(m.Upload.SizeBytes, h.cfg.PartBytes); len(parts) != want {
			return domain.Invalid("parts", "the file of %d bytes is %d parts of %d bytes; %d were listed", m.Upload.SizeBytes, want, h.cfg.PartBytes, len(parts))
		}
	}
	if err := h.cfg.Multipart.CompleteMultipart(r.Context(), c.movieID, uploadID, parts); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, detail(m, c.now, c.user))
}

// POST /movies/{id}/upload/abort {uploadId}: the parts sent are discarded
// (a cancelled upload); the movie stays awaiting its file until deleted or
// expired.
func (h *Handler) abortUpload(w http.ResponseWriter, r *http.Request, c call) error {
	body, err := readBody(w, r, true)
	if err != nil {
		return err
	}
	uploadID, err := decodeAbort(body)
	if err != nil {
		return err
	}
	// The movie's file may have arrived meanwhile (a cancel racing the
	// last part): aborting is then a no-op; only an unknown or deleted
	// movie is refused.
	if _, err := h.awaitingUpload(r.Context(), c.movieID); err != nil && domain.ErrorCode(err) != domain.CodeNotAwaitingUpload {
		return err
	}
	if err := h.cfg.Multipart.AbortMultipart(r.Context(), c.movieID, uploadID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// validUploadID: S3's upload IDs are opaque printable strings; bound them.
func validUploadID(id string) error {
	if id == "" || len(id) > 1024 {
		return domain.Invalid("uploadId", "must be 1-1024 bytes")
	}
	for _, r := range id {
		if r < 0x21 || r > 0x7e {
			return domain.Invalid("uploadId", "must be printable ASCII")
		}
	}
	return nil
}

// decodePartNumbers decodes {uploadId, partNumbers: [n, ...]}: 1-domain.MaxParts
// distinct numbers, each 1-domain.MaxParts.
func decodePartNumbers(data []byte) (string, []int, error) {
	var uploadID string
	var idSet, listSet bool
	var numbers []int
	err := decodeObject(data, "", map[string]fieldFunc{
		"uploadId": stringField(&uploadID, &idSet),
		"partNumbers": func(path string, raw json.RawMessage) error {
			listSet = true
			seen := map[int]bool{}
			return decodeArray(path, raw, domain.MaxParts, func(path string, raw json.RawMessage) error {
				var n int
				var set bool
				if err := intField(&n, &set)(path, raw); err != nil {
					return err
				}
				if n < 1 || n > domain.MaxParts || seen[n] {
					return domain.Invalid(path, "part numbers are distinct integers 1-%d", domain.MaxParts)
				}
				seen[n] = true
				numbers = append(numbers, n)
				return nil
			})
		},
	})
	if err == nil {
		err = firstErr(required("uploadId", idSet), required("partNumbers", listSet), validUploadID(uploadID))
	}
	if err == nil && len(numbers) == 0 {
		err = domain.Invalid("partNumbers", "at least one part")
	}
	return uploadID, numbers, err
}

// decodeCompletedParts decodes {uploadId, parts: [{partNumber, etag}]}: the
// parts numbered 1, 2, ... in order, each with its ETag.
func decodeCompletedParts(data []byte) (string, []domain.UploadPart, error) {
	var uploadID string
	var idSet, listSet bool
	var parts []domain.UploadPart
	err := decodeObject(data, "", map[string]fieldFunc{
		"uploadId": stringField(&uploadID, &idSet),
		"parts": func(path string, raw json.RawMessage) error {
			listSet = true
			return decodeArray(path, raw, domain.MaxParts, func(path string, raw json.RawMessage) error {
				var n int
				var etag string
				var nSet, eSet bool
				err := decodeObject(raw, path, map[string]fieldFunc{
					"partNumber": intField(&n, &nSet),
					"etag":       stringField(&etag, &eSet),
				})
				if err == nil {
					err = firstErr(required(path+".partNumber", nSet), required(path+".etag", eSet))
				}
				if err == nil && n != len(parts)+1 {
					err = domain.Invalid(path+".partNumber", "parts are listed in order from 1 without gaps")
				}
				if err == nil && (etag == "" || len(etag) > 200) {
					err = domain.Invalid(path+".etag", "must be the ETag S3 answered for the part (1-200 bytes)")
				}
				parts = append(parts, domain.UploadPart{Number: int32(n), ETag: etag})
				return err
			})
		},
	})
	if err == nil {
		err = firstErr(required("uploadId", idSet), required("parts", listSet), validUploadID(uploadID))
	}
	if err == nil && len(parts) == 0 {
		err = domain.Invalid("parts", "at least one part")
	}
	return uploadID, parts, err
}

// PUT /movies/{id}/title {title}: the domain's RenameMovie (nobody else is
// editing or tracing it).
func (h *Handler) renameMovie(w http.ResponseWriter, r *http.Request, c call) error {
	body, err := readBody(w, r, true)
	if err != nil {
		return err
	}
	title, err := decodeTitle(body)
	if err != nil {
		return err
	}
	m, err := h.cfg.Movies.Commit(r.Context(), c.movieID, domain.RenameMovie{UserID: c.user.ID, Title: title, Now: c.now})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, detail(m, c.now, c.user))
}

// decodeAbort decodes {uploadId}.
func decodeAbort(data []byte) (string, error) {
	var uploadID string
	var set bool
	if err := decodeObject(data, "", map[string]fieldFunc{"uploadId": stringField(&uploadID, &set)}); err != nil {
		return "", err
	}
	if err := firstErr(required("uploadId", set), validUploadID(uploadID)); err != nil {
		return "", err
	}
	return uploadID, nil
}

// decodeTitle decodes {title}; the domain's RenameMovie judges the title.
func decodeTitle(data []byte) (string, error) {
	var title string
	var set bool
	if err := decodeObject(data, "", map[string]fieldFunc{"title": stringField(&title, &set)}); err != nil {
		return "", err
	}
	if err := required("title", set); err != nil {
		return "", err
	}
	return title, nil
}
