package domain

// A large movie file is uploaded in parts (S3 multipart upload, presigned
// part by part): the facts both the API and the bucket adapter use.
const (
	// MinPartBytes is the smallest part but the last (S3's limit).
	MinPartBytes = 5 << 20
	// MaxParts is the most parts of one upload (S3's limit).
	MaxParts = 10000
)

// UploadPart is one uploaded part: its number (1-MaxParts) and the ETag the
// bucket answered for it.
type UploadPart struct {
	Number int32
	ETag   string
}

// PartCount is how many parts of partBytes a file of size bytes takes.
func PartCount(size, partBytes int64) int {
	if size <= 0 || partBytes <= 0 {
		return 0
	}
	return int((size + partBytes - 1) / partBytes)
}
