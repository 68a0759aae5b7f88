// Marker edits: add, move, relabel, remove, select. Writes are queued so
// quick successive edits never overwrite each other.
'use strict';

import { state, commit } from '../state.js';
import { fieldError } from '../dom.js';
import { api, moviePath } from '../api.js';
import { write } from './edit.js';

const SAVE_AFTER_MS = 500; // nudges are saved once the keys rest

let pending = null;
let chain = Promise.resolve();

// saveMarkers queues one marker write: change computes the new list from
// the markers as the previous write left them.
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

// addMarker places a marker on the shown frame: it belongs to that frame
// (the tracer starts it there).
export function addMarker(x, y) {
  const frame = state.frame;
  return saveMarkers((cur) => {
    const n = nextID(cur);
    commit({ selected: 'm' + n });
    return [...cur, { id: 'm' + n, label: 'Marker ' + n, x: +x.toFixed(4), y: +y.toFixed(4), frame }];
  });
}

export const updateMarker = (id, patch) => saveMarkers((cur) => cur.map((x) => x.id === id ? { ...x, ...patch } : x));

export function removeMarker(id) {
  if (state.selected === id) commit({ selected: null });
  return saveMarkers((cur) => cur.filter((x) => x.id !== id));
}

export function selectMarker(id) { commit({ selected: id }); }

// nudgeMarker moves a marker on screen at once and saves it once the keys
// rest.
export function nudgeMarker(id, dx, dy) {
  const m = state.movie;
  const sel = (m.markers || []).find((mk) => mk.id === id);
  if (!sel) return;
  const at = { x: +Math.min(Math.max(sel.x + dx, 0), 1).toFixed(4), y: +Math.min(Math.max(sel.y + dy, 0), 1).toFixed(4) };
  commit({ movie: { ...m, markers: m.markers.map((mk) => mk.id === id ? { ...mk, ...at } : mk) } });
  clearTimeout(pending);
  pending = setTimeout(() => updateMarker(id, at), SAVE_AFTER_MS);
}
