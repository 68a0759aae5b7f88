// Package events owns the project's message formats: the domain events a
// change of a movie row implies (Derive, on domain values), the SQS
// trace-job body, the audit event's key, the history cursor, the one text
// form of a time and the redaction of IDs in text bound for logs.
//
// How a movie row is stored and how a stream image is read back into a
// domain.Movie is package schema's; the stream processor decodes a record
// there (schema.DecodeRecord) and derives the events here.
//
// The package imports no AWS package. A file that needs aws-lambda-go's
// events package as well imports that one as lambdaevents.
package events
