// The frame view: the frame image (or a drawn stand-in), markers, trails,
// and frame navigation with buttons and keys.
'use strict';

import { $ } from '../dom.js';
import { state } from '../state.js';
import { colour, isLost, nearestTraced, timecode, editable } from '../facts.js';
import { setFrame, step, togglePlayback } from '../actions/player.js';
import { forMovie, prefetchAround, shownImage, whenLoaded } from './frameimages.js';

let drawnKey = '';

export function render(s) {
  forMovie(s.movieId);
  const m = s.movie;
  if (!m) return;
  const slider = $('#frame-slider');
  slider.max = Math.max(m.frameCount - 1, 0);
  slider.value = s.frame;
  $('#frame-label').textContent = s.frame;
  $('#timecode').textContent = timecode(s.frame, m.frameRate);
  slider.setAttribute('aria-valuetext', 'frame ' + s.frame + ', ' + timecode(s.frame, m.frameRate));
  const can = editable(s);
  $('#player').classList.toggle('placing', can);
  $('#player').setAttribute('aria-label', 'Frame ' + s.frame + ' of the movie' + (can ? ', where you place markers' : ''));
  $('#play').textContent = s.playing ? 'Pause' : 'Play';
  $('#play').setAttribute('aria-pressed', String(s.playing));
  draw();
  const key = s.movieId + '/' + s.frame + '/' + (m.video ? 1 : 0);
  if (key !== drawnKey) { drawnKey = key; prefetchAround(s.frame); }
}

whenLoaded(() => draw());

export function draw() {
  const s = state;
  const c = $('#player');
  const g = c.getContext('2d');
  const m = s.movie;
  const w = c.width;
  const h = c.height;
  const img = m && m.video ? shownImage(s.frame) : null;
  c.dataset.source = img ? 'image' : 'drawn';
  if (img) {
    g.drawImage(img, 0, 0, w, h);
  } else {
    const t = m && m.frameCount > 1 ? s.frame / (m.frameCount - 1) : 0;
    const grad = g.createLinearGradient(0, 0, w, h);
    grad.addColorStop(0, `hsl(${210 + 40 * t}, 30%, 22%)`);
    grad.addColorStop(1, `hsl(${250 + 40 * t}, 35%, 12%)`);
    g.fillStyle = grad;
    g.fillRect(0, 0, w, h);
    g.fillStyle = 'rgba(255,255,255,0.85)';
    g.font = '600 20px system-ui, sans-serif';
    g.fillText('Frame ' + s.frame + (m ? ' of ' + (m.frameCount - 1) : ''), 14, 30);
  }
  if (!m) return;
  if (m.trim && (s.frame < m.trim.start || s.frame >= m.trim.end)) {
    g.fillStyle = 'rgba(255,200,80,0.95)';
    g.font = '600 16px system-ui, sans-serif';
    g.fillText('outside the trim', 14, 54);
  }
  const ms = m.markers || [];
  const idx = new Map(ms.map((mk, i) => [mk.id, i]));
  const labels = new Map(ms.map((mk) => [mk.id, mk.label || mk.id]));
  // Trails up to the current frame; a lost point breaks the line (a gap).
  if (s.frames.length) {
    g.lineWidth = 2;
    for (const mk of ms) {
      g.strokeStyle = colour(idx.get(mk.id));
      g.beginPath();
      let pen = false;
      for (const f of s.frames) {
        if (f.frame > s.frame) break;
        const p = (f.points || []).find((q) => q.markerId === mk.id);
        if (isLost(p)) { pen = false; continue; }
        if (pen) g.lineTo(p.x * w, p.y * h); else g.moveTo(p.x * w, p.y * h);
        pen = true;
      }
      g.stroke();
    }
  }
  const traced = s.framesByIndex.get(nearestTraced(s.frames, s.frame));
  if (traced) {
    for (const p of traced.points || []) {
      if (isLost(p)) continue;
      dot(g, p.x * w, p.y * h, colour(idx.get(p.markerId) || 0), true, labels.get(p.markerId) || p.markerId);
    }
  }
  const placing = !traced || s.frame === (m.trim ? m.trim.start : 0);
  for (const mk of ms) {
    if (placing || mk.id === s.selected) {
      dot(g, mk.x * w, mk.y * h, colour(idx.get(mk.id)), false, traced ? null : mk.label || mk.id, mk.id === s.selected);
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

$('#play').addEventListener('click', togglePlayback);
$('#frame-slider').addEventListener('input', (e) => setFrame(+e.target.value));
$('#prev-frame').addEventListener('click', () => step(-1));
$('#next-frame').addEventListener('click', () => step(1));

// , and . step frames anywhere but in a text field.
document.addEventListener('keydown', (e) => {
  if (!state.movie || e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA')) return;
  if (e.key === ',') { step(-1); e.preventDefault(); }
  if (e.key === '.') { step(1); e.preventDefault(); }
});
