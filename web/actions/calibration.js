// Calibration: save or remove the movie's calibration (under the lease,
// like every edit) and pick its line and origin on the frame.
'use strict';

import { state, commit } from '../state.js';
import { api, moviePath } from '../api.js';
import { write } from './edit.js';

// saveCalibration writes a calibration (body as PUT takes it).
export function saveCalibration(body) {
  return write('Calibration', () => api('PUT', moviePath(state.movieId) + '/calibration',
    { leaseId: state.leaseId, body }), [], 'cal-length');
}

// clearCalibration removes it: results in pixels again.
export function clearCalibration() {
  return write('Removal of the calibration', () => api('DELETE', moviePath(state.movieId) + '/calibration',
    { leaseId: state.leaseId }), [], 'cal-clear');
}

// setPicking chooses what the next clicks on the frame set: 'line' (two
// clicks: the line's ends), 'origin' (one click), or null.
export function setPicking(what) { commit({ calPicking: what, calPoints: [] }); }

// pick records a click on the frame (normalised coordinates) while picking.
export function pick(x, y) {
  const s = state;
  if (s.calPicking === 'origin') { commit({ calPicking: null, calDraft: { ...s.calDraft, ox: x, oy: y } }); return; }
  if (s.calPicking === 'line') {
    const pts = [...s.calPoints, [x, y]];
    if (pts.length < 2) { commit({ calPoints: pts }); return; }
    commit({ calPicking: null, calPoints: [], calDraft: { ...s.calDraft, x1: pts[0][0], y1: pts[0][1], x2: pts[1][0], y2: pts[1][1] } });
  }
}

// editDraft keeps what the form holds before it is saved.
export function editDraft(patch) { commit({ calDraft: patch === null ? null : { ...state.calDraft, ...patch } }); }
