// Derived results (GET /movies/{id}/results): loaded again whenever what
// they depend on changed (the traced frames, the calibration, the
// markers), and downloaded as CSV (long or wide) or JSON.
'use strict';

import { state, commit } from '../state.js';
import { el, say } from '../dom.js';
import { api, moviePath, errorText } from '../api.js';

// resultsKeyOf is what the loaded results must match: the frames loaded,
// the calibration and the markers of the movie shown.
export function resultsKeyOf(s) {
  if (!s.movie || !s.framesKey || !s.frames.length) return null;
  return s.framesKey + '|' + JSON.stringify(s.movie.calibration || null) + '|' +
    JSON.stringify((s.movie.markers || []).map((m) => [m.id, m.label]));
}

let loading = null;

// syncResults is a reaction (subscribed in app.js beside the views): after
// any commit that changed what the results depend on, it loads them again.
// Recalibrating therefore changes every plot and summary without a retrace.
export function syncResults(s) {
  const key = resultsKeyOf(s);
  if (key === null) {
    if (s.results) queueMicrotask(() => commit({ results: null, resultsKey: null }));
    return;
  }
  if (key === s.resultsKey || key === loading) return;
  loading = key;
  const gen = s.generation;
  api('GET', moviePath(s.movieId) + '/results').then((res) => {
    if (gen !== state.generation || loading !== key) return;
    loading = null;
    commit({ results: res, resultsKey: key });
  }, () => { if (loading === key) loading = null; });
}

// downloadResults saves the results as one file: 'csv' (long), 'wide'
// (CSV, one row per frame) or 'json'.
export async function downloadResults(kind) {
  const id = state.movieId;
  if (!id) return;
  const q = kind === 'json' ? '' : '?format=csv' + (kind === 'wide' ? '&layout=wide' : '');
  let blob;
  try {
    if (kind === 'json') {
      blob = new Blob([JSON.stringify(await api('GET', moviePath(id) + '/results'), null, 1)], { type: 'application/json' });
    } else {
      const res = await api('GET', moviePath(id) + '/results' + q, { accept: 'text/csv', raw: true });
      blob = new Blob([await res.text()], { type: 'text/csv' });
    }
  } catch (err) {
    say(errorText(err), 'error');
    return;
  }
  const name = id + '-results' + (kind === 'wide' ? '-wide' : '') + (kind === 'json' ? '.json' : '.csv');
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  say('Downloaded ' + name + '.', 'ok');
}
