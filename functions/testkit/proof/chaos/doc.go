// Package chaos is issue 20's "Done when" as a reproducible run: the local
// stack (`make run`'s, functions/local/stack) started on DynamoDB Local
// behind a proxy that loses CHAOS_SHARE (default 30%) of the write answers
// after commit, and the S3 emulator behind one losing as many answers to
// deletes and untagging (functions/local/lossy; local only). A client that
// retries as the page does uploads movies (one of them garbage), traces
// every sample and upload, deletes some; half way the process is killed (every
// invocation in flight cancelled between two writes: ingests, trace
// segments, a purge) and a new stack is started on the same tables, queues
// and bucket. Once everything has settled, the run counts, from DynamoDB
// Local and the S3 emulator directly:
//
//   - ghost_movies: movie rows nobody created or that outlived their delete;
//   - orphaned_objects: S3 objects and frame rows of movies that do not exist;
//   - sources_at_risk: ingested movies whose upload is still tagged pending
//     (the bucket's lifecycle would delete it);
//   - unsettled_movies: movies not ended ready/traced/failed with a reason;
//   - unended_traces: started traces with no terminal state;
//
// each of which must be 0, and appends them with the injected faults to
// PROOF_COUNTS. It runs only with PROOF_CHAOS=1 (`make proof`, `make
// chaos-run`): it takes minutes.
package chaos
