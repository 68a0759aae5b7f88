// The viewer's input: keys on the frame, the wheel, a drag and a pinch.
// Every change goes through actions/player.js (one-way flow); the geometry
// is web/viewport.js's.
//
// Keys on the frame (the canvas focused): ArrowLeft/ArrowRight step a frame
// (Shift: ten), Space plays and pauses, Home/End go to the first/last frame,
// + and - zoom, 0 fits the whole frame, Ctrl (or Cmd) with an arrow pans.
// Anywhere but in a text field, "," and "." step a frame. The markers
// panel's own keys on the frame (arrows move the selected marker) come
// first: this listener is on the document and leaves alone any key already
// handled (preventDefault).
//
// The pointer: the wheel (or a trackpad pinch) zooms about the pointer; a
// drag on a zoomed frame pans it (the click that ends a drag places
// nothing); two fingers pinch-zoom and pan. A view that takes a press on the
// frame for itself (dragging a point) calls preventDefault() on the
// pointerdown: the pan does not start.
'use strict';

import { $ } from '../dom.js';
import { state } from '../state.js';
import { step, firstFrame, lastFrame, togglePlayback, zoomBy, pan, fitView } from '../actions/player.js';

const ZOOM_KEY = 1.25;
const PAN_KEY = 0.1;   // Ctrl+arrow pans a tenth of the canvas
const DRAG_START = 4;  // px a press moves before it is a drag

const c = $('#player');
const inText = (t) => t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);

document.addEventListener('keydown', (e) => {
  if (!state.movie || e.defaultPrevented) return;
  const t = e.target;
  const plain = !e.ctrlKey && !e.metaKey && !e.altKey;
  if (plain && !inText(t) && (e.key === ',' || e.key === '.')) {
    step(e.key === ',' ? -1 : 1);
    e.preventDefault();
    return;
  }
  if (t !== c) return;
  const arrow = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
  if ((e.ctrlKey || e.metaKey) && !e.altKey && arrow) {
    pan(-arrow[0] * PAN_KEY, -arrow[1] * PAN_KEY);
    e.preventDefault();
    return;
  }
  if (!plain) return;
  switch (e.key) {
    case 'ArrowLeft': step(e.shiftKey ? -10 : -1); break;
    case 'ArrowRight': step(e.shiftKey ? 10 : 1); break;
    case ' ': togglePlayback(); break;
    case 'Home': firstFrame(); break;
    case 'End': lastFrame(); break;
    case '+': case '=': zoomBy(ZOOM_KEY); break;
    case '-': case '_': zoomBy(1 / ZOOM_KEY); break;
    case '0': fitView(); break;
    default: return;
  }
  e.preventDefault();
});

// at: the point of the canvas (fractions) under a client point.
function at(x, y) {
  const r = c.getBoundingClientRect();
  return { u: r.width ? (x - r.left) / r.width : 0.5, v: r.height ? (y - r.top) / r.height : 0.5, r };
}

c.addEventListener('wheel', (e) => {
  if (!state.movie) return;
  const px = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaMode === 2 ? e.deltaY * 400 : e.deltaY;
  if (!px || (px > 0 && state.view.zoom <= 1)) return; // the whole frame shows: the wheel scrolls the page
  e.preventDefault();
  const p = at(e.clientX, e.clientY);
  zoomBy(Math.exp(-px * (e.ctrlKey ? 0.01 : 0.002)), p.u, p.v);
}, { passive: false });

const pointers = new Map(); // pointerId -> { x, y }
let press = null;           // { x, y, dragging } of a one-pointer press
let swallowClick = false;

document.addEventListener('pointerdown', (e) => {
  if (e.target !== c || e.defaultPrevented || !state.movie) return;
  if (e.pointerType === 'mouse' && e.button !== 0) return;
  swallowClick = false;
  pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
  try { c.setPointerCapture(e.pointerId); } catch { /* the pointer is gone already */ }
  press = pointers.size === 1 ? { x: e.clientX, y: e.clientY, dragging: false } : null;
});

c.addEventListener('pointermove', (e) => {
  const was = pointers.get(e.pointerId);
  if (!was) return;
  if (pointers.size >= 2) {
    const [a, b] = [...pointers.values()];
    const before = { d: Math.hypot(a.x - b.x, a.y - b.y), x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    const [a2, b2] = [...pointers.values()];
    const after = { d: Math.hypot(a2.x - b2.x, a2.y - b2.y), x: (a2.x + b2.x) / 2, y: (a2.y + b2.y) / 2 };
    const p = at(after.x, after.y);
    if (before.d > 0 && after.d > 0) zoomBy(after.d / before.d, p.u, p.v);
    pan((after.x - before.x) / p.r.width, (after.y - before.y) / p.r.height);
    swallowClick = true;
    return;
  }
  pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
  if (!press) return;
  if (!press.dragging && Math.hypot(e.clientX - press.x, e.clientY - press.y) >= DRAG_START && state.view.zoom > 1) {
    press.dragging = true;
  }
  if (press.dragging) {
    const r = c.getBoundingClientRect();
    pan((e.clientX - was.x) / r.width, (e.clientY - was.y) / r.height);
    swallowClick = true;
  }
});

function release(e) {
  pointers.delete(e.pointerId);
  if (pointers.size === 0) press = null;
}
c.addEventListener('pointerup', release);
c.addEventListener('pointercancel', release);

// The click that ends a drag or a pinch is not a click on the frame.
document.addEventListener('click', (e) => {
  if (!swallowClick || e.target !== c) return;
  swallowClick = false;
  e.stopPropagation();
  e.preventDefault();
}, true);
