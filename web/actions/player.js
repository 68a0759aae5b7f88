// Frame navigation, playback, and the viewer's zoom and pan. Owns the
// playback clock.
'use strict';

import { state, commit } from '../state.js';
import { FIT, clampView, zoomAt, panBy } from '../viewport.js';

export const SPEEDS = Object.freeze([0.25, 0.5, 1, 1.5, 2, 4]);

export function setFrame(n) {
  const m = state.movie;
  if (!m) return;
  const frame = Math.min(Math.max(0, n | 0), m.frameCount - 1);
  // A correction belongs to its frame: leaving the frame drops it.
  commit(state.correcting && state.correcting.frame !== frame ? { frame, correcting: null } : { frame });
}

export const step = (d) => setFrame(state.frame + d);
export const firstFrame = () => setFrame(0);
export const lastFrame = () => setFrame(state.movie ? state.movie.frameCount - 1 : 0);

// Playback follows a clock: the frame due at the movie's rate times the
// speed is shown (frames are skipped when the screen cannot keep up), but
// never before the shown frame's own image is drawn: while it loads the
// clock waits, so playback slows down instead of showing stand-ins.
let raf = 0;
let anchor = null; // { frame, at }: the clock's start
let isShown = () => true;

// pacePlayback sets how playback knows the shown frame's image is drawn
// (the player view tells it; without an image source every frame is).
export function pacePlayback(fn) { isShown = fn; }

export function stopPlayback() {
  cancelAnimationFrame(raf);
  raf = 0;
  anchor = null;
  if (state.playing) commit({ playing: false });
}

function tick(now) {
  raf = 0;
  const m = state.movie;
  if (!m || !state.playing) { stopPlayback(); return; }
  const last = m.frameCount - 1;
  if (!anchor || anchor.shown !== state.frame) anchor = { frame: state.frame, at: now, shown: state.frame };
  if (!isShown(state.frame)) {
    anchor = { frame: state.frame, at: now, shown: state.frame };
  } else {
    const rate = Math.max(m.frameRate || 24, 1) * state.speed;
    const due = anchor.frame + Math.floor((now - anchor.at) / 1000 * rate);
    if (due > state.frame) {
      setFrame(Math.min(due, last));
      anchor = { ...anchor, shown: state.frame };
    }
    if (state.frame >= last) { stopPlayback(); return; }
  }
  raf = requestAnimationFrame(tick);
}

export function togglePlayback() {
  if (state.playing) { stopPlayback(); return; }
  const m = state.movie;
  if (!m) return;
  if (state.frame >= m.frameCount - 1) setFrame(0);
  anchor = null;
  commit({ playing: true });
  raf = requestAnimationFrame(tick);
}

// setSpeed sets the playback speed (one of SPEEDS); playing goes on at it.
export function setSpeed(v) {
  const speed = SPEEDS.includes(+v) ? +v : 1;
  anchor = null;
  commit({ speed });
}

// The view: zoom (about a point of the canvas, fractions u and v), pan (by
// fractions of the canvas) and fit (the whole frame).
export const zoomBy = (factor, u = 0.5, v = 0.5) => commit({ view: zoomAt(state.view, factor, u, v) });
export const pan = (du, dv) => commit({ view: panBy(state.view, du, dv) });
export const fitView = () => commit({ view: FIT });
export const setView = (v) => commit({ view: clampView(v) });
