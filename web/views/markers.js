// Markers: placed with the mouse or the keyboard, nudged with the arrow
// keys, labelled, and removed (WCAG 2.1.1: nothing needs a mouse).
'use strict';

import { $, el, show, setText, fieldError } from '../dom.js';
import { state } from '../state.js';
import { colour, editable, correctable, markerFrame, markerFrameText } from '../facts.js';
import { addMarker, updateMarker, removeMarker, selectMarker, nudgeMarker } from '../actions/markers.js';
import { setFrame } from '../actions/player.js';
import { screenToFrame } from './player.js';

const NUDGE = 0.005;      // an arrow key moves a marker by half a percent of the frame (at zoom 1)
const NUDGE_BIG = 0.05;   // with Shift, by five percent; both divided by the zoom (the same distance on screen)

const pct = (v) => Math.round(v * 1000) / 10;

// selectedOf: the selected marker's id, if it still exists.
const selectedOf = (s) => ((s.movie && s.movie.markers) || []).some((mk) => mk.id === s.selected) ? s.selected : null;

const VIEW_KEYS = 'On the frame: Left and Right arrows step (Shift: 10 frames), Space plays, Home and End go to the ends, + and - zoom, 0 fits, Ctrl+arrows pan.';

// A touch screen without a keyboard gets gestures, not keys.
const touchOnly = () => window.matchMedia('(pointer: coarse)').matches && !window.matchMedia('(any-pointer: fine)').matches;

function hint(can, selected, corr) {
  if (touchOnly()) {
    return (can ? 'Tap the frame to place a marker. ' : '') + (corr ? 'Drag a traced point to correct it. ' : '') + 'Pinch to zoom, drag a zoomed frame to move it; the buttons below step and play.';
  }
  if (corr && !selected) return 'Drag a marker\u2019s traced point to correct it on this frame; click elsewhere on the frame, or press Enter on it, to place a marker. ' + VIEW_KEYS;
  if (!can) return VIEW_KEYS + ' , and . step frames anywhere.';
  return selected
    ? 'Arrow keys move the selected marker (Shift: farther), Delete removes it, Escape deselects. , and . step frames.'
    : 'Click the frame, or press Enter on it, to place a marker. ' + VIEW_KEYS;
}

// centre: the frame point at the middle of the viewer (where Enter and
// "Add marker" place one, in sight at any zoom).
function centre() {
  const r = $('#player').getBoundingClientRect();
  const p = screenToFrame(r.left + r.width / 2, r.top + r.height / 2);
  return [p.x, p.y];
}

const clamp01 = (v) => Math.min(Math.max(v, 0), 1);

function item(mk, i, can, selected) {
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
      updateMarker(mk.id, { [axis]: +(v / 100).toFixed(4) });
    },
    'aria-describedby': 'markers-error',
  });
  return el('li', { dataset: { markerId: mk.id, selected: String(selected === mk.id) } },
    el('span', { className: 'swatch', style: 'background:' + colour(i), 'aria-hidden': 'true' }),
    el('label', { htmlFor: 'marker-label-' + mk.id, className: 'sr-only' }, 'Label of marker ' + (i + 1)),
    el('input', { type: 'text', id: 'marker-label-' + mk.id, value: mk.label, maxLength: 64, disabled: !can,
      className: 'edit-control', onchange: (e) => updateMarker(mk.id, { label: e.target.value }) }),
    el('label', { htmlFor: 'marker-x-' + mk.id }, 'x %'), coord('x'),
    el('label', { htmlFor: 'marker-y-' + mk.id }, 'y %'), coord('y'),
    el('button', { type: 'button', id: 'marker-select-' + mk.id, disabled: !can, className: 'edit-control small-button',
      'aria-pressed': String(selected === mk.id), dataset: { testid: 'select-marker' },
      onclick: () => {
        selectMarker(state.selected === mk.id ? null : mk.id);
        if (state.selected) { setFrame(markerFrame(mk)); $('#player').focus(); }
      } },
    'Move with arrow keys'),
    el('span', { className: 'marker-frame small', id: 'marker-frame-' + mk.id, dataset: { testid: 'marker-frame', frame: String(markerFrame(mk)) } },
      markerFrameText(state.movie, mk) + ' '),
    el('button', { type: 'button', className: 'small-button', dataset: { testid: 'marker-goto' },
      'aria-label': 'Go to frame ' + markerFrame(mk) + ', where ' + (mk.label || 'marker ' + (i + 1)) + ' was placed',
      onclick: () => setFrame(markerFrame(mk)) }, 'Go to frame ' + markerFrame(mk)),
    el('button', { type: 'button', id: 'marker-remove-' + mk.id, disabled: !can, className: 'edit-control small-button',
      dataset: { testid: 'remove-marker' }, 'aria-label': 'Remove ' + (mk.label || 'marker ' + (i + 1)),
      onclick: () => { removeMarker(mk.id).then(() => $('#add-marker').focus()); } }, 'Remove'));
}

export function render(s) {
  if (!s.movie) return;
  const can = editable(s);
  const selected = selectedOf(s);
  setText($('#canvas-hint'), hint(can, selected, correctable(s)));
  const ms = s.movie.markers || [];
  // Do not rebuild the list under the user's fingers.
  const list = $('#markers');
  const key = JSON.stringify([can, selected, ms, s.movie.trim]);
  if (list.dataset.key === key) return;
  if (list.contains(document.activeElement) && document.activeElement.tagName === 'INPUT') return;
  const focusedId = list.contains(document.activeElement) ? document.activeElement.id : '';
  list.dataset.key = key;
  list.replaceChildren(...ms.map((mk, i) => item(mk, i, can, selected)));
  if (focusedId && document.getElementById(focusedId)) document.getElementById(focusedId).focus();
  show($('#markers-empty'), ms.length === 0);
}

$('#player').addEventListener('click', (e) => {
  if (!editable(state)) return;
  const p = screenToFrame(e.clientX, e.clientY);
  addMarker(clamp01(p.x), clamp01(p.y));
});

$('#add-marker').addEventListener('click', () => {
  if (!editable(state)) return;
  addMarker(...centre()).then(() => $('#player').focus());
});

$('#player').addEventListener('keydown', (e) => {
  if (!editable(state) || state.correcting || e.ctrlKey || e.metaKey || e.altKey) return;
  const sel = selectedOf(state);
  if (e.key === 'Enter' && !sel) { e.preventDefault(); addMarker(...centre()); return; }
  if (!sel) return;
  const d = (e.shiftKey ? NUDGE_BIG : NUDGE) / state.view.zoom;
  const move = { ArrowLeft: [-d, 0], ArrowRight: [d, 0], ArrowUp: [0, -d], ArrowDown: [0, d] }[e.key];
  if (move) {
    e.preventDefault();
    nudgeMarker(sel, move[0], move[1]);
  } else if (e.key === 'Delete' || e.key === 'Backspace') {
    e.preventDefault();
    removeMarker(sel);
  } else if (e.key === 'Escape') {
    selectMarker(null);
  }
});
