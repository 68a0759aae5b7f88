package media

// CopyBatch is the most remuxed chunks in the temporary directory at once.
const CopyBatch = copyBatch
