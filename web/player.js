// The frame view: the frame image (or a drawn stand-in), markers, trails,
// frame navigation with buttons and keys, and keyboard marker editing.
'use strict';

import { $, state } from './state.js';
import { api, APIError, moviePath } from './api.js';

const COLOURS = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4', '#f032e6', '#9a6324'];
export const colour = (i) => COLOURS[i % COLOURS.length];

// ------------------------------------------------------------ frame images --

// The real frame comes from GET /movies/{id}/frames/{n}/image once the movie
// has a video; the request needs the identity headers, so it is fetched and
// decoded here. Without one the page draws a stand-in frame.
//
// A frame image never changes (a movie is ingested once), so it is fetched
// through the browser's HTTP cache: the API's redirect is cached for minutes
// and the image behind it is served as immutable. Decoded frames are kept as
// ImageBitmaps, at most KEEP (a 1080p frame is 8 MB decoded), least recently
// shown first out. Around the shown frame the next AHEAD frames and the
// BEHIND previous ones are fetched ahead, at most PARALLEL at a time and at
// low priority, nearest first; moving elsewhere (a jump, another movie,
// leaving Analyze) cancels the ones no longer near.
const KEEP = 16;
const AHEAD = 8;
const BEHIND = 1;
const PARALLEL = 4;
const images = new Map(); // key movieId/frame -> ImageBitmap | 'loading' | 'none'
const inflight = new Map(); // key -> { ctrl: AbortController, prefetch: bool }
let wanted = []; // frames to fetch ahead, nearest first
let imagesFor = null;
let noImages = false;

function imageKey(n) { return state.movieId + '/' + n; }

async function loadImage(n, prefetch) {
  const key = imageKey(n);
  if (images.has(key) || noImages) return;
  const ctrl = new AbortController();
  images.set(key, 'loading');
  inflight.set(key, { ctrl, prefetch });
  try {
    const res = await api('GET', moviePath(state.movieId) + '/frames/' + n + '/image', {
      accept: 'image/*', raw: true, cache: 'default', signal: ctrl.signal, priority: prefetch ? 'low' : 'high',
    });
    const bmp = await createImageBitmap(await res.blob());
    if (ctrl.signal.aborted || images.get(key) !== 'loading') { bmp.close(); return; }
    images.set(key, bmp);
    evict();
    if (imageKey(state.frame) === key) draw();
    markReady();
  } catch (err) {
    if (ctrl.signal.aborted) {
      if (images.get(key) === 'loading') images.delete(key);
      return;
    }
    images.set(key, 'none');
    if (err instanceof APIError && err.status === 404) noImages = true; // no frame images for this movie: stop asking
  } finally {
    if (inflight.get(key) && inflight.get(key).ctrl === ctrl) inflight.delete(key);
    pump();
  }
}

// near: the frames kept whatever their age (shown, or wanted ahead).
function near() { return new Set([imageKey(state.frame), ...wanted.map(imageKey)]); }

function evict() {
  let bitmaps = 0;
  for (const v of images.values()) if (typeof v === 'object') bitmaps++;
  if (bitmaps <= KEEP) return;
  const keep = near();
  for (const [key, v] of images) {
    if (bitmaps <= KEEP) break;
    if (typeof v !== 'object' || keep.has(key)) continue;
    v.close();
    images.delete(key);
    bitmaps--;
  }
}

// markReady tells (data-ready-ahead on the canvas, for tests) how many
// frames after the shown one are decoded and ready.
function markReady() {
  let n = 0;
  while (typeof images.get(imageKey(state.frame + n + 1)) === 'object') n++;
  $('#player').dataset.readyAhead = n;
}

// prefetchAround wants the frames near n and cancels fetches ahead that are
// no longer near.
function prefetchAround(n) {
  const m = state.movie;
  wanted = [];
  if (m && m.video && !noImages) {
    for (let i = 1; i <= AHEAD && n + i < m.frameCount; i++) wanted.push(n + i);
    for (let i = 1; i <= BEHIND && n - i >= 0; i++) wanted.push(n - i);
  }
  const keep = near();
  for (const [key, f] of inflight) if (f.prefetch && !keep.has(key)) f.ctrl.abort();
  markReady();
  pump();
}

function pump() {
  let running = 0;
  for (const f of inflight.values()) if (f.prefetch) running++;
  for (const n of wanted) {
    if (running >= PARALLEL || noImages) return;
    if (images.has(imageKey(n))) continue;
    running++;
    loadImage(n, true);
  }
}

export function resetImages() {
  for (const f of inflight.values()) f.ctrl.abort();
  inflight.clear();
  for (const v of images.values()) if (typeof v === 'object') v.close();
  images.clear();
  wanted = [];
  imagesFor = null;
  noImages = false;
}

// ------------------------------------------------------------------ drawing --

export function nearestTraced(frame) {
  let lo = 0;
  let hi = state.frames.length - 1;
  let best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (state.frames[mid].frame <= frame) { best = state.frames[mid].frame; lo = mid + 1; } else hi = mid - 1;
  }
  return best;
}

// A lost point (the tracker lost the marker there) has no position: a gap.
export const isLost = (p) => !p || p.lost === true || p.x == null || p.y == null;

export function draw() {
  const c = $('#player');
  const g = c.getContext('2d');
  const m = state.movie;
  const w = c.width;
  const h = c.height;
  if (m && m.video && imagesFor !== state.movieId) { imagesFor = state.movieId; }
  const img = m && m.video ? images.get(imageKey(state.frame)) : null;
  c.dataset.source = img && typeof img === 'object' ? 'image' : 'drawn';
  if (img && typeof img === 'object') {
    images.delete(imageKey(state.frame)); // most recently shown last
    images.set(imageKey(state.frame), img);
    g.drawImage(img, 0, 0, w, h);
  } else {
    if (m && m.video) loadImage(state.frame, false);
    const t = m && m.frameCount > 1 ? state.frame / (m.frameCount - 1) : 0;
    const grad = g.createLinearGradient(0, 0, w, h);
    grad.addColorStop(0, `hsl(${210 + 40 * t}, 30%, 22%)`);
    grad.addColorStop(1, `hsl(${250 + 40 * t}, 35%, 12%)`);
    g.fillStyle = grad;
    g.fillRect(0, 0, w, h);
    g.fillStyle = 'rgba(255,255,255,0.85)';
    g.font = '600 20px system-ui, sans-serif';
    g.fillText('Frame ' + state.frame + (m ? ' of ' + (m.frameCount - 1) : ''), 14, 30);
  }
  if (!m) return;
  if (m.trim && (state.frame < m.trim.start || state.frame >= m.trim.end)) {
    g.fillStyle = 'rgba(255,200,80,0.95)';
    g.font = '600 16px system-ui, sans-serif';
    g.fillText('outside the trim', 14, 54);
  }
  const ms = m.markers || [];
  const idx = new Map(ms.map((mk, i) => [mk.id, i]));
  const labels = new Map(ms.map((mk) => [mk.id, mk.label || mk.id]));
  // Trails up to the current frame; a lost point breaks the line (a gap).
  if (state.frames.length) {
    g.lineWidth = 2;
    for (const mk of ms) {
      g.strokeStyle = colour(idx.get(mk.id));
      g.beginPath();
      let pen = false;
      for (const f of state.frames) {
        if (f.frame > state.frame) break;
        const p = (f.points || []).find((q) => q.markerId === mk.id);
        if (isLost(p)) { pen = false; continue; }
        if (pen) g.lineTo(p.x * w, p.y * h); else g.moveTo(p.x * w, p.y * h);
        pen = true;
      }
      g.stroke();
    }
  }
  const traced = state.framesByIndex.get(nearestTraced(state.frame));
  if (traced) {
    for (const p of traced.points || []) {
      if (isLost(p)) continue;
      dot(g, p.x * w, p.y * h, colour(idx.get(p.markerId) || 0), true, labels.get(p.markerId) || p.markerId);
    }
  }
  const placing = !traced || state.frame === (m.trim ? m.trim.start : 0);
  for (const mk of ms) {
    if (placing || mk.id === state.selected) {
      dot(g, mk.x * w, mk.y * h, colour(idx.get(mk.id)), false, traced ? null : mk.label || mk.id, mk.id === state.selected);
    }
  }
}

function dot(g, x, y, col, filled, label, selected) {
  g.beginPath();
  g.arc(x, y, filled ? 6 : 9, 0, 2 * Math.PI);
  g.lineWidth = selected ? 5 : 3;
  g.strokeStyle = col;
  g.fillStyle = col;
  if (filled) g.fill(); else g.stroke();
  if (label) {
    g.font = '600 14px system-ui, sans-serif';
    g.lineWidth = 3;
    g.strokeStyle = 'rgba(0,0,0,0.8)';
    g.strokeText(label, x + 12, y - 10);
    g.fillStyle = '#fff';
    g.fillText(label, x + 12, y - 10);
  }
}

// ---------------------------------------------------------------- playback --

export function timecode(frame, rate) {
  const s = frame / (rate || 1);
  const mm = Math.floor(s / 60);
  const ss = s - mm * 60;
  return String(mm).padStart(2, '0') + ':' + ss.toFixed(3).padStart(6, '0');
}

export function setFrame(n) {
  const m = state.movie;
  if (!m) return;
  state.frame = Math.min(Math.max(0, n | 0), m.frameCount - 1);
  $('#frame-slider').value = state.frame;
  $('#frame-label').textContent = state.frame;
  $('#timecode').textContent = timecode(state.frame, m.frameRate);
  $('#frame-slider').setAttribute('aria-valuetext', 'frame ' + state.frame + ', ' + timecode(state.frame, m.frameRate));
  draw();
  prefetchAround(state.frame);
}

export function stopPlayback() {
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
$('#prev-frame').addEventListener('click', () => setFrame(state.frame - 1));
$('#next-frame').addEventListener('click', () => setFrame(state.frame + 1));

// , and . step frames anywhere but in a text field.
document.addEventListener('keydown', (e) => {
  if (!state.movie || e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA')) return;
  if (e.key === ',') { setFrame(state.frame - 1); e.preventDefault(); }
  if (e.key === '.') { setFrame(state.frame + 1); e.preventDefault(); }
});
