// The API's words the page acts on, each named once: movie statuses, lock
// kinds, refusal codes and history event types (docs/api.md lists them).
'use strict';

export const STATUS = Object.freeze({
  AWAITING_UPLOAD: 'awaiting_upload',
  INGEST_FAILED: 'ingest_failed',
  READY: 'ready',
  TRACING: 'tracing',
  TRACED: 'traced',
  TRACING_FAILED: 'tracing_failed',
  TRACING_CANCELLED: 'tracing_cancelled',
});

export const LOCK = Object.freeze({ ANALYSIS: 'analysis', TRACING: 'tracing' });

export const CODE = Object.freeze({
  LEASE_HELD: 'lease_held',
  LEASE_LOST: 'lease_lost',
  LEASE_REQUIRED: 'lease_required',
  TRACING_IN_PROGRESS: 'tracing_in_progress',
  INVALID_INPUT: 'invalid_input',
  NOT_FOUND: 'not_found',
  MOVIE_NOT_READY: 'movie_not_ready',
  UNAUTHENTICATED: 'unauthenticated',
  NOT_TRACING: 'not_tracing',
  NOT_YOUR_TRACE: 'not_your_trace',
  SETTINGS_CHANGED: 'settings_changed',
});

// Refusals that mean this page no longer holds the lease it wrote with.
export const LEASE_GONE = Object.freeze([CODE.LEASE_LOST, CODE.LEASE_HELD, CODE.TRACING_IN_PROGRESS, CODE.LEASE_REQUIRED]);

export const EVENT = Object.freeze({
  STARTED: 'started', COMPLETED: 'completed', FAILED: 'failed', CANCELLED: 'cancelled', STOPPED: 'stopped',
  CALIBRATED: 'calibrated', UNCALIBRATED: 'uncalibrated',
});

export const ROUTE = Object.freeze({ LIST: 'list', ANALYZE: 'analyze', UNKNOWN: 'unknown' });
