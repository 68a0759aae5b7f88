// Every write with the lease: settings, starting and cancelling a trace. A
// refusal is shown next to the control it concerns, else in the message
// area.
'use strict';

import { state, commit } from '../state.js';
import { say, fieldError, focusEl } from '../dom.js';
import { api, APIError, moviePath, errorText, controlFor } from '../api.js';
import { CODE, LEASE_GONE } from '../constants.js';
import { invalidText, tracedOf } from '../facts.js';
import { lostLease, handedToTrace } from './lease.js';
import { loadMovie, schedulePoll } from './movie.js';

// markDirty / markClean: settings inputs changed and not saved.
export function markDirty(...ids) {
  const dirty = new Set(state.dirty);
  for (const id of ids) dirty.add(id);
  commit({ dirty });
}

function markClean(ids) {
  const dirty = new Set(state.dirty);
  for (const id of ids) dirty.delete(id);
  commit({ dirty });
}

// write runs one edit (control: where its refusal is shown).
export async function write(what, fn, inputs = [], control = '') {
  const gen = state.generation;
  try {
    const m = await fn();
    if (gen !== state.generation) return false;
    for (const id of inputs) fieldError(id, '');
    markClean(inputs);
    if (m && m.id) commit({ movie: m }); else await loadMovie(gen);
    say(what + ' saved.', 'ok');
    return true;
  } catch (err) {
    if (gen !== state.generation) return false;
    showRefusal(err, control);
    if (err instanceof APIError && LEASE_GONE.includes(err.code)) lostLease();
    try { await loadMovie(gen); } catch { /* shown above */ }
    return false;
  }
}

export function showRefusal(err, control) {
  const target = (err instanceof APIError && controlFor(err.field)) || control;
  if (err instanceof APIError && err.code === CODE.INVALID_INPUT && target) {
    fieldError(target, invalidText(state.movie, target));
    const i = document.getElementById(target === 'markers' ? 'add-marker' : target);
    if (i) i.focus();
    say('Not saved: see the highlighted field.', 'error');
  } else {
    say(errorText(err), 'error');
  }
}

// saveSettings writes what differs from the stored settings (f: the form's
// checked values {start, end, interval, from}).
export async function saveSettings(f) {
  const m = state.movie;
  if (f.start !== m.trim.start || f.end !== m.trim.end) {
    const ok = await write('Trim', () => api('PUT', moviePath(state.movieId) + '/trim',
      { leaseId: state.leaseId, body: { start: f.start, end: f.end } }), ['trim-start', 'trim-end'], 'trim-end');
    if (!ok) return false;
  }
  if (f.interval !== state.movie.captureInterval) {
    const ok = await write('Capture interval', () => api('PUT', moviePath(state.movieId) + '/capture-interval',
      { leaseId: state.leaseId, body: { captureInterval: f.interval } }), ['capture-interval'], 'capture-interval');
    if (!ok) return false;
  }
  markClean(['trim-start', 'trim-end', 'capture-interval']);
  return true;
}

// startTrace saves the form's settings, then starts a trace from f.from.
export async function startTrace(f) {
  if (!(await saveSettings(f))) return;
  await beginTrace(f.from, 'from-frame');
}

// beginTrace starts a trace from frame from with the stored settings
// (control: where a refusal of the frame is shown).
export async function beginTrace(from, control) {
  const gen = state.generation;
  try {
    await api('POST', moviePath(state.movieId) + '/traces', { leaseId: state.leaseId, body: { fromFrame: from } });
  } catch (err) {
    if (gen === state.generation) showRefusal(err, (err.field || '').startsWith('markers') ? 'markers' : control);
    return;
  }
  if (gen !== state.generation) return;
  handedToTrace();
  say('You started a trace. It is safe to leave this page and come back later.', 'ok');
  try { await loadMovie(gen); } catch { /* the poll retries */ }
  // Start trace disabled itself: focus goes to the progress it started.
  focusEl('#progress-title');
  schedulePoll(gen);
}

// startOrAsk starts a trace, or, when the movie has stored results, first
// asks whether to replace them (views/retrace.js shows the question).
export async function startOrAsk(f) {
  if (tracedOf(state.movie) > 0 || state.frames.length > 0) {
    commit({ retraceAsk: f });
    focusEl('#retrace-yes');
    return;
  }
  await startTrace(f);
}

// answerRetrace: replace the results (start the retrace asked for) or keep
// them.
export async function answerRetrace(yes) {
  const f = state.retraceAsk;
  commit({ retraceAsk: null });
  if (!f) return;
  if (yes) { await startTrace(f); return; }
  say('Retrace cancelled: the results are kept.', 'info');
  focusEl('#start-trace');
}

// cancelTrace stops this user's running trace; the frames it traced are
// kept. It answers whether the cancel was accepted.
export async function cancelTrace() {
  const gen = state.generation;
  try {
    const m = await api('POST', moviePath(state.movieId) + '/traces/cancel');
    if (gen !== state.generation) return false;
    commit({ movie: m });
  } catch (err) {
    if (gen !== state.generation) return false;
    say(err instanceof APIError && err.code === CODE.NOT_TRACING ? 'The trace had already ended.'
      : err instanceof APIError && err.code === CODE.NOT_YOUR_TRACE ? 'Only the person who started this trace can cancel it.' : errorText(err), 'error');
    try { await loadMovie(gen); } catch { /* the poll retries */ }
    return false;
  }
  try { await loadMovie(gen); } catch { /* the poll retries */ }
  return gen === state.generation;
}
