// The frame view: the frame image at its true display aspect ratio, fitted
// to the available width, zoomed and panned (web/viewport.js); markers and
// trails at a constant screen size; frame navigation, playback and zoom with
// buttons, keys, the wheel, a drag and a pinch (input in views/viewerinput.js).
//
// screenToFrame and frameToScreen are the one conversion between a point on
// the screen (client coordinates, CSS pixels) and a point of the frame
// (fractions of its width and height, the API's coordinates): everything
// that places or drags something on the frame uses them.
'use strict';

import { $ } from '../dom.js';
import { state } from '../state.js';
import { timecode, editable } from '../facts.js';
import { setFrame, step, togglePlayback, setSpeed, zoomBy, fitView, pacePlayback, SPEEDS } from '../actions/player.js';
import { toFrame, toScreen, source, fitSize } from '../viewport.js';
import { forMovie, prefetchAround, shownImage, whenLoaded } from './frameimages.js';
import { drawOverlay } from './overlay.js';
import './viewerinput.js';

const STAND_IN_ASPECT = 16 / 9; // a movie without its video is drawn on a 16:9 stand-in
const MIN_HEIGHT = 180;         // the canvas is never fitted smaller than this high
const VIEWPORT_SHARE = 0.72;    // nor taller than this share of the window
const ZOOM_STEP = 1.25;

let drawnKey = '';
let previous = null; // { movieId, frame, img }: the last image drawn, shown while the next one loads
let layoutKey = '';

// aspectOf: the frame's display aspect ratio (the media pipeline has applied
// rotation and non-square pixels to the rendition's size).
export function aspectOf(m) {
  return m && m.video && m.video.width > 0 && m.video.height > 0 ? m.video.width / m.video.height : STAND_IN_ASPECT;
}

// screenToFrame: the frame point (fractions) under the client point, and
// whether it is on the canvas.
export function screenToFrame(clientX, clientY) {
  const r = $('#player').getBoundingClientRect();
  const u = r.width ? (clientX - r.left) / r.width : 0.5;
  const v = r.height ? (clientY - r.top) / r.height : 0.5;
  const p = toFrame(state.view, u, v);
  return { x: p.x, y: p.y, inside: u >= 0 && u <= 1 && v >= 0 && v <= 1 };
}

// frameToScreen: the client point (CSS pixels) of the frame point (x, y),
// and whether it is in sight at the current zoom and pan.
export function frameToScreen(x, y) {
  const r = $('#player').getBoundingClientRect();
  const p = toScreen(state.view, x, y);
  return { clientX: r.left + p.u * r.width, clientY: r.top + p.v * r.height, visible: p.u >= 0 && p.u <= 1 && p.v >= 0 && p.v <= 1 };
}

// layout sizes the canvas: the frame's aspect ratio, as wide as its column,
// no taller than most of the window; its pixels are the screen's pixels.
export function layout() {
  const c = $('#player');
  const box = c.closest('.player');
  if (!box || !box.clientWidth) return;
  const dpr = window.devicePixelRatio || 1;
  const size = fitSize(aspectOf(state.movie), box.clientWidth, Math.max(MIN_HEIGHT, window.innerHeight * VIEWPORT_SHARE));
  const key = [size.width, size.height, dpr].join('x');
  if (key === layoutKey) return;
  layoutKey = key;
  c.style.width = size.width + 'px';
  c.style.height = size.height + 'px';
  c.width = Math.round(size.width * dpr);
  c.height = Math.round(size.height * dpr);
  draw();
}

export function render(s) {
  forMovie(s.movieId);
  const m = s.movie;
  if (!m) return;
  layout();
  const slider = $('#frame-slider');
  slider.max = Math.max(m.frameCount - 1, 0);
  slider.value = s.frame;
  const tc = timecode(s.frame, m.frameRate);
  $('#frame-label').textContent = s.frame;
  $('#timecode').textContent = tc;
  $('#frame-readout').textContent = 'Frame ' + s.frame + ' / ' + Math.max(m.frameCount - 1, 0) + ' \u00b7 ' + tc;
  slider.setAttribute('aria-valuetext', 'frame ' + s.frame + ', ' + tc);
  const can = editable(s);
  const c = $('#player');
  c.classList.toggle('placing', can);
  c.classList.toggle('zoomed', s.view.zoom > 1);
  c.dataset.zoom = String(s.view.zoom);
  c.setAttribute('aria-label', 'Frame ' + s.frame + ' of the movie' + (s.view.zoom > 1 ? ', zoomed ' + zoomWords(s.view.zoom) : '') +
    (can ? ', where you place markers' : ''));
  $('#play').textContent = s.playing ? 'Pause' : 'Play';
  $('#play').setAttribute('aria-pressed', String(s.playing));
  $('#zoom-level').textContent = zoomWords(s.view.zoom);
  $('#zoom-out').disabled = s.view.zoom <= 1;
  $('#zoom-fit').disabled = s.view.zoom <= 1;
  if ($('#speed').value !== String(s.speed)) $('#speed').value = String(s.speed);
  draw();
  const key = s.movieId + '/' + s.frame + '/' + (m.video ? 1 : 0);
  if (key !== drawnKey) { drawnKey = key; prefetchAround(s.frame); }
}

const zoomWords = (z) => Math.round(z * 100) + ' %';

whenLoaded(() => draw());
pacePlayback((n) => {
  const c = $('#player');
  return !(state.movie && state.movie.video) || (c.dataset.source === 'image' && c.dataset.shown === String(n)) || c.dataset.source === 'drawn';
});

export function draw() {
  const s = state;
  const c = $('#player');
  const g = c.getContext('2d');
  const m = s.movie;
  const W = c.width;
  const H = c.height;
  const dpr = W / (parseFloat(c.style.width) || W);
  const view = s.view;
  g.setTransform(1, 0, 0, 1, 0, 0);
  g.fillStyle = '#111';
  g.fillRect(0, 0, W, H);
  let img = m && m.video ? shownImage(s.frame) : null;
  let kind = img ? 'image' : 'drawn';
  if (img) {
    previous = { movieId: s.movieId, frame: s.frame, img };
  } else if (m && m.video && previous && previous.movieId === s.movieId) {
    img = previous.img; // while frame n loads, the last image stays (no flash of the stand-in)
    kind = 'previous';
  }
  let drawn = false;
  if (img) {
    const src = source(view);
    const iw = img.displayWidth || img.width; // an ImageBitmap, or a decoded VideoFrame
    const ih = img.displayHeight || img.height;
    // Magnified past 3 screen pixels per frame pixel: show the pixels.
    g.imageSmoothingEnabled = (W * view.zoom) / iw < 3;
    try {
      g.drawImage(img, src.x * iw, src.y * ih, src.w * iw, src.h * ih, 0, 0, W, H);
      drawn = true;
    } catch {
      previous = null; // a bitmap the cache closed
    }
  }
  if (!drawn) {
    kind = 'drawn';
    standIn(g, m, s.frame, W, H, view);
  }
  c.dataset.source = kind;
  c.dataset.shown = kind === 'drawn' ? '' : String(kind === 'image' ? s.frame : previous.frame);
  if (!m) return;
  // Everything else is drawn in CSS pixels of the canvas, at a constant
  // screen size whatever the zoom.
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  const w = W / dpr;
  const h = H / dpr;
  const at = (x, y) => { const p = toScreen(view, x, y); return [p.u * w, p.v * h]; };
  drawOverlay(g, s, at, w, h);
}

// standIn: the drawn frame of a movie without its video, zoomed like an image.
function standIn(g, m, frame, W, H, view) {
  const t = m && m.frameCount > 1 ? frame / (m.frameCount - 1) : 0;
  const src = source(view);
  g.save();
  g.setTransform(W / src.w, 0, 0, H / src.h, -src.x * W / src.w, -src.y * H / src.h);
  const grad = g.createLinearGradient(0, 0, 1, 1);
  grad.addColorStop(0, `hsl(${210 + 40 * t}, 30%, 22%)`);
  grad.addColorStop(1, `hsl(${250 + 40 * t}, 35%, 12%)`);
  g.fillStyle = grad;
  g.fillRect(0, 0, 1, 1);
  g.restore();
}

$('#play').addEventListener('click', togglePlayback);
$('#frame-slider').addEventListener('input', (e) => setFrame(+e.target.value));
$('#prev-frame').addEventListener('click', () => step(-1));
$('#next-frame').addEventListener('click', () => step(1));
$('#zoom-in').addEventListener('click', () => zoomBy(ZOOM_STEP));
$('#zoom-out').addEventListener('click', () => zoomBy(1 / ZOOM_STEP));
$('#zoom-fit').addEventListener('click', () => fitView());
$('#speed').replaceChildren(...SPEEDS.map((v) => {
  const o = document.createElement('option');
  o.value = String(v);
  o.textContent = v + '\u00d7';
  return o;
}));
$('#speed').addEventListener('change', (e) => setSpeed(+e.target.value));
new ResizeObserver(() => layout()).observe($('#player').closest('.player'));
window.addEventListener('resize', () => layout());
