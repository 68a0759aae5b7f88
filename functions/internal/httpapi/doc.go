// Package httpapi is the browser API as a net/http handler: the same code
// serves the local stack and, through aws-lambda-go-api-proxy's v2 adapter,
// the API Lambda behind an API Gateway HTTP API.
//
// Every write is one domain command committed by the movie store as one
// conditional write; the handler only decodes, authenticates and maps the
// domain's refusals to RFC 9457 problems (problems.go holds the one table).
//
// CORS: in AWS the HTTP API answers preflight requests and adds the CORS
// headers itself; locally the page is served from the same origin. So the
// handler has no CORS code on purpose.
//
// Lease IDs are capabilities. They appear in exactly one response, the 201
// of POST /movies/{id}/analysis-lease that grants them (and a job ID, which
// is the tracing lease's ID, only in the 202 of POST /movies/{id}/traces
// while its lease can be live), and never in a log line.
package httpapi
