// Opening a movie in Analyze, polling it, and what follows from what a poll
// sees (the lease's loss, the trace's end, results and history to reload).
// Owns the poll timer.
'use strict';

import { state, commit, analysisFields } from '../state.js';
import { say, focusEl, clearFieldErrors } from '../dom.js';
import { api, APIError, moviePath, errorText } from '../api.js';
import { STATUS, LOCK, CODE } from '../constants.js';
import { notReady, framesKeyOf } from '../facts.js';
import { acquire, heartbeat, stopHeartbeat, release } from './lease.js';
import { loadFrames } from './frames.js';
import { loadHistory, resetHistory, historyChanged, historyDue } from './history.js';
import { stopPlayback } from './player.js';

const POLL_TRACING_MS = 1000;
const POLL_IDLE_MS = 2000;

let pollTimer = null;

export async function openAnalyze(id, gen) {
  resetAnalyze();
  commit({ movieId: id });
  try {
    await loadMovie(gen, { atStart: true }); // open at the trim start
  } catch (err) {
    if (gen !== state.generation) return;
    if (err instanceof APIError && err.status === 404) {
      commit({ movieId: null, movie: null, notFound: true });
      focusEl('#not-found-title');
    } else {
      commit({ movieId: null });
      say(errorText(err), 'error');
    }
    return;
  }
  if (gen !== state.generation) return;
  if (notReady(state.movie)) { focusEl('#not-ready-title'); waitForVideo(gen); return; }
  await edit(gen);
}

// edit starts work on a movie that can be analysed: focus on its title,
// the lease, its history, the poll.
async function edit(gen) {
  focusEl('#movie-title');
  await startEditing(gen, { quiet: true });
  loadHistory(gen);
  schedulePoll(gen);
}

// waitForVideo: a movie whose file has not arrived cannot be analysed yet
// (the not-ready view says why); while its file may still arrive, look
// again now and then, without leaving the view, and open the editor when
// it is ready. (A movie made without a file, as the samples without ffmpeg
// and the tests' seeded ones, is analysed on drawn stand-in frames.)
function waitForVideo(gen) {
  if (state.movie.status !== STATUS.AWAITING_UPLOAD) return;
  pollTimer = setTimeout(async () => {
    if (gen !== state.generation) return;
    try {
      await loadMovie(gen, { atStart: true });
    } catch (err) {
      if (gen === state.generation) say(errorText(err), 'error');
    }
    if (gen !== state.generation) return;
    if (notReady(state.movie)) waitForVideo(gen); else edit(gen);
  }, POLL_IDLE_MS * 2);
}

export function resetAnalyze() {
  stopPlayback();
  clearTimeout(pollTimer);
  stopHeartbeat();
  resetHistory();
  clearFieldErrors();
  commit({ ...analysisFields(), notFound: false });
}

// leaveAnalyze gives the lease back and forgets the movie.
export function leaveAnalyze(unloading) {
  release(unloading);
  resetAnalyze();
}

// loadMovie reads the movie and commits it; atStart (on opening) also shows
// the trim's first frame, in the same commit that first shows the movie.
export async function loadMovie(gen, { atStart } = {}) {
  const m = await api('GET', moviePath(state.movieId));
  if (gen !== state.generation) return;
  const was = state.movie;
  const frame = atStart ? Math.min(Math.max(0, m.trim.start), Math.max(m.frameCount - 1, 0)) : state.frame > m.frameCount - 1 ? 0 : state.frame;
  commit({ movie: m, frame });
  checkLease(gen, m);
  // (Re)load the results whenever the stored frames may have changed.
  const key = framesKeyOf(m);
  if (m.status !== STATUS.TRACING && key !== state.framesKey) await loadFrames(gen, key);
  if (((was && was.status === STATUS.TRACING) || state.startedTrace) && m.status !== STATUS.TRACING) traceFinished(gen, m);
  if (was && was.status !== m.status) historyChanged();
  if (historyDue()) loadHistory(gen);
}

// checkLease notices at once (at the next poll) that the lease this page
// holds is gone, instead of at the next heartbeat: the row shows no lock, or
// someone else's, or a newer one. A heartbeat then confirms it.
function checkLease(gen, m) {
  if (!state.leaseId) return;
  const l = m.lock;
  if (l && l.yours && l.kind === LOCK.ANALYSIS) {
    if (!state.leaseStartedAt) commit({ leaseStartedAt: l.startedAt });
    if (l.startedAt === state.leaseStartedAt) return;
  }
  heartbeat(gen);
}

// startEditing acquires the lease; refused, the page is view-only.
export async function startEditing(gen, { quiet } = {}) {
  try {
    if (!(await acquire(gen))) return;
    await loadMovie(gen);
    if (!quiet) say('You are editing this movie now.', 'ok');
  } catch (err) {
    if (gen !== state.generation) return;
    commit({ leaseId: null });
    if (err instanceof APIError && (err.code === CODE.LEASE_HELD || err.code === CODE.TRACING_IN_PROGRESS)) {
      if (!quiet) say(errorText(err), 'info');
      try { await loadMovie(gen); } catch { /* the poll retries */ }
    } else {
      say(errorText(err), 'error');
    }
  }
}

export function schedulePoll(gen) {
  clearTimeout(pollTimer);
  const tracing = state.movie && state.movie.status === STATUS.TRACING;
  pollTimer = setTimeout(async () => {
    if (gen !== state.generation) return;
    try {
      await loadMovie(gen);
      if (state.offline && !state.leaseId) commit({ offline: false });
    } catch (err) {
      if (gen === state.generation) say(errorText(err), 'error');
    }
    if (gen === state.generation) schedulePoll(gen);
  }, tracing ? POLL_TRACING_MS : POLL_IDLE_MS);
}

function traceFinished(gen, m) {
  const job = m.lastJob;
  const mine = state.startedTrace || (job && job.yours);
  if (m.status === STATUS.TRACED) say((mine ? 'Your trace finished: ' : 'The trace finished: ') + (job ? job.frames : 0) + ' frames traced. The results are loaded.', 'ok');
  else if (m.status === STATUS.TRACING_FAILED) say((mine ? 'Your trace failed. ' : 'The trace failed. ') + 'See Last trace for what was saved and what to do next.', 'error');
  else if (m.status === STATUS.TRACING_CANCELLED) say((mine ? 'You cancelled the trace. ' : 'The trace was cancelled. ') + 'The frames it traced are kept.', 'info');
  commit({ startedTrace: false });
  // The browser that started the trace (or its user, back after leaving)
  // continues editing; anyone else may choose "Start editing".
  if (mine && !state.leaseId && !m.lock) startEditing(gen, { quiet: true });
}
