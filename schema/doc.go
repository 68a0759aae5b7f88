// Package schema is the storage form of the project's DynamoDB items: the
// attribute names of the movies, frames and audit tables, the movie, frame
// and audit items with their conversion to and from domain values, and the
// conversion of Lambda's stream images (and of records read with the
// DynamoDB Streams API) into SDK attribute values and decoded movie changes.
//
// Storage attribute names and tags live here, not in package domain, so the
// domain stays free of storage concerns while the store
// (functions/internal/dynamo), the stream processor and the CDK stack
// (infra: table keys, stream filters) share one spelling. It is not under
// functions/internal because infra imports it; it does no I/O.
//
// The domain events a change implies (events.Derive), the SQS job body and
// the ID redaction policy are package events'.
package schema
