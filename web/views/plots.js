// Plots: per marker, x, y and speed against time as plain SVG, linked to
// the frame slider both ways (the shown frame is marked on every plot;
// hovering or clicking a plot, or its arrow keys, goes to that frame), a
// readout of the values at the shown frame, and a summary per marker
// (distance travelled, mean and max speed, time lost). Values come from
// GET /movies/{id}/results (domain/kinematics), never computed here.
//
// Plain SVG, no chart library: three line plots per marker need a
// polyline, two axes and a cursor; every library in the npm lists that
// draws them (Chart.js, uPlot, ...) draws on a canvas, which screen
// readers cannot read, and would add the page's first build step for
// script. The readout (a live region) and the summary table carry the
// numbers for everyone (docs/page.md).
'use strict';

import { $, el, setText } from '../dom.js';
import { colour } from '../facts.js';
import { setFrame, step } from '../actions/player.js';
import { downloadResults } from '../actions/results.js';

const NS = 'http://www.w3.org/2000/svg';
const W = 320, H = 110, PAD = { l: 44, r: 8, t: 8, b: 20 };
const SERIES = [
  { key: 'x', name: 'x', unit: (u) => u },
  { key: 'y', name: 'y', unit: (u) => u },
  { key: 'speed', name: 'speed', unit: (u) => u + '/s' },
];

function svg(tag, attrs, ...children) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) if (c != null) e.append(c);
  return e;
}

const fmt = (v) => (v == null ? '–' : Math.abs(v) >= 1000 || v === 0 ? String(+v.toFixed(1)) : String(+v.toPrecision(4)));

// plot draws one series of one marker: a line broken at unknown values.
function plot(mk, series, unit, i, t0, t1) {
  const pts = mk.samples.filter((p) => p[series.key] != null);
  const vs = pts.map((p) => p[series.key]);
  let lo = Math.min(...vs), hi = Math.max(...vs);
  if (!vs.length) { lo = 0; hi = 1; }
  if (lo === hi) { lo -= 1; hi += 1; }
  const sx = (t) => PAD.l + (t1 > t0 ? (t - t0) / (t1 - t0) : 0) * (W - PAD.l - PAD.r);
  const sy = (v) => H - PAD.b - (v - lo) / (hi - lo) * (H - PAD.t - PAD.b);
  const runs = [];
  let run = [];
  for (const p of mk.samples) {
    if (p[series.key] == null) { if (run.length) runs.push(run); run = []; continue; }
    run.push(sx(p.time).toFixed(1) + ',' + sy(p[series.key]).toFixed(1));
  }
  if (run.length) runs.push(run);
  const label = (mk.label || mk.id) + ': ' + series.name + ' (' + series.unit(unit) + ') against time (s)';
  const g = svg('svg', {
    viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', tabindex: '0', class: 'plot',
    'aria-label': label + '. Hover, click or use the arrow keys to choose a frame; the readout below says the values.',
    'data-testid': 'plot-' + mk.id + '-' + series.key, 'data-marker': mk.id, 'data-series': series.key,
  },
  svg('title', {}, label),
  svg('line', { x1: PAD.l, y1: H - PAD.b, x2: W - PAD.r, y2: H - PAD.b, class: 'axis' }),
  svg('line', { x1: PAD.l, y1: PAD.t, x2: PAD.l, y2: H - PAD.b, class: 'axis' }),
  svg('text', { x: PAD.l - 4, y: PAD.t + 8, 'text-anchor': 'end', class: 'tick' }, fmt(hi)),
  svg('text', { x: PAD.l - 4, y: H - PAD.b, 'text-anchor': 'end', class: 'tick' }, fmt(lo)),
  svg('text', { x: PAD.l, y: H - 4, class: 'tick' }, fmt(t0) + ' s'),
  svg('text', { x: W - PAD.r, y: H - 4, 'text-anchor': 'end', class: 'tick' }, fmt(t1) + ' s'),
  svg('text', { x: PAD.l + 4, y: PAD.t + 8, class: 'tick' }, series.name + ' (' + series.unit(unit) + ')'),
  ...runs.map((r) => (r.length === 1
    ? svg('circle', { cx: r[0].split(',')[0], cy: r[0].split(',')[1], r: 1.5, fill: colour(i) })
    : svg('polyline', { points: r.join(' '), fill: 'none', stroke: colour(i), 'stroke-width': 1.5 }))),
  svg('line', { class: 'cursor', x1: -10, x2: -10, y1: PAD.t, y2: H - PAD.b }));
  g.dataset.t0 = t0; g.dataset.t1 = t1;
  const frameAt = (clientX) => {
    const r = g.getBoundingClientRect();
    const x = (clientX - r.left) / r.width * W;
    const t = t0 + (x - PAD.l) / (W - PAD.l - PAD.r) * (t1 - t0);
    let best = null;
    for (const p of mk.samples) if (!best || Math.abs(p.time - t) < Math.abs(best.time - t)) best = p;
    return best && best.frame;
  };
  g.addEventListener('click', (e) => { const f = frameAt(e.clientX); if (f != null) setFrame(f); });
  g.addEventListener('mousemove', (e) => { if (e.buttons === 1) { const f = frameAt(e.clientX); if (f != null) setFrame(f); } });
  g.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') { e.preventDefault(); step(e.key === 'ArrowRight' ? 1 : -1); }
  });
  return g;
}

let builtKey = '';

export function render(s) {
  const box = $('#plots');
  if (!box) return;
  const res = s.results;
  for (const id of ['download-results-csv', 'download-results-wide', 'download-results-json']) $('#' + id).disabled = !res;
  if (!res || !s.movie) {
    if (builtKey) { box.replaceChildren(); $('#plots-summary').replaceChildren(); builtKey = ''; }
    setText($('#plots-readout'), '');
    setText($('#plots-units'), s.movie && s.frames.length ? 'Loading results…' : 'Plots appear once frames are traced.');
    return;
  }
  const unit = res.coordinates.unit;
  setText($('#plots-units'), 'Positions in ' + unit + (res.coordinates.calibrated ? ' (calibrated)' : ' from the top-left corner, y down') +
    '; speed in ' + unit + '/s; time in seconds.');
  if (s.resultsKey !== builtKey) {
    builtKey = s.resultsKey;
    const all = res.markers.flatMap((m) => m.samples.map((p) => p.time));
    const t0 = all.length ? Math.min(...all) : 0, t1 = all.length ? Math.max(...all) : 1;
    box.replaceChildren(...res.markers.map((mk, i) => el('figure', { className: 'plot-group', dataset: { marker: mk.id } },
      el('figcaption', {}, mk.label || mk.id), ...SERIES.map((se) => plot(mk, se, unit, i, t0, t1)))));
    const rows = res.markers.map((mk) => {
      const m = mk.summary;
      return el('tr', { dataset: { marker: mk.id } }, el('th', { scope: 'row' }, mk.label || mk.id),
        el('td', { dataset: { value: m.distance } }, fmt(m.distance) + ' ' + unit),
        el('td', { dataset: { value: m.meanSpeed } }, fmt(m.meanSpeed) + ' ' + unit + '/s'),
        el('td', { dataset: { value: m.maxSpeed } }, fmt(m.maxSpeed) + ' ' + unit + '/s'),
        el('td', { dataset: { value: m.timeLost } }, fmt(m.timeLost) + ' s (' + (m.lost + m.uncertain) + ' of ' + m.samples + ' samples)'));
    });
    $('#plots-summary').replaceChildren(el('caption', {}, 'Summary per marker'),
      el('thead', {}, el('tr', {}, ...['Marker', 'Distance travelled', 'Mean speed', 'Max speed', 'Time lost'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, ...rows));
  }
  // The shown frame: a cursor on every plot and the readout.
  const parts = [];
  for (const mk of res.markers) {
    const p = mk.samples.find((q) => q.frame === s.frame);
    for (const g of box.querySelectorAll('svg[data-marker="' + CSS.escape(mk.id) + '"]')) {
      const c = g.querySelector('.cursor');
      const t0 = +g.dataset.t0, t1 = +g.dataset.t1;
      const x = p ? PAD.l + (t1 > t0 ? (p.time - t0) / (t1 - t0) : 0) * (W - PAD.l - PAD.r) : -10;
      c.setAttribute('x1', x); c.setAttribute('x2', x);
    }
    if (!p) { parts.push((mk.label || mk.id) + ': not traced on this frame'); continue; }
    if (p.lost || p.uncertain) { parts.push((mk.label || mk.id) + ': ' + (p.lost ? 'lost' : 'uncertain')); continue; }
    parts.push((mk.label || mk.id) + ': x ' + fmt(p.x) + ', y ' + fmt(p.y) + ' ' + unit + ', speed ' + fmt(p.speed) + ' ' + unit + '/s');
  }
  const r = $('#plots-readout');
  const cur = res.markers.length && res.markers[0].samples.find((q) => q.frame === s.frame);
  r.dataset.frame = s.frame;
  r.dataset.speed = cur && cur.speed != null ? String(cur.speed) : '';
  setText(r, 'Frame ' + s.frame + (cur ? ' (' + fmt(cur.time) + ' s)' : '') + ': ' + parts.join('; ') + '.');
}

for (const [id, kind] of [['download-results-csv', 'csv'], ['download-results-wide', 'wide'], ['download-results-json', 'json']]) {
  const b = document.getElementById(id);
  if (b) b.addEventListener('click', () => downloadResults(kind));
}
