// Markers: placed with the mouse or the keyboard, nudged with the arrow
// keys, labelled, and removed (WCAG 2.1.1: nothing needs a mouse).
'use strict';

import { $, state, el, show, fieldError } from './state.js';
import { api, moviePath } from './api.js';
import { colour, draw } from './player.js';
import { write, editable } from './analyze.js';

const NUDGE = 0.005;      // an arrow key moves a marker by half a percent
const NUDGE_BIG = 0.05;   // with Shift, by five percent
const SAVE_AFTER_MS = 500; // nudges are saved once the keys rest

let pending = null;

// saveMarkers queues one marker write: change computes the new list from
// the markers as the previous write left them, so quick successive edits
// (add, nudge, remove) never overwrite each other.
let chain = Promise.resolve();
export function saveMarkers(change) {
  clearTimeout(pending);
  pending = null;
  fieldError('markers', '');
  const movie = state.movieId;
  chain = chain.then(() => {
    if (!state.movie || state.movieId !== movie || !state.leaseId) return false;
    const markers = change((state.movie.markers || []).map((mk) => ({ ...mk })));
    return write('Markers', () => api('PUT', moviePath(movie) + '/markers',
      { leaseId: state.leaseId, body: { markers } }), [], 'markers');
  }).catch(() => false);
  return chain;
}

function nextID(ms) {
  let n = ms.length + 1;
  while (ms.some((mk) => mk.id === 'm' + n)) n++;
  return n;
}

export function addMarker(x, y) {
  return saveMarkers((cur) => {
    const n = nextID(cur);
    state.selected = 'm' + n;
    return [...cur, { id: 'm' + n, label: 'Marker ' + n, x: +x.toFixed(4), y: +y.toFixed(4) }];
  });
}

const pct = (v) => Math.round(v * 1000) / 10;

export function renderMarkers(can) {
  const ms = state.movie.markers || [];
  if (state.selected && !ms.some((mk) => mk.id === state.selected)) state.selected = null;
  // Do not rebuild the list under the user's fingers.
  const list = $('#markers');
  const key = JSON.stringify([can, state.selected, ms]);
  if (list.dataset.key === key) return;
  if (list.contains(document.activeElement) && document.activeElement.tagName === 'INPUT') return;
  const focusedId = list.contains(document.activeElement) ? document.activeElement.id : '';
  list.dataset.key = key;
  const items = ms.map((mk, i) => {
    const update = (patch) => saveMarkers((cur) => cur.map((x) => x.id === mk.id ? { ...x, ...patch } : x));
    const coord = (axis) => el('input', {
      type: 'number', id: 'marker-' + axis + '-' + mk.id, min: 0, max: 100, step: 0.5, value: pct(mk[axis]),
      disabled: !can, className: 'edit-control',
      onchange: (e) => {
        const v = +e.target.value;
        if (e.target.value === '' || !(v >= 0 && v <= 100)) {
          fieldError('markers', 'A position must be between 0 and 100 percent.');
          e.target.setAttribute('aria-invalid', 'true');
          return;
        }
        update({ [axis]: +(v / 100).toFixed(4) });
      },
      'aria-describedby': 'markers-error',
    });
    return el('li', { dataset: { markerId: mk.id, selected: String(state.selected === mk.id) } },
      el('span', { className: 'swatch', style: 'background:' + colour(i), 'aria-hidden': 'true' }),
      el('label', { htmlFor: 'marker-label-' + mk.id, className: 'sr-only' }, 'Label of marker ' + (i + 1)),
      el('input', { type: 'text', id: 'marker-label-' + mk.id, value: mk.label, maxLength: 64, disabled: !can,
        className: 'edit-control', onchange: (e) => update({ label: e.target.value }) }),
      el('label', { htmlFor: 'marker-x-' + mk.id }, 'x %'), coord('x'),
      el('label', { htmlFor: 'marker-y-' + mk.id }, 'y %'), coord('y'),
      el('button', { type: 'button', id: 'marker-select-' + mk.id, disabled: !can, className: 'edit-control small-button',
        'aria-pressed': String(state.selected === mk.id), dataset: { testid: 'select-marker' },
        onclick: () => { state.selected = state.selected === mk.id ? null : mk.id; renderMarkers(editable()); draw(); if (state.selected) $('#player').focus(); } },
      'Move with arrow keys'),
      el('button', { type: 'button', id: 'marker-remove-' + mk.id, disabled: !can, className: 'edit-control small-button',
        dataset: { testid: 'remove-marker' }, 'aria-label': 'Remove ' + (mk.label || 'marker ' + (i + 1)),
        onclick: () => { saveMarkers((cur) => cur.filter((x) => x.id !== mk.id)).then(() => $('#add-marker').focus()); } }, 'Remove'));
  });
  list.replaceChildren(...items);
  if (focusedId && document.getElementById(focusedId)) document.getElementById(focusedId).focus();
  show($('#markers-empty'), ms.length === 0);
}

export function canvasHint(can) {
  if (!can) return 'Keys: , and . step one frame back and forward.';
  return state.selected
    ? 'Arrow keys move the selected marker (Shift: farther), Delete removes it, Escape deselects. , and . step frames.'
    : 'Click the frame, or press Enter here, to place a marker; , and . step frames.';
}

$('#player').addEventListener('click', (e) => {
  if (!editable()) return;
  const r = e.currentTarget.getBoundingClientRect();
  const x = Math.min(Math.max((e.clientX - r.left) / r.width, 0), 1);
  const y = Math.min(Math.max((e.clientY - r.top) / r.height, 0), 1);
  addMarker(x, y);
});

$('#add-marker').addEventListener('click', () => {
  if (!editable()) return;
  addMarker(0.5, 0.5).then(() => $('#player').focus());
});

$('#player').addEventListener('keydown', (e) => {
  if (!editable()) return;
  const ms = state.movie.markers || [];
  const sel = ms.find((mk) => mk.id === state.selected);
  if (e.key === 'Enter' && !sel) { e.preventDefault(); addMarker(0.5, 0.5); return; }
  if (!sel) return;
  const step = e.shiftKey ? NUDGE_BIG : NUDGE;
  const d = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] }[e.key];
  if (d) {
    e.preventDefault();
    sel.x = +Math.min(Math.max(sel.x + d[0], 0), 1).toFixed(4);
    sel.y = +Math.min(Math.max(sel.y + d[1], 0), 1).toFixed(4);
    draw();
    clearTimeout(pending);
    const at = { x: sel.x, y: sel.y };
    pending = setTimeout(() => saveMarkers((cur) => cur.map((x) => x.id === sel.id ? { ...x, ...at } : x)), SAVE_AFTER_MS);
  } else if (e.key === 'Delete' || e.key === 'Backspace') {
    e.preventDefault();
    state.selected = null;
    saveMarkers((cur) => cur.filter((x) => x.id !== sel.id));
  } else if (e.key === 'Escape') {
    state.selected = null;
    renderMarkers(true);
    draw();
  }
});
