// Analyze: opening a movie, the analysis lease (acquire, heartbeat, loss,
// release), polling, and every write.
'use strict';

import { preparingText } from './preparing.js';
import { $, state, show, say, fieldError, clearFieldErrors, focusEl } from './state.js';
import { api, APIError, moviePath, errorText, controlFor } from './api.js';
import { renderMovie } from './render.js';
import { stopPlayback, setFrame, resetImages } from './player.js';
import { loadFrames, resetResults } from './results.js';
import { loadHistory, resetHistory, historyChanged, historyDue } from './history.js';
import { fillSettings } from './settings.js';

const POLL_TRACING_MS = 1000;
const POLL_IDLE_MS = 2000;

export function editable() {
  return !!state.leaseId && !!state.movie && state.movie.status !== 'tracing';
}

export async function openAnalyze(id, gen) {
  resetAnalyze();
  state.movieId = id;
  show($('#analyze-view'), false);
  show($('#not-found'), false);
  show($('#not-ready'), false);
  try {
    await loadMovie(gen);
  } catch (err) {
    if (gen !== state.generation) return;
    if (err instanceof APIError && err.status === 404) {
      document.title = 'Movie not found - Movie tracing';
      show($('#not-found'), true);
      focusEl('#not-found-title');
    } else {
      say(errorText(err), 'error');
    }
    state.movieId = null;
    return;
  }
  if (gen !== state.generation) return;
  if (state.movie.status === 'awaiting_upload' || state.movie.status === 'ingest_failed') { showNotReady(id, gen); return; }
  fillSettings(true);
  setFrame(state.movie.trim.start); // open at the trim start
  show($('#analyze-view'), true);
  focusEl('#movie-title');
  await acquire(gen, { quiet: true });
  loadHistory(gen);
  schedulePoll(gen);
}

// showNotReady: a movie whose file has not arrived, or could not be read,
// cannot be analysed (the API refuses to open it); say why, in place of the
// editor. (A movie made without a file, as the samples without ffmpeg and
// the tests' seeded ones, is analysed on drawn stand-in frames.)
// While its file may still arrive, look again now and then.
function showNotReady(id, gen) {
  const m = state.movie;
  const waiting = m.status === 'awaiting_upload';
  $('#not-ready-title').textContent = m.title;
  const preparing = preparingText(m);
  $('#not-ready-reason').textContent = preparing
    ? preparing + '. The video has arrived; this page opens it when every frame is ready.'
    : waiting
    ? "This movie's video has not been uploaded yet. It can be analysed once its file has arrived and been read; this page opens it then."
    : "This movie's video could not be read" + (m.ingestFailure ? ': ' + m.ingestFailure : '.') + ' Upload the file again as a new movie.';
  document.title = m.title + ' (not ready) - Movie tracing';
  show($('#not-ready'), true);
  focusEl('#not-ready-title');
  if (waiting) {
    state.pollTimer = setTimeout(() => { if (gen === state.generation) { state.movieId = null; openAnalyze(id, gen); } }, POLL_IDLE_MS * 2);
  }
}

export function resetAnalyze() {
  stopPlayback();
  clearTimeout(state.pollTimer);
  clearInterval(state.heartbeatTimer);
  Object.assign(state, {
    movieId: null, movie: null, leaseId: null, leaseSeconds: 0, leaseExpiresAt: '', leaseStartedAt: '',
    lostLease: false, heartbeatTimer: null, pollTimer: null, frame: 0, selected: null,
    startedTrace: false, dirty: new Set(),
  });
  resetResults();
  resetImages();
  resetHistory();
  clearFieldErrors();
}

export async function loadMovie(gen) {
  const m = await api('GET', moviePath(state.movieId));
  if (gen !== state.generation) return;
  const was = state.movie;
  state.movie = m;
  checkLease(gen, m);
  renderMovie();
  // (Re)load the results whenever the stored frames may have changed.
  const key = m.status + '/' + (m.lastJob ? m.lastJob.jobId : '');
  if (m.status !== 'tracing' && key !== state.framesKey) {
    await loadFrames(gen, key);
    renderMovie();
  }
  if (((was && was.status === 'tracing') || state.startedTrace) && m.status !== 'tracing') traceFinished(gen, m);
  if (was && was.status !== m.status) historyChanged();
  if (historyDue()) loadHistory(gen);
}

// checkLease notices at once (at the next poll) that the lease this page
// holds is gone, instead of at the next heartbeat: the row shows no lock, or
// someone else's, or a newer one. A heartbeat then confirms it.
function checkLease(gen, m) {
  if (!state.leaseId) return;
  const l = m.lock;
  if (l && l.yours && l.kind === 'analysis') {
    if (!state.leaseStartedAt) state.leaseStartedAt = l.startedAt;
    if (l.startedAt === state.leaseStartedAt) return;
  }
  heartbeat(gen);
}

// acquire opens the analysis lease; refused, the page is view-only.
export async function acquire(gen, { quiet } = {}) {
  try {
    const lease = await api('POST', moviePath(state.movieId) + '/analysis-lease');
    if (gen !== state.generation) { releaseBeacon(state.movieId, lease.leaseId); return; }
    state.leaseId = lease.leaseId;
    state.leaseSeconds = lease.leaseSeconds || 900;
    state.leaseExpiresAt = lease.expiresAt;
    state.leaseStartedAt = '';
    state.lostLease = false;
    clearInterval(state.heartbeatTimer);
    state.heartbeatTimer = setInterval(() => heartbeat(gen), Math.max(1, state.leaseSeconds / 3) * 1000);
    await loadMovie(gen);
    if (!quiet) say('You are editing this movie now.', 'ok');
  } catch (err) {
    if (gen !== state.generation) return;
    state.leaseId = null;
    if (err instanceof APIError && (err.code === 'lease_held' || err.code === 'tracing_in_progress')) {
      if (!quiet) say(errorText(err), 'info');
      try { await loadMovie(gen); } catch { /* the poll retries */ }
    } else {
      say(errorText(err), 'error');
    }
  }
  renderMovie();
}

export async function heartbeat(gen) {
  if (!state.leaseId || gen !== state.generation) return;
  const lease = state.leaseId;
  try {
    const r = await api('PUT', moviePath(state.movieId) + '/analysis-lease', { leaseId: lease });
    if (gen === state.generation && state.leaseId === lease) { state.leaseExpiresAt = r.expiresAt; state.offline = false; renderMovie(); }
  } catch (err) {
    if (gen !== state.generation || state.leaseId !== lease) return;
    if (err instanceof APIError && err.status < 500) lostLease();
    else { state.offline = true; renderMovie(); } // try again at the next beat; the lease outlives two misses
  }
}

export function lostLease() {
  clearInterval(state.heartbeatTimer);
  state.heartbeatTimer = null;
  state.leaseId = null;
  state.lostLease = true;
  state.dirty.clear();
  clearFieldErrors();
  say('You are no longer editing this movie: your editing lock lapsed or was taken over.', 'error');
  renderMovie();
}

// leaveAnalyze gives the lease back. On pagehide only a beacon is sure to
// leave the page; on an in-page navigation a normal request does.
export function leaveAnalyze(unloading) {
  const id = state.movieId;
  const lease = state.leaseId;
  if (id && lease) {
    if (unloading) {
      releaseBeacon(id, lease);
    } else {
      api('DELETE', moviePath(id) + '/analysis-lease', { leaseId: lease, keepalive: true })
        .catch(() => releaseBeacon(id, lease));
    }
  }
  resetAnalyze();
}

// sendBeacon cannot set headers, so the release route takes the lease ID
// (the capability) in the body, with no identity.
function releaseBeacon(id, lease) {
  const body = new Blob([JSON.stringify({ leaseId: lease })], { type: 'application/json' });
  if (!navigator.sendBeacon(moviePath(id) + '/analysis-lease/release', body)) {
    fetch(moviePath(id) + '/analysis-lease/release', { method: 'POST', body, keepalive: true }).catch(() => {});
  }
}

export function schedulePoll(gen) {
  clearTimeout(state.pollTimer);
  const tracing = state.movie && state.movie.status === 'tracing';
  state.pollTimer = setTimeout(async () => {
    if (gen !== state.generation) return;
    try {
      await loadMovie(gen);
      if (state.offline && !state.leaseId) state.offline = false;
    } catch (err) {
      if (gen === state.generation) say(errorText(err), 'error');
    }
    if (gen === state.generation) schedulePoll(gen);
  }, tracing ? POLL_TRACING_MS : POLL_IDLE_MS);
}

function traceFinished(gen, m) {
  const job = m.lastJob;
  const mine = state.startedTrace || (job && job.yours);
  if (m.status === 'traced') say((mine ? 'Your trace finished: ' : 'The trace finished: ') + (job ? job.frames : 0) + ' frames traced. The results are loaded.', 'ok');
  else if (m.status === 'tracing_failed') say((mine ? 'Your trace failed. ' : 'The trace failed. ') + 'See Last trace for what was saved and what to do next.', 'error');
  else if (m.status === 'tracing_cancelled') say((mine ? 'You cancelled the trace. ' : 'The trace was cancelled. ') + 'The frames it traced are kept.', 'info');
  state.startedTrace = false;
  // The browser that started the trace (or its user, back after leaving)
  // continues editing; anyone else may choose "Start editing".
  if (mine && !state.leaseId && !m.lock) acquire(gen, { quiet: true });
}

// write runs one edit. A refusal is shown next to the control it concerns
// (control, or the one the API names), else in the message area.
export async function write(what, fn, inputs = [], control = '') {
  const gen = state.generation;
  try {
    const m = await fn();
    if (gen !== state.generation) return false;
    for (const id of inputs) { state.dirty.delete(id); fieldError(id, ''); }
    if (m && m.id) state.movie = m; else await loadMovie(gen);
    say(what + ' saved.', 'ok');
    renderMovie();
    return true;
  } catch (err) {
    if (gen !== state.generation) return false;
    showRefusal(err, control);
    if (err instanceof APIError && ['lease_lost', 'lease_held', 'tracing_in_progress', 'lease_required'].includes(err.code)) {
      lostLease();
    }
    try { await loadMovie(gen); } catch { /* shown above */ }
    renderMovie();
    return false;
  }
}

export function showRefusal(err, control) {
  const target = (err instanceof APIError && controlFor(err.field)) || control;
  if (err instanceof APIError && err.code === 'invalid_input' && target) {
    fieldError(target, invalidText(target));
    const i = document.getElementById(target === 'markers' ? 'add-marker' : target);
    if (i) i.focus();
    say('Not saved: see the highlighted field.', 'error');
  } else {
    say(errorText(err), 'error');
  }
}

export function invalidText(control) {
  const m = state.movie;
  const last = m ? m.frameCount - 1 : 0;
  switch (control) {
    case 'trim-start':
    case 'trim-end': return 'The trim must be within frames 0 to ' + last + ', with the first frame not after the last.';
    case 'capture-interval': return 'Use a whole number from 1 to 10000.';
    case 'from-frame': return m ? 'Start at a frame within the trim (' + m.trim.start + ' to ' + (m.trim.end - 1) + ').' : 'Start at a frame within the trim.';
    case 'markers': return 'Place at least one marker on the frame before you start a trace.';
    default: return 'That value is not allowed.';
  }
}

$('#acquire').addEventListener('click', async () => {
  await acquire(state.generation);
  if (state.leaseId) $('#add-marker').focus();
});
