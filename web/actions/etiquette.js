// Lock etiquette (issue 25): an editor who stops editing is asked "Still
// editing?" and, unanswered, the lock is given back; a viewer may ask the
// editor to release it, and may ask to be told when the movie is free.
// Owns the idle timer.
'use strict';

import { state, commit } from '../state.js';
import { say, focusEl } from '../dom.js';
import { api, moviePath, errorText } from '../api.js';
import { LOCK } from '../constants.js';
import { release } from './lease.js';

const TICK_MS = 1000;
let timer = null;
let lastActive = 0;    // local time of the editor's last edit (or answer)
let seenActive = null; // the lock's lastActiveAt as last seen
let seenLease = null;  // the lease the idle clock runs for

// answerMs is how long "Still editing?" waits for an answer: half the idle
// time, at least 5 s and at most a minute.
export const answerMs = (idleMs) => Math.min(60000, Math.max(5000, idleMs / 2));

// noteActivity: the editor edited (or is typing): the idle clock restarts.
export function noteActivity() {
  lastActive = Date.now();
  if (state.idleAsk) commit({ idleAsk: null });
}

// stillEditing answers the question.
export function stillEditing() {
  noteActivity();
  say('Good: you are still editing this movie.', 'ok');
}

// watchIdle is a reaction (subscribed beside the views): it starts the idle
// clock when this page gets the lease, restarts it when the server records
// an edit of ours (the lock's lastActiveAt is the last edit, not the
// heartbeat), and stops it when the lease is gone.
export function watchIdle(s) {
  if (s.leaseId !== seenLease) {
    seenLease = s.leaseId;
    clearInterval(timer);
    timer = null;
    if (s.leaseId) {
      lastActive = Date.now();
      const gen = s.generation;
      timer = setInterval(() => tick(gen), TICK_MS);
    }
  }
  const l = s.movie && s.movie.lock;
  const active = l && l.yours && l.kind === LOCK.ANALYSIS ? l.lastActiveAt : null;
  if (active && active !== seenActive) {
    if (seenActive !== null) lastActive = Date.now();
    seenActive = active;
  }
}

function tick(gen) {
  if (gen !== state.generation || !state.leaseId) return;
  const idleMs = (state.idleSeconds || 600) * 1000;
  const now = Date.now();
  if (!state.idleAsk) {
    if (now - lastActive >= idleMs) {
      commit({ idleAsk: new Date(now + answerMs(idleMs)).toISOString() });
      focusEl('#still-editing');
    }
    return;
  }
  if (now >= Date.parse(state.idleAsk)) idleRelease();
}

// idleRelease gives the lock back after an unanswered "Still editing?".
function idleRelease() {
  release(false);
  commit({ leaseId: null, idleAsk: null, dirty: new Set() });
  say('Nobody answered \u201cStill editing?\u201d, so the movie was released for others. Choose Start editing to continue.', 'info');
}

// releaseNow: the editor gives the movie to whoever asked.
export function releaseNow() {
  release(false);
  commit({ leaseId: null, idleAsk: null, dirty: new Set() });
  say('You released the movie: others can edit it now.', 'ok');
}

// askRelease: a viewer asks the editor to release the movie.
export async function askRelease() {
  const gen = state.generation;
  try {
    const m = await api('POST', moviePath(state.movieId) + '/analysis-lease/release-request');
    if (gen !== state.generation) return;
    commit({ movie: m });
    const who = m.lock ? m.lock.userName : 'The editor';
    say('Asked ' + who + ' to release the movie. ' + who + ' sees your request; choose \u201cTell me when it is free\u201d to be told.', 'ok');
  } catch (err) {
    if (gen === state.generation) say(errorText(err), 'error');
  }
}

// notifyWhenFree: tell this viewer when the movie's lock is gone.
export function notifyWhenFree(on) {
  commit({ notifyFree: on });
  if (on) say('You will be told here when nobody holds this movie any more.', 'info');
}

// watchFree is a reaction: the movie a viewer waits for is free.
export function watchFree(s) {
  if (!s.notifyFree || !s.movie || s.movie.lock || s.leaseId) return;
  queueMicrotask(() => {
    if (!state.notifyFree) return;
    commit({ notifyFree: false });
    say('The movie is free now: choose Start editing to edit it.', 'ok', 60000);
    focusEl('#acquire');
  });
}
