// The Analyze page: the reference client of the browser API. Plain JS, no
// build step. Everything the page may do is decided by the API; disabled
// controls are a courtesy, the API refuses writes without the live lease.
'use strict';

const $ = (sel) => document.querySelector(sel);
const POLL_TRACING_MS = 1000;
const POLL_IDLE_MS = 2000;
const FRAME_PAGE = 1000;

// ---------------------------------------------------------------- identity --

// The development identity lives in sessionStorage: per tab, so two windows
// (or two browser contexts) can be two users.
const IDENTITY_KEY = 'tracinglocks.devUser';
const NAME_RE = /^[A-Za-z0-9 ._'-]{1,64}$/;

function loadUser() {
  try {
    const u = JSON.parse(sessionStorage.getItem(IDENTITY_KEY) || 'null');
    return u && NAME_RE.test(u.name) && u.id ? u : null;
  } catch {
    return null;
  }
}

function userFor(name) {
  name = name.trim().replace(/\s+/g, ' ');
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'user';
  return { id: 'dev-' + slug, name };
}

// ----------------------------------------------------------------- the API --

class APIError extends Error {
  constructor(status, problem) {
    super((problem && (problem.detail || problem.title)) || ('HTTP ' + status));
    this.status = status;
    this.problem = problem || {};
    this.code = this.problem.code || '';
  }
}

// Sign-in hook (functions/local/webauth, served as /auth.js): when the page
// signs in through OpenID Connect, tracingAuth.fetch adds the token and the
// development identity headers are never sent.
const signInMode = () => (window.tracingAuth ? window.tracingAuth.mode() : 'dev');
const authFetch = (url, init) => (window.tracingAuth ? window.tracingAuth.fetch(url, init) : fetch(url, init));

function identityHeaders() {
  const h = {};
  if (state.user && signInMode() === 'dev') {
    h['X-Dev-User'] = state.user.id;
    h['X-Dev-User-Name'] = state.user.name;
  }
  return h;
}

async function api(method, path, { body, leaseId, accept, raw, keepalive } = {}) {
  const headers = identityHeaders();
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (leaseId) headers['Lease-Id'] = leaseId;
  headers.Accept = accept || 'application/json';
  const res = await authFetch(path, {
    method, headers, keepalive: !!keepalive, cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) {
    let problem = null;
    try { problem = await res.json(); } catch { /* not JSON */ }
    throw new APIError(res.status, problem);
  }
  if (raw) return res;
  if (res.status === 204) return null;
  const type = res.headers.get('Content-Type') || '';
  return type.includes('json') ? res.json() : res.text();
}

const moviePath = (id) => '/movies/' + encodeURIComponent(id);

// ------------------------------------------------------------------- state --

const state = {
  user: loadUser(),
  route: null,
  // Analyze
  movieId: null,
  movie: null,
  leaseId: null,       // our analysis lease, when we hold it
  leaseSeconds: 0,
  heartbeatTimer: null,
  pollTimer: null,
  listTimer: null,
  frames: [],          // traced frames, sorted by frame index
  framesByIndex: new Map(),
  framesJob: null,     // job ID the loaded frames belong to
  frame: 0,
  playTimer: null,
  startedTrace: false, // this page started the running trace
  dirty: new Set(),    // ids of inputs the user changed and has not saved
  generation: 0,       // bumps on every route change: stale async work stops
};

// ------------------------------------------------------------------ helpers --

function show(el, on) { el.hidden = !on; }

function say(text, kind) {
  const m = $('#message');
  m.textContent = text || '';
  m.dataset.kind = kind || 'info';
  show(m, !!text);
}

function fmtTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

function timeEl(iso) {
  const t = document.createElement('time');
  t.dateTime = iso;
  t.textContent = fmtTime(iso);
  return t;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k in e) e[k] = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

const STATUS_TEXT = { ready: 'Ready', tracing: 'Tracing', traced: 'Traced', tracing_failed: 'Tracing failed' };

function lockText(lock) {
  if (!lock) return null;
  return lock.kind === 'tracing' ? lock.userName + "'s trace running since " : lock.userName + ' editing since ';
}

function errorText(err) {
  if (!(err instanceof APIError)) return 'The API could not be reached: ' + err.message;
  const h = err.problem.holder;
  switch (err.code) {
    case 'lease_held': return h ? h.userName + ' is editing this movie.' : 'Another browser is editing this movie.';
    case 'tracing_in_progress': return 'A trace is running: editing is disabled until it finishes.';
    case 'lease_lost': return 'Your editing session ended (it expired or was replaced).';
    case 'lease_required': return 'Editing needs the analysis lease.';
    case 'invalid_input': return 'Not accepted: ' + err.message;
    case 'not_found': return 'No such movie.';
    default: return err.message;
  }
}

// ------------------------------------------------------------------ routing --

function route() {
  const h = location.hash || '#/';
  const m = h.match(/^#\/movies\/([^/?#]+)$/);
  return m ? { name: 'analyze', id: decodeURIComponent(m[1]) } : { name: 'list' };
}

async function render() {
  const next = route();
  const gen = ++state.generation;
  if (state.route && state.route.name === 'analyze' && !(next.name === 'analyze' && next.id === state.movieId)) {
    leaveAnalyze(false);
  }
  state.route = next;
  clearInterval(state.listTimer);
  say('');
  renderIdentity();
  show($('#need-identity'), !state.user);
  show($('#list-view'), !!state.user && next.name === 'list');
  show($('#analyze-view'), !!state.user && next.name === 'analyze');
  if (!state.user) return;
  if (next.name === 'list') {
    document.title = 'Movies - Movie tracing';
    await refreshList(gen);
    state.listTimer = setInterval(() => refreshList(gen), POLL_IDLE_MS);
  } else if (state.movieId !== next.id) {
    await openAnalyze(next.id, gen);
  }
}

// --------------------------------------------------------------- identity UI --

function renderIdentity() {
  $('#identity-current').textContent = state.user ? 'signed in as ' + state.user.name : 'no user chosen';
  if (state.user && document.activeElement !== $('#identity-name')) $('#identity-name').value = state.user.name;
}

$('#identity-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const name = $('#identity-name').value;
  if (!NAME_RE.test(name.trim())) {
    say('Use 1-64 letters, digits, spaces or . _ \' -', 'error');
    return;
  }
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
  const rows = movies.map((m) => {
    const lock = m.lock
      ? el('span', { className: 'lock', dataset: { testid: 'lock-' + m.id, kind: m.lock.kind } },
        lockText(m.lock), timeEl(m.lock.startedAt))
      : el('span', { className: 'muted', dataset: { testid: 'lock-' + m.id, kind: '' } }, 'free');
    const p = m.progress || {};
    const progress = m.status === 'tracing' || p.totalFrames
      ? (p.framesWritten || 0) + ' / ' + (p.totalFrames || '?') + ' frames' : '';
    return el('tr', { dataset: { movieId: m.id } },
      el('th', { scope: 'row' }, m.title),
      el('td', { dataset: { testid: 'status-' + m.id } }, el('span', { className: 'status s-' + m.status }, STATUS_TEXT[m.status] || m.status)),
      el('td', { dataset: { testid: 'progress-' + m.id } }, progress),
      el('td', {}, lock),
      el('td', {}, el('a', { href: '#/movies/' + encodeURIComponent(m.id), className: 'button', dataset: { testid: 'analyze-' + m.id } }, 'Analyze')));
  });
  $('#movie-rows').replaceChildren(...rows);
}

// ----------------------------------------------------------------- analyze --

async function openAnalyze(id, gen) {
  resetAnalyze();
  state.movieId = id;
  $('#movie-title').textContent = 'Loading...';
  try {
    await loadMovie(gen);
  } catch (err) {
    if (gen === state.generation) {
      say(errorText(err), 'error');
      $('#movie-title').textContent = '';
    }
    return;
  }
  if (gen !== state.generation) return;
  await acquire(gen, { quiet: true });
  schedulePoll(gen);
}

function resetAnalyze() {
  stopPlayback();
  clearTimeout(state.pollTimer);
  clearInterval(state.heartbeatTimer);
  Object.assign(state, {
    movieId: null, movie: null, leaseId: null, leaseSeconds: 0, heartbeatTimer: null, pollTimer: null,
    frames: [], framesByIndex: new Map(), framesJob: null, frame: 0, startedTrace: false, dirty: new Set(),
  });
  $('#results').textContent = 'No traced frames yet.';
}

async function loadMovie(gen) {
  const m = await api('GET', moviePath(state.movieId));
  if (gen !== state.generation) return;
  const was = state.movie;
  state.movie = m;
  renderMovie();
  // Load (or reload) the results once a trace has finished.
  const job = m.lastJob;
  if (m.status !== 'tracing' && job && job.jobId !== state.framesJob) {
    await loadFrames(gen, job.jobId);
  }
  // A trace this page saw running (or started: a fast one may end before
  // the first poll) has ended.
  if (((was && was.status === 'tracing') || state.startedTrace) && m.status !== 'tracing') traceFinished(gen, m);
}

// acquire opens the analysis lease; refused, the page is view-only.
async function acquire(gen, { quiet } = {}) {
  try {
    const lease = await api('POST', moviePath(state.movieId) + '/analysis-lease');
    if (gen !== state.generation) { releaseBeacon(state.movieId, lease.leaseId); return; }
    state.leaseId = lease.leaseId;
    state.leaseSeconds = lease.leaseSeconds || 900;
    clearInterval(state.heartbeatTimer);
    state.heartbeatTimer = setInterval(() => heartbeat(gen), Math.max(1, state.leaseSeconds / 3) * 1000);
    await loadMovie(gen);
  } catch (err) {
    if (gen !== state.generation) return;
    state.leaseId = null;
    if (err instanceof APIError && (err.code === 'lease_held' || err.code === 'tracing_in_progress')) {
      if (!quiet) say(errorText(err), 'info');
      if (state.movie && err.problem.holder) state.movie.lock = err.problem.holder;
    } else {
      say(errorText(err), 'error');
    }
  }
  renderMovie();
}

async function heartbeat(gen) {
  if (!state.leaseId || gen !== state.generation) return;
  try {
    await api('PUT', moviePath(state.movieId) + '/analysis-lease', { leaseId: state.leaseId });
  } catch (err) {
    if (gen !== state.generation) return;
    if (err instanceof APIError && err.status < 500) {
      lostLease(err);
    } // a transport error: try again at the next beat, the lease outlives two misses
  }
}

function lostLease(err) {
  clearInterval(state.heartbeatTimer);
  state.heartbeatTimer = null;
  state.leaseId = null;
  say(errorText(err) + ' The page is view-only now.', 'error');
  renderMovie();
}

// leaveAnalyze gives the lease back. On pagehide only a beacon is sure to
// leave the page; on an in-page navigation a normal request does.
function leaveAnalyze(unloading) {
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

// releaseBeacon: sendBeacon cannot set headers, so the release route takes
// the lease ID (the capability) in the body, with no identity.
function releaseBeacon(id, lease) {
  const body = new Blob([JSON.stringify({ leaseId: lease })], { type: 'application/json' });
  if (!navigator.sendBeacon(moviePath(id) + '/analysis-lease/release', body)) {
    fetch(moviePath(id) + '/analysis-lease/release', { method: 'POST', body, keepalive: true }).catch(() => {});
  }
}

function schedulePoll(gen) {
  clearTimeout(state.pollTimer);
  const tracing = state.movie && state.movie.status === 'tracing';
  state.pollTimer = setTimeout(async () => {
    if (gen !== state.generation) return;
    try {
      await loadMovie(gen);
    } catch (err) {
      if (gen === state.generation) say(errorText(err), 'error');
    }
    if (gen === state.generation) schedulePoll(gen);
  }, tracing ? POLL_TRACING_MS : POLL_IDLE_MS);
}

function traceFinished(gen, m) {
  const job = m.lastJob;
  if (m.status === 'traced') say('Tracing finished: ' + (job ? job.frames : '') + ' frames traced. The results are loaded.', 'ok');
  else say('Tracing failed.' + (job && job.failureSummary ? ' ' + job.failureSummary : ''), 'error');
  // The browser that started the trace (or its user, back after leaving)
  // continues editing; anyone else may click "Start editing".
  const mine = state.startedTrace || (job && state.user && job.userName === state.user.name);
  state.startedTrace = false;
  if (mine && !state.leaseId && !m.lock) acquire(gen, { quiet: true });
}

// ---------------------------------------------------------------- rendering --

function editable() {
  return !!state.leaseId && state.movie && state.movie.status !== 'tracing';
}

function renderMovie() {
  const m = state.movie;
  if (!m) return;
  document.title = m.title + ' - Analyze';
  $('#movie-title').textContent = m.title;
  const st = $('#movie-status');
  st.textContent = STATUS_TEXT[m.status] || m.status;
  st.className = 'status s-' + m.status;
  st.dataset.status = m.status;
  $('#movie-info').textContent = m.frameCount + ' frames at ' + m.frameRate + ' fps';

  // The lease banner.
  const banner = $('#lease-banner');
  const lock = m.lock;
  if (state.leaseId) {
    banner.dataset.mode = 'edit';
    banner.replaceChildren('You are editing this movie. Others see it view-only until you leave this page.');
  } else if (lock) {
    banner.dataset.mode = 'view';
    const who = el('strong', { dataset: { testid: 'holder-name' } }, lock.userName);
    const when = timeEl(lock.startedAt);
    when.dataset.testid = 'holder-since';
    banner.replaceChildren(...(lock.kind === 'tracing'
      ? ['View only: a trace started by ', who, ' is running since ', when, '.']
      : ['View only: ', who, ' has been editing since ', when, '.']));
  } else {
    banner.dataset.mode = 'free';
    banner.replaceChildren('View only: nobody is editing this movie now.');
  }
  show($('#acquire'), !state.leaseId && !lock);

  // Edit controls: enabled only with our live lease and no trace running.
  const can = editable();
  for (const c of document.querySelectorAll('.edit input, .edit button')) c.disabled = !can;
  $('#canvas-hint').textContent = can ? 'Click the frame to place a marker.' : '';
  $('#player').classList.toggle('placing', can);

  // Inputs follow the stored settings unless the user is changing them.
  const setIf = (sel, v) => {
    const i = $(sel);
    if (document.activeElement !== i && !state.dirty.has(i.id)) i.value = v;
  };
  setIf('#trim-start', m.trim.start);
  setIf('#trim-end', m.trim.end);
  setIf('#capture-interval', m.captureInterval);
  const from = $('#from-frame');
  from.min = m.trim.start;
  from.max = m.trim.end - 1;
  if (document.activeElement !== from && !state.dirty.has(from.id) && (from.value === '' || +from.value < m.trim.start || +from.value >= m.trim.end)) from.value = m.trim.start;
  $('#start-trace').textContent = m.lastJob ? 'Retrace' : 'Start trace';
  renderMarkers(can);

  // Progress.
  const tracing = m.status === 'tracing';
  show($('#progress-panel'), tracing);
  const p = m.progress || {};
  const bar = $('#progress-bar');
  bar.max = Math.max(p.totalFrames || 0, 1);
  bar.value = p.framesWritten || 0;
  $('#progress-text').textContent = p.totalFrames
    ? 'Traced ' + (p.framesWritten || 0) + ' of ' + p.totalFrames + ' frames.'
    : 'Waiting for the worker to start...';
  $('#progress-text').dataset.written = p.framesWritten || 0;

  // The last finished job.
  const job = m.lastJob;
  show($('#job-panel'), !!job);
  if (job) {
    const what = job.status === 'traced' ? 'Traced ' + job.frames + ' frames' : 'Failed after ' + job.frames + ' frames';
    $('#last-job').replaceChildren(what + ', started by ' + job.userName + ' from frame ' + job.fromFrame + ', finished ',
      timeEl(job.finishedAt), '.');
    $('#last-job').dataset.status = job.status;
    const fs = $('#failure-summary');
    fs.textContent = job.failureSummary ? 'Why: ' + job.failureSummary : '';
    show(fs, job.status === 'tracing_failed' && !!job.failureSummary);
  }

  // Playback is always available.
  const slider = $('#frame-slider');
  slider.max = Math.max(m.frameCount - 1, 0);
  if (state.frame > m.frameCount - 1) state.frame = 0;
  slider.value = state.frame;
  $('#frame-label').textContent = state.frame;
  draw();
}

function renderMarkers(can) {
  const ms = state.movie.markers || [];
  const items = ms.map((mk, i) => el('li', { dataset: { markerId: mk.id } },
    el('span', { className: 'swatch', style: 'background:' + colour(i) }),
    el('label', { htmlFor: 'marker-label-' + mk.id, className: 'sr-only' }, 'Label of marker ' + mk.id),
    el('input', { id: 'marker-label-' + mk.id, value: mk.label, maxLength: 64, disabled: !can,
      onchange: (e) => saveMarkers(ms.map((x) => x.id === mk.id ? { ...x, label: e.target.value } : x)) }),
    el('span', { className: 'muted' }, ' (' + mk.x.toFixed(2) + ', ' + mk.y.toFixed(2) + ') '),
    el('button', { type: 'button', disabled: !can, dataset: { testid: 'remove-marker' },
      onclick: () => saveMarkers(ms.filter((x) => x.id !== mk.id)) }, 'Remove')));
  $('#markers').replaceChildren(...items);
  show($('#markers-empty'), ms.length === 0);
}

const COLOURS = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4', '#f032e6', '#9a6324'];
const colour = (i) => COLOURS[i % COLOURS.length];

function draw() {
  const c = $('#player');
  const g = c.getContext('2d');
  const m = state.movie;
  const w = c.width;
  const h = c.height;
  // There is no real video: a synthetic frame, its number and the points.
  const t = m && m.frameCount > 1 ? state.frame / (m.frameCount - 1) : 0;
  const grad = g.createLinearGradient(0, 0, w, h);
  grad.addColorStop(0, `hsl(${210 + 40 * t}, 30%, 22%)`);
  grad.addColorStop(1, `hsl(${250 + 40 * t}, 35%, 12%)`);
  g.fillStyle = grad;
  g.fillRect(0, 0, w, h);
  g.strokeStyle = 'rgba(255,255,255,0.06)';
  for (let x = 0; x <= w; x += 40) { g.beginPath(); g.moveTo(x, 0); g.lineTo(x, h); g.stroke(); }
  for (let y = 0; y <= h; y += 40) { g.beginPath(); g.moveTo(0, y); g.lineTo(w, y); g.stroke(); }
  g.fillStyle = 'rgba(255,255,255,0.85)';
  g.font = '600 20px system-ui, sans-serif';
  g.fillText('Frame ' + state.frame + (m ? ' / ' + (m.frameCount - 1) : ''), 14, 30);
  if (!m) return;
  if (m.trim && (state.frame < m.trim.start || state.frame >= m.trim.end)) {
    g.fillStyle = 'rgba(255,200,80,0.9)';
    g.fillText('outside the trim', 14, 56);
  }
  const ms = m.markers || [];
  const idx = new Map(ms.map((mk, i) => [mk.id, i]));
  // Traced trails up to the current frame, then the points on it.
  const traced = state.framesByIndex.get(nearestTraced(state.frame));
  if (state.frames.length) {
    g.lineWidth = 2;
    for (const mk of ms) {
      g.strokeStyle = colour(idx.get(mk.id)) + '99';
      g.beginPath();
      let first = true;
      for (const f of state.frames) {
        if (f.frame > state.frame) break;
        const p = (f.points || []).find((q) => q.markerId === mk.id);
        if (!p) continue;
        if (first) g.moveTo(p.x * w, p.y * h); else g.lineTo(p.x * w, p.y * h);
        first = false;
      }
      g.stroke();
    }
  }
  if (traced) {
    for (const p of traced.points || []) dot(g, p.x * w, p.y * h, colour(idx.get(p.markerId) || 0), true);
  }
  for (const mk of ms) {
    if (!traced || state.frame === (m.trim ? m.trim.start : 0)) dot(g, mk.x * w, mk.y * h, colour(idx.get(mk.id)), false, mk.label || mk.id);
  }
}

function nearestTraced(frame) {
  // The last traced frame at or before frame (frames are sorted).
  let lo = 0;
  let hi = state.frames.length - 1;
  let best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (state.frames[mid].frame <= frame) { best = state.frames[mid].frame; lo = mid + 1; } else hi = mid - 1;
  }
  return best;
}

function dot(g, x, y, col, filled, label) {
  g.beginPath();
  g.arc(x, y, filled ? 6 : 9, 0, 2 * Math.PI);
  g.lineWidth = 3;
  g.strokeStyle = col;
  g.fillStyle = col;
  if (filled) g.fill(); else g.stroke();
  if (label) {
    g.fillStyle = '#fff';
    g.font = '14px system-ui, sans-serif';
    g.fillText(label, x + 12, y - 10);
  }
}

// ---------------------------------------------------------------- playback --

function setFrame(n) {
  const m = state.movie;
  if (!m) return;
  state.frame = Math.min(Math.max(0, n | 0), m.frameCount - 1);
  $('#frame-slider').value = state.frame;
  $('#frame-label').textContent = state.frame;
  draw();
}

function stopPlayback() {
  clearInterval(state.playTimer);
  state.playTimer = null;
  $('#play').textContent = 'Play';
  $('#play').setAttribute('aria-pressed', 'false');
}

$('#play').addEventListener('click', () => {
  if (state.playTimer) { stopPlayback(); return; }
  const m = state.movie;
  if (!m) return;
  if (state.frame >= m.frameCount - 1) setFrame(0);
  $('#play').textContent = 'Pause';
  $('#play').setAttribute('aria-pressed', 'true');
  state.playTimer = setInterval(() => {
    if (!state.movie || state.frame >= state.movie.frameCount - 1) { stopPlayback(); return; }
    setFrame(state.frame + 1);
  }, 1000 / Math.min(Math.max(m.frameRate || 24, 1), 60));
});

$('#frame-slider').addEventListener('input', (e) => setFrame(+e.target.value));

// ----------------------------------------------------------------- editing --

async function write(what, fn, inputs = []) {
  const gen = state.generation;
  try {
    const m = await fn();
    if (gen !== state.generation) return;
    for (const id of inputs) state.dirty.delete(id);
    if (m && m.id) state.movie = m; else await loadMovie(gen);
    say(what + ' saved.', 'ok');
  } catch (err) {
    if (gen !== state.generation) return;
    say(errorText(err), 'error');
    if (err instanceof APIError && ['lease_lost', 'lease_held', 'tracing_in_progress', 'lease_required'].includes(err.code)) {
      lostLease(err);
    }
    try { await loadMovie(gen); } catch { /* shown above */ }
  }
  renderMovie();
}

function saveMarkers(markers) {
  return write('Markers', () => api('PUT', moviePath(state.movieId) + '/markers',
    { leaseId: state.leaseId, body: { markers } }));
}

$('#player').addEventListener('click', (e) => {
  if (!editable()) return;
  const c = e.currentTarget;
  const r = c.getBoundingClientRect();
  const x = Math.min(Math.max((e.clientX - r.left) / r.width, 0), 1);
  const y = Math.min(Math.max((e.clientY - r.top) / r.height, 0), 1);
  const ms = state.movie.markers || [];
  let n = ms.length + 1;
  while (ms.some((mk) => mk.id === 'm' + n)) n++;
  saveMarkers([...ms, { id: 'm' + n, label: 'Marker ' + n, x: +x.toFixed(4), y: +y.toFixed(4) }]);
});

$('#save-trim').addEventListener('click', () => write('Trim', () => api('PUT', moviePath(state.movieId) + '/trim',
  { leaseId: state.leaseId, body: { start: +$('#trim-start').value, end: +$('#trim-end').value } }),
  ['trim-start', 'trim-end']));

$('#save-interval').addEventListener('click', () => write('Capture interval', () => api('PUT', moviePath(state.movieId) + '/capture-interval',
  { leaseId: state.leaseId, body: { captureInterval: +$('#capture-interval').value } }),
  ['capture-interval']));

for (const id of ['trim-start', 'trim-end', 'capture-interval', 'from-frame']) {
  $('#' + id).addEventListener('input', () => state.dirty.add(id));
}

$('#start-trace').addEventListener('click', async () => {
  const gen = state.generation;
  const lease = state.leaseId;
  try {
    await api('POST', moviePath(state.movieId) + '/traces', { leaseId: lease, body: { fromFrame: +$('#from-frame').value } });
  } catch (err) {
    if (gen === state.generation) say(errorText(err), 'error');
    return;
  }
  if (gen !== state.generation) return;
  // The analysis lease became the tracing lease: nothing to heartbeat or
  // release any more.
  clearInterval(state.heartbeatTimer);
  state.heartbeatTimer = null;
  state.leaseId = null;
  state.startedTrace = true;
  state.dirty.delete('from-frame');
  say('Tracing started. It is safe to leave this page and reopen Analyze later.', 'ok');
  try { await loadMovie(gen); } catch { /* the poll retries */ }
  renderMovie();
  schedulePoll(gen);
});

$('#acquire').addEventListener('click', () => acquire(state.generation));

// ----------------------------------------------------------------- results --

async function loadFrames(gen, jobId) {
  const frames = [];
  let from = 0;
  for (let page = 0; page < 10000; page++) {
    const res = await api('GET', moviePath(state.movieId) + '/frames?from=' + from + '&limit=' + FRAME_PAGE);
    if (gen !== state.generation) return;
    frames.push(...(res.frames || []));
    if (res.next == null) break;
    from = res.next;
  }
  frames.sort((a, b) => a.frame - b.frame);
  state.frames = frames;
  state.framesByIndex = new Map(frames.map((f) => [f.frame, f]));
  state.framesJob = jobId;
  const r = $('#results');
  r.textContent = frames.length
    ? frames.length + ' traced frames loaded (frames ' + frames[0].frame + '-' + frames[frames.length - 1].frame + ').'
    : 'No traced frames yet.';
  r.dataset.count = frames.length;
  r.dataset.job = jobId || '';
  draw();
}

// download saves every traced frame as one file. The API pages frames (at
// most 1000 a request) and needs the identity headers, so the page fetches
// the pages and hands the browser a Blob: JSON as one {"frames": [...]}
// document, CSV as the pages' rows under one header line.
async function download(format) {
  const id = state.movieId;
  if (!id) return;
  const parts = [];
  const frames = [];
  try {
    let path = moviePath(id) + '/frames?from=0&limit=' + FRAME_PAGE + (format === 'csv' ? '&format=csv' : '');
    for (let page = 0; path && page < 100000; page++) {
      if (format === 'csv') {
        const res = await api('GET', path, { accept: 'text/csv', raw: true });
        const text = await res.text();
        parts.push(page === 0 ? text : text.slice(text.indexOf('\n') + 1));
        const link = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('Link') || '');
        path = link ? link[1] : null;
      } else {
        const res = await api('GET', path);
        frames.push(...(res.frames || []));
        path = res.next == null ? null : moviePath(id) + '/frames?from=' + res.next + '&limit=' + FRAME_PAGE;
      }
    }
  } catch (err) {
    say(errorText(err), 'error');
    return;
  }
  const blob = format === 'csv'
    ? new Blob(parts, { type: 'text/csv' })
    : new Blob([JSON.stringify({ movieId: id, frames }, null, 1)], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: id + '-frames.' + format });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  say('Downloaded ' + id + '-frames.' + format + '.', 'ok');
}

$('#download-json').addEventListener('click', () => download('json'));
$('#download-csv').addEventListener('click', () => download('csv'));

// --------------------------------------------------------------- lifecycle --

window.addEventListener('hashchange', render);
// Timers of a hidden tab are throttled (to once a minute after a while):
// renew as soon as the tab is visible again.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && state.leaseId) heartbeat(state.generation);
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
  }
  render();
});
