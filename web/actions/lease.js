// The analysis lease: acquire, renew (heartbeat), notice its loss, give it
// back. Owns the heartbeat timer.
'use strict';

import { state, commit } from '../state.js';
import { say, clearFieldErrors } from '../dom.js';
import { api, APIError, moviePath } from '../api.js';

let heartbeatTimer = null;
// pendingRelease settles when this page's last in-page release has been
// answered: reopening the movie just left must not ask for the lease while
// the old one is still being given back (the API would refuse it as held
// "in another tab" of the same user until the release lands). The wait is
// bounded (RELEASE_WAIT_MS): offline, the acquire is refused or fails like
// any other request.
let pendingRelease = Promise.resolve();
const RELEASE_WAIT_MS = 5000;

export function stopHeartbeat() {
  clearInterval(heartbeatTimer);
  heartbeatTimer = null;
}

// acquire asks for the analysis lease. It answers the lease, or throws the
// API's refusal; a lease granted to a page that moved on is given back.
export async function acquire(gen) {
  await Promise.race([pendingRelease, new Promise((ok) => setTimeout(ok, RELEASE_WAIT_MS))]);
  if (gen !== state.generation) return null;
  const id = state.movieId; // the page may have moved on (movieId null) by the answer
  const lease = await api('POST', moviePath(id) + '/analysis-lease');
  if (gen !== state.generation) { releaseBeacon(id, lease.leaseId); return null; }
  const leaseSeconds = lease.leaseSeconds || 900;
  commit({ leaseId: lease.leaseId, leaseSeconds, leaseExpiresAt: lease.expiresAt, leaseStartedAt: '', lostLease: false,
    idleSeconds: lease.idleSeconds || 600, idleAsk: null, notifyFree: false });
  stopHeartbeat();
  heartbeatTimer = setInterval(() => heartbeat(gen), Math.max(1, leaseSeconds / 3) * 1000);
  return lease;
}

export async function heartbeat(gen) {
  if (!state.leaseId || gen !== state.generation) return;
  const lease = state.leaseId;
  try {
    const r = await api('PUT', moviePath(state.movieId) + '/analysis-lease', { leaseId: lease });
    if (gen === state.generation && state.leaseId === lease) commit({ leaseExpiresAt: r.expiresAt, offline: false });
  } catch (err) {
    if (gen !== state.generation || state.leaseId !== lease) return;
    if (err instanceof APIError && err.status < 500) lostLease();
    else commit({ offline: true }); // try again at the next beat; the lease outlives two misses
  }
}

export function lostLease() {
  stopHeartbeat();
  clearFieldErrors();
  commit({ leaseId: null, lostLease: true, dirty: new Set() });
  say('You are no longer editing this movie: your editing lock lapsed or was taken over.', 'error');
}

// handedToTrace: the analysis lease became the tracing lease; nothing to
// renew or give back any more.
export function handedToTrace() {
  stopHeartbeat();
  commit({ leaseId: null, startedTrace: true, dirty: new Set() });
}

// release gives the lease back. On pagehide only a beacon is sure to leave
// the page; on an in-page navigation a normal request does.
export function release(unloading) {
  const id = state.movieId;
  const lease = state.leaseId;
  stopHeartbeat();
  if (!id || !lease) return;
  if (unloading) {
    releaseBeacon(id, lease);
  } else {
    pendingRelease = api('DELETE', moviePath(id) + '/analysis-lease', { leaseId: lease, keepalive: true })
      .catch(() => releaseBeacon(id, lease));
  }
}

// sendBeacon cannot set headers, so the release route takes the lease ID
// (the capability) in the body, with no identity.
function releaseBeacon(id, lease) {
  const body = new Blob([JSON.stringify({ leaseId: lease })], { type: 'application/json' });
  if (!navigator.sendBeacon(moviePath(id) + '/analysis-lease/release', body)) {
    fetch(moviePath(id) + '/analysis-lease/release', { method: 'POST', body, keepalive: true }).catch(() => {});
  }
}
