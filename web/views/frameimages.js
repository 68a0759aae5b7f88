// The frame images of the open movie: fetched, decoded, kept and fetched
// ahead. A cache of the view, not page state.
//
// Where the browser can (WebCodecs, a rendition in chunks), a frame is
// decoded here from the movie's chunk (views/framechunks.js): a jump decodes
// the GOP that shows it, a step lands on a frame that GOP already made.
// Otherwise (another browser, a chunk this browser cannot decode, or
// localStorage 'tracinglocks.frameSource' = 'images') the real frame comes
// from GET /movies/{id}/frames/{n}/image, a JPEG the server decodes; the
// request needs the identity headers, so it is fetched and decoded here.
// Without a video the page draws a stand-in frame.
//
// A frame image never changes (a movie is ingested once), so it is fetched
// through the browser's HTTP cache: the API's redirect is cached for minutes
// and the image behind it is served as immutable. Decoded frames are kept as
// the decoder's VideoFrames (drawable at full size) and, once shown or
// wanted ahead, ImageBitmaps of them at the canvas's size; or as
// ImageBitmaps of the JPEGs (made off the main thread by createImageBitmap,
// at the canvas's size when the canvas is smaller than the frame and not
// zoomed, so a step onto a fetched frame only copies its pixels; the JPEG is
// kept to decode it again at full size when zoomed), at most KEEP_BYTES of
// them (a 1080p frame is 3 MB as a VideoFrame, 8 MB as a full ImageBitmap),
// least recently shown first out. Around the shown frame the next
// AHEAD frames in the direction the viewer last stepped and the BEHIND ones
// the other way are fetched ahead, at most PARALLEL at a time and at low
// priority, nearest first, once the shown frame's own image is in; the ones
// behind only after a step (not a jump: on the server they are a second
// decode of the chunk up to there, ~0.5 CPU-s at 1080p). Moving elsewhere (a jump, another movie, leaving Analyze)
// cancels the ones no longer near; a cancelled fetch is forgotten at once,
// so asking for that frame again fetches it again.
'use strict';

import { $ } from '../dom.js';
import { state } from '../state.js';
import { api, APIError, moviePath } from '../api.js';
import { usable, decodeGOP, forget, shrink } from './framechunks.js';

const KEEP_BYTES = 192 * 2 ** 20;
const AROUND = 60; // a decoded GOP's frames kept this far after the shown one (a GOP is at most a chunk), and a sixth as far before
const AHEAD = 8;
const BEHIND = 2;
const PARALLEL = 4;
const RETRY_MS = 2000; // a frame whose image failed (not a 404) is asked for again after this
const images = new Map(); // key movieId/frame -> { bmp: ImageBitmap | VideoFrame, full, blob? } | 'loading' | 'none'
const inflight = new Map(); // key -> { ctrl: AbortController, prefetch: bool }
let wanted = []; // frames to fetch ahead, nearest first: { n, behind }
let lastFrame = -1; // the frame shown before (the stepping direction)
let direction = 1;
let imagesFor = null;
let noImages = false;
let onLoaded = () => {};

// whenLoaded sets what to do when the shown frame's image arrives.
export function whenLoaded(fn) { onLoaded = fn; }

function imageKey(n) { return state.movieId + '/' + n; }

// chunked: this movie's frames are decoded here from its chunks.
function chunked() {
  let images = false;
  try { images = localStorage.getItem('tracinglocks.frameSource') === 'images'; } catch { /* no storage */ }
  return !images && !!state.movie && state.movie.id === state.movieId && usable(state.movie);
}

function loadImage(n, prefetch) {
  return chunked() ? loadFromChunk(n) : loadJPEG(n, prefetch);
}

// sinkFor is the chunk decoder's sink for movie id's frames: the frames
// asked for, and those of a decoded GOP near the shown one, while id is the
// open movie (a GOP of the movie left behind may still be decoded: its
// chunk was on its way when forMovie forgot the decoders).
function sinkFor(id) {
  return { wants: (n) => id === state.movieId && keeps(n), take: (n, frame) => (id === state.movieId ? take(n, frame) : frame.close()) };
}
let sink = sinkFor(null); // the open movie's (forMovie)

// keeps: frame n is asked for, or near the shown frame and not yet had.
function keeps(n) {
  const v = images.get(imageKey(n));
  return v === 'loading' || (v === undefined && n - state.frame <= AROUND && state.frame - n <= AROUND / 6);
}

function take(n, frame) {
  // The decoded frame is kept as it is (drawable at full size) until it
  // is shown or wanted ahead (shrinkAhead); the cache closes it.
  const key = imageKey(n);
  if (typeof images.get(key) === 'object') { frame.close(); return; }
  images.set(key, { bmp: frame, full: true });
  evict();
  if (imageKey(state.frame) === key) onLoaded();
  markReady();
  pump();
  shrinkAhead();
}

function loadFromChunk(n) {
  const key = imageKey(n);
  if (images.has(key) || noImages) return;
  images.set(key, 'loading');
  decodeGOP(state.movie, n, sink).then(() => {
    // Decoded, and not delivered: the GOP did not show it.
    if (images.get(key) === 'loading') failed(key, false);
  }, (err) => {
    if (images.get(key) !== 'loading') return;
    images.delete(key);
    if (usable(state.movie)) failed(key, false); // the chunk did not arrive: ask again later
    else if (imageKey(state.frame) === key) onLoaded(); // this browser cannot: the server's JPEG instead
    console.warn('frame ' + n + ' from its chunk: ' + err.message);
  });
}

// failed: key's image could not be had; a 404 means the movie has none
// (stop asking), anything else may pass: it is asked for again later.
function failed(key, gone) {
  images.set(key, 'none');
  if (gone) {
    noImages = true;
    return;
  }
  setTimeout(() => {
    if (images.get(key) !== 'none') return;
    images.delete(key);
    if (imageKey(state.frame) === key) onLoaded();
  }, RETRY_MS);
}

async function loadJPEG(n, prefetch) {
  const key = imageKey(n);
  if (images.has(key) || noImages) return;
  const ctrl = new AbortController();
  images.set(key, 'loading');
  inflight.set(key, { ctrl, prefetch });
  const current = () => !ctrl.signal.aborted && inflight.get(key) && inflight.get(key).ctrl === ctrl;
  try {
    const res = await api('GET', moviePath(state.movieId) + '/frames/' + n + '/image', {
      accept: 'image/*', raw: true, cache: 'default', signal: ctrl.signal, priority: prefetch ? 'low' : 'high',
    });
    const blob = await res.blob();
    const fit = fitted();
    const bmp = await (fit ? createImageBitmap(blob, { resizeWidth: fit.width, resizeHeight: fit.height, resizeQuality: 'low' }) : createImageBitmap(blob));
    if (!current()) { bmp.close(); return; }
    images.set(key, { bmp, blob, full: !fit });
    evict();
    if (imageKey(state.frame) === key) onLoaded();
    markReady();
  } catch (err) {
    if (!current()) return; // cancelled: forgotten when cancelled
    failed(key, err instanceof APIError && err.status === 404);
  } finally {
    if (inflight.get(key) && inflight.get(key).ctrl === ctrl) inflight.delete(key);
    pump();
  }
}

// cancel stops fetching key and forgets it, so that a later ask fetches it
// again.
function cancel(key) {
  const f = inflight.get(key);
  if (!f) return;
  inflight.delete(key);
  if (images.get(key) === 'loading') images.delete(key);
  f.ctrl.abort();
}

// near: the frames kept whatever their age (shown, or wanted ahead).
function near() { return new Set([imageKey(state.frame), ...wanted.map((w) => imageKey(w.n))]); }

// shrinkAhead turns, one at a time, the shown frame and the frames wanted
// ahead that are decoded VideoFrames into ImageBitmaps at the canvas's size
// (a worker makes them: framechunks.shrink): drawing a 1080p VideoFrame
// converts it on the main thread each time (~15 ms without a GPU), drawing
// the bitmap only copies it. Zoomed in, a VideoFrame is drawn as it is, and
// a shrunk frame's GOP is decoded again for it (shownImage).
let shrinking = false;
function shrinkAhead() {
  const fit = fitted();
  if (shrinking || !fit) return;
  for (const n of [state.frame, ...wanted.map((w) => w.n)]) {
    const key = imageKey(n);
    const v = images.get(key);
    if (typeof v !== 'object' || !v.bmp.displayWidth) continue;
    shrinking = true;
    // A clone goes to the worker (the same pixels): v stays drawable meanwhile.
    shrink(v.bmp.clone(), fit.width, fit.height).then((bmp) => {
      if (images.get(key) !== v) { bmp.close(); return; }
      images.set(key, { bmp, full: false }); // in v's place: the same age
      v.bmp.close();
    }, () => {}).finally(() => {
      shrinking = false;
      shrinkAhead();
    });
    return;
  }
}

function evict() {
  // An ImageBitmap holds 4 bytes a pixel, a decoded (I420) VideoFrame 1.5.
  const size = (v) => (v.bmp.displayWidth ? v.bmp.displayWidth * v.bmp.displayHeight * 1.5 : v.bmp.width * v.bmp.height * 4);
  let bytes = 0;
  for (const v of images.values()) if (typeof v === 'object') bytes += size(v);
  if (bytes <= KEEP_BYTES) return;
  const keep = near();
  for (const [key, v] of images) {
    if (bytes <= KEEP_BYTES) break;
    if (typeof v !== 'object' || keep.has(key)) continue;
    bytes -= size(v);
    v.bmp.close();
    images.delete(key);
  }
}

// markReady tells (data-ready-ahead on the canvas, for tests) how many
// frames after the shown one are decoded and ready.
function markReady() {
  let n = 0;
  while (typeof images.get(imageKey(state.frame + n + 1)) === 'object') n++;
  $('#player').dataset.readyAhead = n;
  $('#player').dataset.frameSource = chunked() ? 'chunks' : 'images';
}

// prefetchAround wants the frames near n, AHEAD in the direction of the
// last step and BEHIND the other way, and cancels fetches ahead that are
// no longer near.
export function prefetchAround(n) {
  const m = state.movie;
  const stepped = lastFrame >= 0 && Math.abs(n - lastFrame) <= 10; // a step (Shift: ten), not a jump
  // The direction is the last step's; a jump (back or forth) fetches the
  // frames after it: the frames before a jump's frame would cost the server
  // a second decode of the chunk (half of a jump's ffmpeg CPU when a jump
  // back took the direction: docs/media.md, "Viewer latency").
  if (!stepped) direction = 1;
  else if (n !== lastFrame) direction = n < lastFrame ? -1 : 1;
  lastFrame = n;
  wanted = [];
  if (m && m.video && !noImages) {
    for (let i = 1; i <= AHEAD; i++) {
      const f = n + direction * i;
      if (f >= 0 && f < m.frameCount) wanted.push({ n: f, behind: false });
    }
    for (let i = 1; i <= (stepped ? BEHIND : 0); i++) {
      const f = n - direction * i;
      if (f >= 0 && f < m.frameCount) wanted.push({ n: f, behind: true });
    }
  }
  const keep = near();
  for (const [key, f] of inflight) if (f.prefetch && !keep.has(key)) cancel(key);
  markReady();
  pump();
  shrinkAhead();
}

function pump() {
  let running = 0;
  for (const f of inflight.values()) if (f.prefetch) running++;
  // Until the shown frame's own image is in, nothing else is asked: on the
  // server a prefetch that arrives before it would start a decode of its
  // own (a run starts at the frame asked), several per jump.
  if (typeof images.get(imageKey(state.frame)) !== 'object') return;
  const chunks = chunked();
  for (const w of wanted) {
    if ((!chunks && running >= PARALLEL) || noImages) return;
    if (images.has(imageKey(w.n))) continue;
    running++;
    loadImage(w.n, true);
  }
}

// forMovie drops everything of another movie.
export function forMovie(id) {
  if (imagesFor === id) return;
  for (const key of [...inflight.keys()]) cancel(key);
  for (const v of images.values()) if (typeof v === 'object') v.bmp.close();
  images.clear();
  forget();
  sink = sinkFor(id);
  wanted = [];
  lastFrame = -1;
  direction = 1;
  noImages = false;
  imagesFor = id;
}

// fitted: the size to decode a frame at, when the canvas at its zoom has
// fewer pixels than the frame (the canvas's own size: the decode scales it
// off the main thread and a step draws it 1:1); null: the frame's own size.
function fitted() {
  const c = $('#player');
  const v = state.movie && state.movie.video;
  if (!v || !c.width || !c.height || state.view.zoom !== 1 || c.width >= v.width || c.height >= v.height) return null;
  return { width: c.width, height: c.height };
}

// shownImage is the decoded image of frame n (most recently shown last), or
// null after asking for it. An image decoded at the canvas's size that the
// canvas now needs larger (a zoom, a wider window) is decoded again at the
// frame's own size, and drawn again when done (it is frame n meanwhile).
export function shownImage(n) {
  const key = imageKey(n);
  const img = images.get(key);
  if (img && typeof img === 'object') {
    images.delete(key);
    images.set(key, img);
    const c = $('#player');
    if (!img.full && !img.upgrading && (c.width * state.view.zoom > img.bmp.width || c.height * state.view.zoom > img.bmp.height)) {
      img.upgrading = true;
      const full = (bmp) => {
        if (images.get(key) !== img) { bmp.close(); return; }
        images.set(key, { bmp, blob: img.blob, full: true }); // the scaled one is left to the collector: it may be on screen
        if (imageKey(state.frame) === key) onLoaded();
      };
      if (img.blob) {
        createImageBitmap(img.blob).then(full, () => { img.upgrading = false; });
      } else {
        // A frame shrunk from its chunk: its GOP decoded again for it.
        decodeGOP(state.movie, n, { wants: (f) => f === n && images.get(key) === img, take: (f, frame) => full(frame) })
          .catch(() => { img.upgrading = false; });
      }
    }
    return img.bmp;
  }
  loadImage(n, false);
  return null;
}
