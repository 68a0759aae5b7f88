// Routes, identity and the movie list. Owns the list's poll timer.
'use strict';

import { state, commit } from '../state.js';
import { say, focusEl } from '../dom.js';
import { api, errorText, signInMode, IDENTITY_KEY } from '../api.js';
import { ROUTE } from '../constants.js';
import { openAnalyze, leaveAnalyze } from './movie.js';

const POLL_LIST_MS = 2000;
let listTimer = null;

function route() {
  const h = location.hash || '#/';
  if (h === '#/' || h === '#' || h === '') return { name: ROUTE.LIST };
  const m = h.match(/^#\/movies\/([^/?#]+)$/);
  return m ? { name: ROUTE.ANALYZE, id: decodeURIComponent(m[1]) } : { name: ROUTE.UNKNOWN };
}

// navigate shows the view the address names.
export async function navigate() {
  const next = route();
  const gen = state.generation + 1;
  const cur = state.route;
  if (cur && cur.name === ROUTE.ANALYZE && !(next.name === ROUTE.ANALYZE && next.id === state.movieId)) leaveAnalyze(false);
  clearInterval(listTimer);
  commit({ generation: gen, route: next });
  if (!state.user) { focusEl(signInMode() === 'dev' ? '#identity-name' : '[data-testid="sign-in"]'); return; }
  if (next.name === ROUTE.LIST) {
    await refreshList(gen);
    if (gen === state.generation) focusEl('#list-title');
    listTimer = setInterval(() => refreshList(gen), POLL_LIST_MS);
  } else if (next.name === ROUTE.UNKNOWN) {
    focusEl('#not-found-title');
  } else if (state.movieId !== next.id || !state.movie || !state.leaseId) {
    // Opened again unless it is open and ours: an earlier navigation still
    // reading the movie (or asking for its lease) is of an older generation,
    // and its answers are dropped (two at once on a cold load: the page's own
    // and the sign-in restore's).
    await openAnalyze(next.id, gen);
  }
}

async function refreshList(gen) {
  let list;
  try {
    list = await api('GET', '/movies');
  } catch (err) {
    if (gen === state.generation) say(errorText(err), 'error');
    return;
  }
  if (gen !== state.generation) return;
  commit({ movies: (list.movies || []).slice().sort((a, b) => a.title.localeCompare(b.title)) });
}

// setUser makes user the page's identity (a new identity is a new browser
// session: give up what the old one held) and shows the route again.
export function setUser(user) {
  leaveAnalyze(false);
  if (signInMode() === 'dev' && user) sessionStorage.setItem(IDENTITY_KEY, JSON.stringify(user));
  commit({ user, route: null });
  navigate();
}

// Signed in (or the token renewed) as the same user: keep everything.
export function refreshUser(user) { commit({ user }); }

// restored: the page came back from the back/forward cache; the lease was
// released on pagehide, so open Analyze again.
export function restored() {
  commit({ route: null, movieId: null });
  navigate();
}
