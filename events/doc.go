// Package events owns the project's wire formats: the movie item as the
// store writes it and the movies table's stream carries it, the conversion
// of Lambda's stream images into SDK attribute values, the domain events a
// change of a movie row implies, the SQS trace-job body and the audit item.
//
// Storage attribute names and tags live here, not in package domain, so the
// domain stays free of storage concerns while the store and the stream
// processor read and write one schema.
package events
