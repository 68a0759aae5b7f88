// What is drawn over the frame image, whatever its source: trails, the
// traced points of the shown frame, the markers where they were placed,
// and the point being corrected (issue 24). In CSS pixels of the canvas,
// at a constant screen size whatever the zoom; `at(x, y)` maps a frame
// point (fractions) to the canvas. How a point is drawn says what it is:
//   - a confident traced point: a filled dot;
//   - a doubted one (`doubt`): a hollow, dashed ring;
//   - a corrected one (a key frame of its marker): a square around the dot;
//   - a marker where it was placed (on its frame): a ring;
//   - the point being corrected: a ring with a cross.
// Lost points have no position: they are gaps in the trails. The frame's
// text alternative (views/correct.js, #frame-points) says all of it in words.
'use strict';

import { colour, isLost, nearestTraced, keyAt, markerFrame } from '../facts.js';

export function drawOverlay(g, s, at, w, h) {
  const m = s.movie;
  if (m.trim && (s.frame < m.trim.start || s.frame >= m.trim.end)) {
    label(g, 'outside the trim', 14, h - 14, 'rgba(255,200,80,0.95)');
  }
  const ms = m.markers || [];
  const idx = new Map(ms.map((mk, i) => [mk.id, i]));
  const labels = new Map(ms.map((mk) => [mk.id, mk.label || mk.id]));
  const col = (id) => colour(idx.has(id) ? idx.get(id) : 0);
  // Trails up to the current frame; a lost point breaks the line (a gap).
  if (s.frames.length) {
    g.lineWidth = 2;
    g.setLineDash([]);
    for (const mk of ms) {
      g.strokeStyle = col(mk.id);
      g.beginPath();
      let pen = false;
      for (const f of s.frames) {
        if (f.frame > s.frame) break;
        const p = (f.points || []).find((q) => q.markerId === mk.id);
        if (isLost(p)) { pen = false; continue; }
        const [x, y] = at(p.x, p.y);
        if (pen) g.lineTo(x, y); else g.moveTo(x, y);
        pen = true;
      }
      g.stroke();
    }
  }
  const c = s.correcting && s.correcting.frame === s.frame ? s.correcting : null;
  const traced = s.framesByIndex.get(nearestTraced(s.frames, s.frame));
  if (traced) {
    for (const p of traced.points || []) {
      if (isLost(p) || (c && c.markerId === p.markerId)) continue;
      const [x, y] = at(p.x, p.y);
      const key = traced.frame === s.frame && keyAt(m, p.markerId, s.frame);
      if (p.doubt && !key) ring(g, x, y, col(p.markerId), 7, [3, 3], 2);
      else dot(g, x, y, col(p.markerId));
      if (key) square(g, x, y, col(p.markerId));
      text(g, labels.get(p.markerId) || p.markerId, x, y);
    }
  }
  for (const mk of ms) {
    // On the frame it was placed on, on the frame its tracking starts
    // (the trim's first frame for one placed before it) and, before a
    // trace, on the frames after it.
    const f = markerFrame(mk);
    const placedHere = f === s.frame || s.frame === Math.max(f, m.trim ? m.trim.start : 0) || (!traced && f <= s.frame);
    if (!(placedHere || mk.id === s.selected) || (c && c.markerId === mk.id)) continue;
    const [x, y] = at(mk.x, mk.y);
    ring(g, x, y, col(mk.id), 9, [], mk.id === s.selected ? 5 : 3);
    if (!traced) text(g, mk.label || mk.id, x, y);
  }
  if (c) {
    const [x, y] = at(c.x, c.y);
    ring(g, x, y, col(c.markerId), 11, [], 3);
    g.beginPath();
    g.moveTo(x - 16, y); g.lineTo(x + 16, y);
    g.moveTo(x, y - 16); g.lineTo(x, y + 16);
    g.lineWidth = 2;
    g.stroke();
    text(g, (labels.get(c.markerId) || c.markerId) + ' (correcting)', x, y);
  }
}

function label(g, t, x, y, c) {
  g.font = '600 16px system-ui, sans-serif';
  g.fillStyle = c;
  g.fillText(t, x, y);
}

function dot(g, x, y, c) {
  g.setLineDash([]);
  g.beginPath();
  g.arc(x, y, 6, 0, 2 * Math.PI);
  g.fillStyle = c;
  g.fill();
}

function ring(g, x, y, c, r, dash, width) {
  g.setLineDash(dash);
  g.beginPath();
  g.arc(x, y, r, 0, 2 * Math.PI);
  g.lineWidth = width;
  g.strokeStyle = c;
  g.stroke();
  g.setLineDash([]);
}

function square(g, x, y, c) {
  g.setLineDash([]);
  g.lineWidth = 2;
  g.strokeStyle = c;
  g.strokeRect(x - 10, y - 10, 20, 20);
}

function text(g, t, x, y) {
  if (!t) return;
  g.font = '600 14px system-ui, sans-serif';
  g.lineWidth = 3;
  g.strokeStyle = 'rgba(0,0,0,0.8)';
  g.strokeText(t, x + 12, y - 10);
  g.fillStyle = '#fff';
  g.fillText(t, x + 12, y - 10);
}
