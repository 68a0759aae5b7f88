// Corrections (issue 24): the panel that lists each marker's corrected
// frames and offers "Retrace from here", the buttons that correct a point
// with the keyboard, the drag of a traced point on the frame, and the
// frame's text alternative (#frame-points: every point of the shown frame
// in words, doubt, loss and corrections included).
//
// A drag: a press on a marker's traced point of the shown (traced) frame
// takes the press (preventDefault on the pointerdown: the viewer does not
// pan), the point follows the pointer and the release saves it. A press
// without a move selects it for the keyboard. The click that follows
// places no marker.
'use strict';

import { $, el, show, setText, replaceIfChanged } from '../dom.js';
import { state } from '../state.js';
import {
  colour, correctable, correctHint, keysOf, keyAt, keyText, pointOf, pointText, retraceFromText, isLost, nearestTraced,
} from '../facts.js';
import { setFrame } from '../actions/player.js';
import { beginCorrection, moveCorrection, nudgeCorrection, cancelCorrection, saveCorrection, retraceFrom } from '../actions/keys.js';
import { screenToFrame, frameToScreen } from './player.js';

const GRAB_PX = 14;       // a press this close to a traced point takes it
const NUDGE = 0.002;      // an arrow key moves the point by 0.2 % of the frame (Shift: 2 %), divided by the zoom
const NUDGE_BIG = 0.02;

const labelOf = (m, id) => { const mk = (m.markers || []).find((x) => x.id === id); return mk ? mk.label || mk.id : id; };

export function render(s) {
  const m = s.movie;
  if (!m) return;
  describeFrame(s);
  const can = correctable(s);
  setText($('#keys-hint'), correctHint(s));
  // One "Correct" button per marker on a traced frame (the keyboard path).
  const ms = m.markers || [];
  const c = s.correcting;
  const buttons = $('#correct-buttons');
  const bkey = JSON.stringify([can, s.frame, c && c.markerId, ms.map((mk) => [mk.id, mk.label])]);
  if (buttons.dataset.key !== bkey) {
    const focused = buttons.contains(document.activeElement) ? document.activeElement.id : '';
    buttons.dataset.key = bkey;
    buttons.replaceChildren(...(can ? ms.map((mk, i) => el('button', {
      type: 'button', id: 'correct-' + mk.id, className: 'small-button edit-control', dataset: { testid: 'correct-marker', markerId: mk.id },
      'aria-pressed': String(!!c && c.markerId === mk.id),
      onclick: () => { if (beginCorrection(mk.id)) $('#player').focus(); },
    }, el('span', { className: 'swatch', style: 'background:' + colour(i), 'aria-hidden': 'true' }), 'Correct ' + (mk.label || mk.id) + ' on frame ' + s.frame)) : []));
    if (focused && document.getElementById(focused)) document.getElementById(focused).focus();
  }
  const busy = $('#correcting');
  show(busy, !!c);
  setText(busy, c ? 'Correcting ' + labelOf(m, c.markerId) + ' on frame ' + c.frame + ': arrow keys move it (Shift: farther), Enter saves it, Escape cancels. ' + retraceFromText(c.frame) : '');
  // The corrections stored, by frame; each goes to its frame.
  const ks = keysOf(m).slice().sort((a, b) => a.frame - b.frame || a.markerId.localeCompare(b.markerId));
  replaceIfChanged($('#keys'), ks.map((k) => el('li', { dataset: { frame: String(k.frame), markerId: k.markerId } },
    keyText(labelOf(m, k.markerId), k) + ' ',
    el('button', { type: 'button', className: 'small-button', onclick: () => setFrame(k.frame) }, 'Go to frame ' + k.frame))));
  show($('#keys-empty'), ks.length === 0);
  // Retrace from the shown frame once a correction is stored there.
  const here = ks.some((k) => k.frame === s.frame);
  const r = $('#retrace-from');
  show(r, here && can && !c);
  r.dataset.frame = String(s.frame);
  setText(r, 'Retrace from frame ' + s.frame);
  show($('#retrace-from-text'), here && can && !c);
  setText($('#retrace-from-text'), here ? retraceFromText(s.frame) : '');
}

// describeFrame: the shown frame's points in words (the canvas's
// accessible description).
function describeFrame(s) {
  const m = s.movie;
  const f = s.framesByIndex.has(s.frame) ? s.frame : nearestTraced(s.frames, s.frame);
  const fr = s.framesByIndex.get(f);
  let t = '';
  if (fr) {
    const parts = (m.markers || []).map((mk) => {
      const p = pointOf(s, mk.id, f);
      return p ? pointText(mk.label || mk.id, p, f === s.frame ? keyAt(m, mk.id, f) : null) : null;
    }).filter(Boolean);
    t = (f === s.frame ? 'Traced points on this frame: ' : 'Traced points of frame ' + f + ', the last traced frame before this one: ') + (parts.join('; ') || 'none') + '.';
  }
  setText($('#frame-points'), t);
}

// grab: the marker whose traced point on the shown frame is under the
// client point, or null.
function grab(clientX, clientY) {
  const s = state;
  if (!correctable(s)) return null;
  let best = null;
  let bestD = GRAB_PX;
  for (const mk of s.movie.markers || []) {
    const p = keyAt(s.movie, mk.id, s.frame) || pointOf(s, mk.id, s.frame);
    if (!p || isLost(p)) continue;
    const q = frameToScreen(p.x, p.y);
    const d = Math.hypot(q.clientX - clientX, q.clientY - clientY);
    if (d <= bestD) { best = mk.id; bestD = d; }
  }
  return best;
}

const c = $('#player');
let drag = null; // { pointerId, x, y, moved }
let swallowClick = false;

c.addEventListener('pointerdown', (e) => {
  if (e.pointerType === 'mouse' && e.button !== 0) return;
  const id = grab(e.clientX, e.clientY);
  if (!id) return;
  e.preventDefault(); // the press is the correction's: the viewer does not pan
  const p = screenToFrame(e.clientX, e.clientY);
  beginCorrection(id);
  drag = { pointerId: e.pointerId, x: e.clientX, y: e.clientY, moved: false, dx: state.correcting.x - p.x, dy: state.correcting.y - p.y };
  swallowClick = true;
  try { c.setPointerCapture(e.pointerId); } catch { /* gone */ }
});

c.addEventListener('pointermove', (e) => {
  if (!drag || e.pointerId !== drag.pointerId) return;
  if (!drag.moved && Math.hypot(e.clientX - drag.x, e.clientY - drag.y) < 2) return;
  drag.moved = true;
  const p = screenToFrame(e.clientX, e.clientY);
  moveCorrection(p.x + drag.dx, p.y + drag.dy);
});

function release(e, cancelled) {
  if (!drag || e.pointerId !== drag.pointerId) return;
  const moved = drag.moved;
  drag = null;
  if (cancelled) { cancelCorrection(); return; }
  if (moved) saveCorrection();
  else c.focus(); // a press without a move: the keyboard moves it now
}
c.addEventListener('pointerup', (e) => release(e, false));
c.addEventListener('pointercancel', (e) => release(e, true));

// The click that ends a correction's press places no marker.
document.addEventListener('click', (e) => {
  if (!swallowClick || e.target !== c) return;
  swallowClick = false;
  e.stopPropagation();
  e.preventDefault();
}, true);

c.addEventListener('keydown', (e) => {
  const cur = state.correcting;
  if (!cur || e.ctrlKey || e.metaKey || e.altKey) return;
  if (cur.frame !== state.frame) { cancelCorrection(); return; }
  const d = (e.shiftKey ? NUDGE_BIG : NUDGE) / state.view.zoom;
  const move = { ArrowLeft: [-d, 0], ArrowRight: [d, 0], ArrowUp: [0, -d], ArrowDown: [0, d] }[e.key];
  if (move) { nudgeCorrection(move[0], move[1]); e.preventDefault(); return; }
  if (e.key === 'Enter') { e.preventDefault(); saveCorrection(); return; }
  if (e.key === 'Escape') { e.preventDefault(); cancelCorrection(); }
});

$('#retrace-from').addEventListener('click', () => retraceFrom(+$('#retrace-from').dataset.frame));
