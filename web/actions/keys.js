// Corrections (key frames, issue 24): the user moves a marker's traced
// point on the shown frame (a drag, or the arrow keys and Enter); saving it
// is PUT /movies/{id}/keys under the lease, and "Retrace from here" starts
// a trace from that frame, which keeps the frames before it.
'use strict';

import { state, commit } from '../state.js';
import { api, moviePath } from '../api.js';
import { correctable, pointOf, keyAt, isLost } from '../facts.js';
import { write, beginTrace } from './edit.js';

const clamp01 = (v) => Math.min(Math.max(v, 0), 1);
const round = (v) => +clamp01(v).toFixed(4);

// beginCorrection starts correcting marker markerId on the shown frame,
// from its traced point (its correction there if any; a lost point starts
// where the marker was placed).
export function beginCorrection(markerId, at) {
  const s = state;
  if (!correctable(s)) return false;
  const mk = (s.movie.markers || []).find((m) => m.id === markerId);
  if (!mk) return false;
  const key = keyAt(s.movie, markerId, s.frame);
  const p = pointOf(s, markerId, s.frame);
  const from = at || key || (!isLost(p) ? p : mk);
  commit({ correcting: { markerId, frame: s.frame, x: round(from.x), y: round(from.y) }, selected: null });
  return true;
}

// moveCorrection puts the point being corrected at (x, y) (fractions).
export function moveCorrection(x, y) {
  const c = state.correcting;
  if (!c) return;
  commit({ correcting: { ...c, x: round(x), y: round(y) } });
}

export function nudgeCorrection(dx, dy) {
  const c = state.correcting;
  if (c) moveCorrection(c.x + dx, c.y + dy);
}

export function cancelCorrection() {
  if (state.correcting) commit({ correcting: null });
}

// saveCorrection stores the point being corrected as a key frame of its
// marker. It answers whether it was saved; a refusal is said in the
// page's words (edit.js's write: settings_changed, a lost lease, ...).
export async function saveCorrection() {
  const c = state.correcting;
  if (!c || !state.leaseId) return false;
  const movie = state.movieId;
  const ok = await write('Correction', () => api('PUT', moviePath(movie) + '/keys',
    { leaseId: state.leaseId, body: { markerId: c.markerId, frame: c.frame, x: c.x, y: c.y } }), [], 'keys');
  if (state.movieId === movie) commit({ correcting: null });
  return ok;
}

// retraceFrom starts a trace from frame k: the frames before k are kept,
// the rest traced again from the corrections.
export async function retraceFrom(k) {
  if (state.correcting) commit({ correcting: null });
  await beginTrace(k, 'keys');
}
