// The Analyze page: the reference client of the browser API. Plain JS
// modules, no build step. Everything the page may do is decided by the API;
// disabled controls are a courtesy, the API refuses writes without the
// live lease. This module: identity, routing, the movie list, lifecycle.
'use strict';

import { $, state, el, show, say, timeEl, focusEl, fieldError, plural } from './state.js';
import { api, loadUser, userFor, NAME_RE, IDENTITY_KEY, errorText, signInMode } from './api.js';
import { openAnalyze, leaveAnalyze, heartbeat } from './analyze.js';
import { statusText } from './render.js';
import { preparingText } from './preparing.js';

const POLL_LIST_MS = 2000;

state.user = loadUser();

function route() {
  const h = location.hash || '#/';
  if (h === '#/' || h === '#' || h === '') return { name: 'list' };
  const m = h.match(/^#\/movies\/([^/?#]+)$/);
  return m ? { name: 'analyze', id: decodeURIComponent(m[1]) } : { name: 'unknown' };
}

async function render() {
  const next = route();
  const gen = ++state.generation;
  if (state.route && state.route.name === 'analyze' && !(next.name === 'analyze' && next.id === state.movieId)) {
    leaveAnalyze(false);
  }
  state.route = next;
  clearInterval(state.listTimer);
  renderIdentity();
  show($('#need-identity'), !state.user);
  show($('#list-view'), !!state.user && next.name === 'list');
  show($('#not-found'), !!state.user && next.name === 'unknown');
  if (next.name !== 'analyze') { show($('#analyze-view'), false); show($('#not-ready'), false); }
  if (!state.user) { focusEl(signInMode() === 'dev' ? '#identity-name' : '[data-testid="sign-in"]'); return; }
  if (next.name === 'list') {
    document.title = 'Movies - Movie tracing';
    await refreshList(gen);
    if (gen === state.generation) focusEl('#list-title');
    state.listTimer = setInterval(() => refreshList(gen), POLL_LIST_MS);
  } else if (next.name === 'unknown') {
    document.title = 'Page not found - Movie tracing';
    focusEl('#not-found-title');
  } else if (state.movieId !== next.id) {
    await openAnalyze(next.id, gen);
  }
}

// ---------------------------------------------------------------- identity --

function renderIdentity() {
  // The development name picker only where the stack asks for it.
  show($('#identity-form'), signInMode() === 'dev');
  $('#identity-current').textContent = state.user ? 'signed in as ' + state.user.name : 'no name chosen';
  if (state.user && document.activeElement !== $('#identity-name')) $('#identity-name').value = state.user.name;
}

$('#identity-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  if (signInMode() !== 'dev') return;
  const name = $('#identity-name').value;
  if (!NAME_RE.test(name.trim())) {
    fieldError('identity-name', 'Use 1 to 64 letters, digits, spaces or . _ \' -');
    $('#identity-name').focus();
    return;
  }
  fieldError('identity-name', '');
  const user = userFor(name);
  if (state.user && state.user.id === user.id) return;
  // A new identity is a new browser session: give up what the old one held.
  leaveAnalyze(false);
  state.user = user;
  sessionStorage.setItem(IDENTITY_KEY, JSON.stringify(user));
  state.route = null;
  render();
});

// -------------------------------------------------------------------- list --

function lockCell(m) {
  const l = m.lock;
  if (!l) return el('span', { className: 'muted', dataset: { testid: 'lock-' + m.id, kind: '' } }, 'free');
  const who = l.yours ? 'You' : l.userName;
  const text = l.kind === 'tracing'
    ? (l.yours ? 'Your trace running since ' : l.userName + "'s trace running since ")
    : (l.yours ? 'You are editing (another tab) since ' : who + ' editing since ');
  return el('span', { className: 'lock', dataset: { testid: 'lock-' + m.id, kind: l.kind } }, text, timeEl(l.startedAt));
}

// progressText is the movie's progress, not only the last job's: a running
// trace's share, or how much of the movie the stored results cover.
export function progressText(m) {
  const p = m.progress || {};
  switch (m.status) {
    case 'tracing':
      return p.totalFrames ? 'Tracing: ' + p.framesWritten + ' of ' + p.totalFrames + ' frames so far (' + Math.floor(100 * p.framesWritten / p.totalFrames) + '%)' : 'Tracing: starting';
    case 'traced':
      return 'Done: ' + plural(p.framesWritten, 'traced frame') + ' over the ' + plural(m.frameCount, 'frame') + ' of the movie';
    case 'tracing_failed':
      return 'Stopped: ' + p.framesWritten + ' of ' + p.totalFrames + ' frames saved';
    case 'tracing_cancelled':
      return 'Cancelled: ' + p.framesWritten + ' of ' + p.totalFrames + ' frames saved';
    default:
      return 'Not traced yet';
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
  const movies = (list.movies || []).slice().sort((a, b) => a.title.localeCompare(b.title));
  const key = JSON.stringify(movies);
  const rowsEl = $('#movie-rows');
  if (rowsEl.dataset.key === key) return; // nothing changed: keep the nodes (and focus)
  const focused = rowsEl.contains(document.activeElement) ? document.activeElement.dataset.testid : '';
  rowsEl.dataset.key = key;
  const rows = movies.map((m) => el('tr', { dataset: { movieId: m.id } },
    el('th', { scope: 'row' }, m.title),
    el('td', { dataset: { testid: 'status-' + m.id, label: 'Status' } }, el('span', { className: 'status s-' + m.status }, preparingText(m) || statusText(m.status))),
    el('td', { dataset: { testid: 'progress-' + m.id, label: 'Progress' } }, progressText(m)),
    el('td', { dataset: { label: 'Lock' } }, lockCell(m)),
    el('td', {}, el('a', { href: '#/movies/' + encodeURIComponent(m.id), className: 'button', dataset: { testid: 'analyze-' + m.id },
      'aria-label': 'Analyze ' + m.title }, 'Analyze'))));
  rowsEl.replaceChildren(...rows);
  if (focused) { const f = rowsEl.querySelector('[data-testid="' + focused + '"]'); if (f) f.focus(); }
}

// --------------------------------------------------------------- lifecycle --

window.addEventListener('hashchange', render);
// Timers of a hidden tab are throttled: renew as soon as it is visible again.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && state.leaseId) heartbeat(state.generation);
});
window.addEventListener('online', () => { if (state.leaseId) heartbeat(state.generation); });
window.addEventListener('offline', () => {
  if (state.leaseId) { state.offline = true; say('You are offline: your changes cannot be saved until the connection returns.', 'error'); }
});
window.addEventListener('pagehide', () => leaveAnalyze(true));
window.addEventListener('pageshow', (e) => {
  // Restored from the back/forward cache: the lease was released on
  // pagehide, so open Analyze again.
  if (e.persisted) { state.route = null; state.movieId = null; render(); }
});

// Sign-in hook: first let the sign-in module finish a redirect back from the
// provider; signed in, its user is the page's identity.
(window.tracingAuth ? window.tracingAuth.ready : Promise.resolve(null)).then((user) => {
  if (signInMode() === 'oidc') {
    state.user = user;
    window.tracingAuth.onChange((next) => {
      if (next && state.user && next.id === state.user.id) { state.user = next; return; }
      leaveAnalyze(false);
      state.user = next;
      state.route = null;
      render();
    });
  } else if (signInMode() !== 'dev') {
    state.user = null; // no sign-in available: no identity either
  }
  render();
});
