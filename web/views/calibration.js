// Calibration: the form that sets the movie's scale and coordinate system
// (a line of known length, an origin, the x axis's angle, y up or down), in
// pixels of the frame; the line and the origin can also be picked on the
// frame (the player sends the clicks to actions/calibration.pick). Viewers
// see the calibration and cannot change it.
'use strict';

import { $, setText, fieldError } from '../dom.js';
import { state } from '../state.js';
import { editable } from '../facts.js';
import { saveCalibration, clearCalibration, setPicking, pick, editDraft } from '../actions/calibration.js';
import { screenToFrame } from './player.js';

const IDS = ['cal-x1', 'cal-y1', 'cal-x2', 'cal-y2', 'cal-length', 'cal-unit', 'cal-ox', 'cal-oy', 'cal-angle', 'cal-yup'];
const num = (v) => +(+v).toFixed(2);

function size(s) {
  const v = s.movie && s.movie.video;
  return v && v.width > 0 && v.height > 0 ? { w: v.width, h: v.height } : null;
}

// describe is the sentence saying what positions mean now.
export function describe(c) {
  if (!c) return 'Not calibrated: positions are in pixels from the frame\'s top-left corner, y down.';
  const per = c.unitsPerPixel ? ' (' + +c.unitsPerPixel.x.toPrecision(4) + ' ' + c.unit + ' per pixel)' : '';
  return 'Calibrated: the line on frame ' + c.frame + ' is ' + c.length + ' ' + c.unit + per + '; origin at ' +
    Math.round(c.origin.x * 100) + '% across, ' + Math.round(c.origin.y * 100) + '% down; x axis at ' + c.angle +
    '°, y ' + (c.yUp ? 'up' : 'down') + '.';
}

let shownKey = '';

export function render(s) {
  const box = $('#calibration-panel');
  if (!box) return;
  const c = s.movie && s.movie.calibration;
  setText($('#cal-status'), describe(c));
  $('#cal-status').dataset.calibrated = c ? 'yes' : 'no';
  const can = editable(s) && !!size(s);
  for (const id of [...IDS, 'cal-save', 'cal-draw-line', 'cal-pick-origin']) $('#' + id).disabled = !can;
  $('#cal-clear').disabled = !can || !c;
  setText($('#cal-picking'), s.calPicking === 'line'
    ? (s.calPoints && s.calPoints.length ? 'Click the line\'s other end on the frame.' : 'Click one end of the line on the frame.')
    : s.calPicking === 'origin' ? 'Click the origin on the frame.' : '');
  // The form shows the stored calibration when it changes, and a pick when
  // one is made; what the user types stays until then.
  const z = size(s);
  if (!z) return;
  const key = JSON.stringify(c || null) + '|' + JSON.stringify(s.calDraft || null);
  if (key === shownKey) return;
  shownKey = key;
  const d = { ...(c ? { x1: c.line.x1, y1: c.line.y1, x2: c.line.x2, y2: c.line.y2, ox: c.origin.x, oy: c.origin.y } : {}), ...(s.calDraft || {}) };
  const set = (id, v) => { if (v != null) $('#' + id).value = String(v); };
  set('cal-x1', d.x1 != null ? num(d.x1 * z.w) : null); set('cal-y1', d.y1 != null ? num(d.y1 * z.h) : null);
  set('cal-x2', d.x2 != null ? num(d.x2 * z.w) : null); set('cal-y2', d.y2 != null ? num(d.y2 * z.h) : null);
  set('cal-ox', d.ox != null ? num(d.ox * z.w) : null); set('cal-oy', d.oy != null ? num(d.oy * z.h) : null);
  if (c && !s.calDraft) {
    set('cal-length', c.length); $('#cal-unit').value = c.unit; set('cal-angle', c.angle); $('#cal-yup').checked = c.yUp;
  }
}

// body reads the form as PUT /movies/{id}/calibration takes it (pixels to
// fractions of the frame).
function body() {
  const z = size(state);
  const v = (id) => Number($('#' + id).value);
  return {
    frame: state.frame,
    line: { x1: v('cal-x1') / z.w, y1: v('cal-y1') / z.h, x2: v('cal-x2') / z.w, y2: v('cal-y2') / z.h },
    length: v('cal-length'), unit: $('#cal-unit').value,
    origin: { x: v('cal-ox') / z.w, y: v('cal-oy') / z.h },
    angle: v('cal-angle') || 0, yUp: $('#cal-yup').checked,
  };
}

const panel = document.getElementById('calibration-panel');
if (panel) {
  $('#calibration-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const b = body();
    const nums = [b.line.x1, b.line.y1, b.line.x2, b.line.y2, b.length, b.origin.x, b.origin.y];
    if (IDS.slice(0, 5).concat(['cal-ox', 'cal-oy']).some((id) => $('#' + id).value.trim() === '') || !nums.every(Number.isFinite)) {
      fieldError('cal-length', 'Fill in both ends of the line, its real length and the origin (in pixels of the frame).');
      $('#cal-length').focus();
      return;
    }
    fieldError('cal-length', '');
    const ok = await saveCalibration(b);
    if (ok) editDraft(null);
  });
  $('#cal-clear').addEventListener('click', () => clearCalibration());
  $('#cal-draw-line').addEventListener('click', () => setPicking('line'));
  $('#cal-pick-origin').addEventListener('click', () => setPicking('origin'));
  // While picking, a click on the frame is the calibration's, not a new
  // marker: caught on the way down, before the player's own listener.
  $('#player').parentElement.addEventListener('click', (e) => {
    if (!state.calPicking || e.target.id !== 'player') return;
    e.stopPropagation();
    const p = screenToFrame(e.clientX, e.clientY);
    pick(Math.min(Math.max(p.x, 0), 1), Math.min(Math.max(p.y, 0), 1));
  }, true);
}
