package schema

// Attribute names of a movie item. Condition and update expressions use these
// constants, so the schema has one spelling.
const (
	AttrMovieID         = "movieId"
	AttrTitle           = "title"
	AttrFrameCount      = "frameCount"
	AttrFrameRate       = "frameRate"
	AttrStatus          = "status"
	AttrMarkers         = "markers"
	AttrKeys            = "keys"
	AttrTrimStart       = "trimStart"
	AttrTrimEnd         = "trimEnd"
	AttrCaptureInterval = "captureInterval"
	AttrLease           = "lease"
	AttrFramesWritten   = "framesWritten"
	AttrTotalFrames     = "totalFrames"
	AttrCleanBefore     = "cleanBefore"
	AttrLastJob         = "lastJob"
	AttrVersion         = "version"
	AttrUpdatedAt       = "updatedAt"
	AttrVideo           = "video"
	AttrUpload          = "upload"
	AttrIngestFailure   = "ingestFailure"
	AttrCalibration     = "calibration"
	// Path inside the upload map.
	AttrUploadExpiresAt = AttrUpload + ".expiresAt"

	// Paths inside the lease map.
	AttrLeaseKind        = AttrLease + ".kind"
	AttrLeaseID          = AttrLease + ".id"
	AttrLeaseUserID      = AttrLease + ".userId"
	AttrLeaseHeartbeatAt = AttrLease + ".heartbeatAt"
	AttrLeaseExpiresAt   = AttrLease + ".expiresAt"
	AttrLeaseClaimed     = AttrLease + ".claimed"
	AttrLeaseClaimToken  = AttrLease + ".claimToken"

	// Paths inside the last job map.
	AttrLastJobID     = AttrLastJob + ".jobId"
	AttrLastJobStatus = AttrLastJob + ".status"
	// AttrLastJobSummary is absent when the summary is empty (omitempty).
	AttrLastJobSummary = AttrLastJob + ".failureSummary"
	AttrLeaseSegment   = AttrLease + ".segment"
	AttrLeasePlanFrom  = AttrLease + ".planFrom"
)

// Attribute names of a frame item. The frames table's key is (movieId,
// frame); the job ID attribute is spelt like the audit table's (AttrJobID).
const (
	AttrFrameIndex = "frame"
	AttrPoints     = "points"
)

// Attribute names of an audit item. The table's key is (movieId, eventKey);
// its global secondary index HistoryIndex is (movieId, historyKey).
const (
	AttrEventKey   = "eventKey"
	AttrType       = "type"
	AttrJobID      = "jobId"
	AttrOccurredAt = "occurredAt"
	AttrHistoryKey = "historyKey"
)

// HistoryIndex is the audit table's global secondary index that orders a
// movie's items by time: partition key movieId, sort key historyKey
// ("<occurredAt>#<digest of eventKey>", events.HistoryPosition.IndexKey), all
// attributes projected. A history page is one Query of it, newest first.
const HistoryIndex = "history"
