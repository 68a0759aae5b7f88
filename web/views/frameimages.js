// The frame images of the open movie: fetched, decoded, kept and fetched
// ahead. A cache of the view, not page state.
//
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
'use strict';

import { $ } from '../dom.js';
import { state } from '../state.js';
import { api, APIError, moviePath } from '../api.js';

const KEEP = 16;
const AHEAD = 8;
const BEHIND = 1;
const PARALLEL = 4;
const RETRY_MS = 2000; // a frame whose image failed (not a 404) is asked for again after this
const images = new Map(); // key movieId/frame -> ImageBitmap | 'loading' | 'none'
const inflight = new Map(); // key -> { ctrl: AbortController, prefetch: bool }
let wanted = []; // frames to fetch ahead, nearest first
let imagesFor = null;
let noImages = false;
let onLoaded = () => {};

// whenLoaded sets what to do when the shown frame's image arrives.
export function whenLoaded(fn) { onLoaded = fn; }

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
    if (imageKey(state.frame) === key) onLoaded();
    markReady();
  } catch (err) {
    if (ctrl.signal.aborted) {
      if (images.get(key) === 'loading') images.delete(key);
      return;
    }
    images.set(key, 'none');
    if (err instanceof APIError && err.status === 404) {
      noImages = true; // no frame images for this movie: stop asking
    } else {
      // A failure that may pass (a timeout, a busy server): ask again later.
      setTimeout(() => {
        if (images.get(key) !== 'none') return;
        images.delete(key);
        if (imageKey(state.frame) === key) onLoaded();
      }, RETRY_MS);
    }
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
export function prefetchAround(n) {
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

// forMovie drops everything of another movie.
export function forMovie(id) {
  if (imagesFor === id) return;
  for (const f of inflight.values()) f.ctrl.abort();
  inflight.clear();
  for (const v of images.values()) if (typeof v === 'object') v.close();
  images.clear();
  wanted = [];
  noImages = false;
  imagesFor = id;
}

// shownImage is the decoded image of frame n (most recently shown last), or
// null after asking for it.
export function shownImage(n) {
  const key = imageKey(n);
  const img = images.get(key);
  if (img && typeof img === 'object') {
    images.delete(key);
    images.set(key, img);
    return img;
  }
  loadImage(n, false);
  return null;
}
