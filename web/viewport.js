// The viewer's geometry, pure: how the frame sits in the canvas at a zoom
// and pan, and the one conversion between a point on the screen and a point
// of the frame. No DOM, no state: views/player.js binds it to the canvas.
//
// Frame points are fractions of the frame (0..1 across, 0..1 down: the
// API's marker coordinates). The canvas always has the frame's display
// aspect ratio, so at zoom 1 the frame fills it exactly. A view is
// { zoom, cx, cy }: the zoom (1 = the whole frame) and the frame point shown
// at the canvas's centre. A screen point is a fraction of the canvas
// (u across, v down), whatever its size in pixels.
'use strict';

export const MIN_ZOOM = 1;
export const MAX_ZOOM = 32;

export const FIT = Object.freeze({ zoom: 1, cx: 0.5, cy: 0.5 });

const clamp = (v, lo, hi) => Math.min(Math.max(v, lo), hi);

// clampView keeps the zoom in range and the shown window inside the frame.
export function clampView(v) {
  const zoom = clamp(Number.isFinite(v.zoom) ? v.zoom : 1, MIN_ZOOM, MAX_ZOOM);
  const half = 0.5 / zoom;
  const cx = clamp(Number.isFinite(v.cx) ? v.cx : 0.5, half, 1 - half);
  const cy = clamp(Number.isFinite(v.cy) ? v.cy : 0.5, half, 1 - half);
  return Object.freeze({ zoom, cx, cy });
}

// toFrame: the frame point under the screen point (u, v).
export function toFrame(view, u, v) {
  return { x: view.cx + (u - 0.5) / view.zoom, y: view.cy + (v - 0.5) / view.zoom };
}

// toScreen: where the frame point (x, y) is on the screen (fractions of the
// canvas; outside 0..1 when it is panned out of sight).
export function toScreen(view, x, y) {
  return { u: (x - view.cx) * view.zoom + 0.5, v: (y - view.cy) * view.zoom + 0.5 };
}

// zoomAt multiplies the zoom by factor, keeping the frame point under the
// screen point (u, v) where it is (the wheel's or the pinch's centre).
export function zoomAt(view, factor, u = 0.5, v = 0.5) {
  const p = toFrame(view, u, v);
  const zoom = clamp(view.zoom * factor, MIN_ZOOM, MAX_ZOOM);
  return clampView({ zoom, cx: p.x - (u - 0.5) / zoom, cy: p.y - (v - 0.5) / zoom });
}

// panBy moves the picture by (du, dv) fractions of the canvas (a drag to the
// right shows what was to the left).
export function panBy(view, du, dv) {
  return clampView({ zoom: view.zoom, cx: view.cx - du / view.zoom, cy: view.cy - dv / view.zoom });
}

// source: the part of the frame (fractions) the canvas shows.
export function source(view) {
  const half = 0.5 / view.zoom;
  return { x: view.cx - half, y: view.cy - half, w: 2 * half, h: 2 * half };
}

// fitSize: the canvas's size in CSS pixels for a frame of aspect ratio
// (width / height) in a box maxWidth wide and at most maxHeight high.
export function fitSize(aspect, maxWidth, maxHeight) {
  const a = aspect > 0 && Number.isFinite(aspect) ? aspect : 16 / 9;
  let w = Math.max(0, maxWidth);
  if (maxHeight > 0 && w / a > maxHeight) w = maxHeight * a;
  const width = Math.floor(w);
  return { width, height: Math.max(1, Math.round(width / a)) };
}
