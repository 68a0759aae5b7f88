// The history of the open movie: the first page reloaded while it may have
// changed, older pages on request.
'use strict';

import { state, commit } from '../state.js';
import { api, moviePath } from '../api.js';
import { historyKey } from '../facts.js';

const PAGE = 10;
const REFRESH_POLLS = 10; // the stream writes the audit item within seconds
let refreshPolls = 0; // polls left during which the first page is reloaded
let seenKey = null;   // historyKey of the movie as last seen

export function resetHistory() { refreshPolls = 0; seenKey = null; }

// watchHistory is a reaction (subscribed beside the views): whenever what
// the history shows may have changed (a trace started or ended, a cancel
// was settled, the calibration changed), by this page or another one, the
// first page is reloaded for the next polls: the history is live while the
// movie is open, not only after reopening it.
export function watchHistory(s) {
  if (!s.movie) return;
  const k = historyKey(s.movie);
  if (k === seenKey) return;
  if (seenKey !== null) refreshPolls = REFRESH_POLLS;
  seenKey = k;
}

// historyChanged: the movie changed; its audit events follow shortly (the
// stream processor writes them), so reload for the next few polls.
export function historyChanged() { refreshPolls = REFRESH_POLLS; }

export function historyDue() {
  if (refreshPolls <= 0) return false;
  refreshPolls--;
  return true;
}

// loadHistory reloads the first page (and keeps older pages loaded).
export async function loadHistory(gen) {
  if (!state.movieId) return;
  let page;
  try {
    page = await api('GET', moviePath(state.movieId) + '/history?limit=' + PAGE);
  } catch {
    return; // the history is an extra: the poll tries again
  }
  if (gen !== state.generation) return;
  const h = state.history;
  const events = page.events || [];
  if (h.loaded && JSON.stringify(events) === JSON.stringify(h.events)) return;
  commit({ history: { events, older: h.older, next: h.older.length ? h.next : page.next, loaded: true } });
}

// loadOlder appends the next older page; it answers how many events came.
export async function loadOlder() {
  const h = state.history;
  if (!h.next || !state.movieId) return 0;
  const gen = state.generation;
  let page;
  try {
    page = await api('GET', moviePath(state.movieId) + '/history?limit=' + PAGE + '&cursor=' + encodeURIComponent(h.next));
  } catch {
    return 0;
  }
  if (gen !== state.generation) return 0;
  const events = page.events || [];
  commit({ history: { ...state.history, older: [...state.history.older, ...events], next: page.next } });
  return events.length;
}
