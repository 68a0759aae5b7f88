// Results: the traced frames, the results table, and downloads labelled
// with what they hold.
'use strict';

import { $, state, el, say, plural, setText } from './state.js';
import { api, moviePath, errorText } from './api.js';
import { draw, timecode, isLost } from './player.js';

const FRAME_PAGE = 1000;
const TABLE_ROWS = 2000;

export function resetResults() {
  state.frames = [];
  state.framesByIndex = new Map();
  state.framesKey = null;
  $('#results').textContent = 'No traced frames yet.';
  $('#results').dataset.count = '0';
  $('#results-table').replaceChildren();
  $('#results-table').dataset.key = '';
}

export async function loadFrames(gen, key) {
  const frames = [];
  let from = 0;
  for (let page = 0; page < 10000; page++) {
    const res = await api('GET', moviePath(state.movieId) + '/frames?from=' + from + '&limit=' + FRAME_PAGE);
    if (gen !== state.generation) return;
    frames.push(...(res.frames || []));
    if (res.next == null) break;
    from = res.next;
  }
  frames.sort((a, b) => a.frame - b.frame);
  state.frames = frames;
  state.framesByIndex = new Map(frames.map((f) => [f.frame, f]));
  state.framesKey = key;
  draw();
}

export function renderResults() {
  const r = $('#results');
  const fs = state.frames;
  setText(r, fs.length
    ? plural(fs.length, 'traced frame') + ' loaded (frames ' + fs[0].frame + ' to ' + fs[fs.length - 1].frame + ').'
    : 'No traced frames yet.');
  r.dataset.count = fs.length;
  if ($('#results-details').open) renderTable();
}

// The table: one row per traced frame, x and y in percent per marker; a
// lost point is an empty cell saying "lost".
function renderTable() {
  const t = $('#results-table');
  const ms = (state.movie && state.movie.markers) || [];
  const key = state.framesKey + '|' + JSON.stringify(ms.map((m) => [m.id, m.label]));
  if (t.dataset.key === key) return;
  t.dataset.key = key;
  const rate = state.movie ? state.movie.frameRate : 1;
  const head = el('tr', {}, el('th', { scope: 'col' }, 'Frame'), el('th', { scope: 'col' }, 'Time'),
    ...ms.flatMap((m) => [el('th', { scope: 'col' }, (m.label || m.id) + ' x %'), el('th', { scope: 'col' }, (m.label || m.id) + ' y %')]));
  const rows = state.frames.slice(0, TABLE_ROWS).map((f) => {
    const byID = new Map((f.points || []).map((p) => [p.markerId, p]));
    return el('tr', {}, el('th', { scope: 'row' }, String(f.frame)), el('td', {}, timecode(f.frame, rate)),
      ...ms.flatMap((m) => {
        const p = byID.get(m.id);
        if (isLost(p)) return [el('td', { colSpan: 2, className: 'lost' }, 'lost')];
        return [el('td', {}, (p.x * 100).toFixed(1)), el('td', {}, (p.y * 100).toFixed(1))];
      }));
  });
  t.replaceChildren(el('caption', { className: 'sr-only' }, 'Traced points per frame'), el('thead', {}, head), el('tbody', {}, ...rows));
}

$('#results-details').addEventListener('toggle', () => { if ($('#results-details').open) renderTable(); });

// downloadHolds says what a download would hold now.
export function downloadHolds() {
  const m = state.movie;
  const n = state.frames.length;
  if (m && m.status === 'tracing') {
    const p = m.progress || {};
    return { kind: 'partial', label: 'Download partial frames', suffix: '-partial',
      note: 'A trace is running: a download now holds only the frames traced so far (' + (p.framesWritten || 0) + ' of ' + (p.totalFrames || '?') + ').' };
  }
  if (!n) return { kind: 'none', label: 'Nothing to download yet', suffix: '', note: 'No frames are traced yet, so there is nothing to download.' };
  if (m && m.status === 'tracing_failed') {
    return { kind: 'failed', label: 'Download the failed trace\u2019s frames', suffix: '-failed',
      note: 'The last trace failed: a download holds the ' + plural(n, 'frame') + ' it saved, not a complete result.' };
  }
  if (m && m.status === 'tracing_cancelled') {
    return { kind: 'cancelled', label: 'Download the cancelled trace\u2019s frames', suffix: '-cancelled',
      note: 'The last trace was cancelled: a download holds the ' + plural(n, 'frame') + ' saved, not a complete result.' };
  }
  if (m && m.status === 'traced') {
    return { kind: 'complete', label: 'Download complete results', suffix: '',
      note: 'A download holds the complete results: ' + plural(n, 'traced frame') + '.' };
  }
  return { kind: 'partial', label: 'Download saved frames', suffix: '-partial',
    note: 'The last trace did not finish: a download holds the ' + plural(n, 'frame') + ' saved so far.' };
}

// download saves every stored frame as one file. The API pages frames and
// needs the identity headers, so the page fetches the pages and hands the
// browser a Blob.
async function download(format) {
  const id = state.movieId;
  if (!id) return;
  const holds = downloadHolds();
  if (holds.kind === 'none') return;
  const parts = [];
  const frames = [];
  let header = {};
  try {
    let path = moviePath(id) + '/frames?from=0&limit=' + FRAME_PAGE + (format === 'csv' ? '&format=csv' : '');
    for (let page = 0; path && page < 100000; page++) {
      if (format === 'csv') {
        const res = await api('GET', path, { accept: 'text/csv', raw: true });
        const text = await res.text();
        // Every page starts with the '# key: value' header lines and the
        // column row: keep them once, from the first page.
        parts.push(page === 0 ? text : text.replace(/^(#[^\n]*\n)*[^\n]*\n/, ''));
        const link = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('Link') || '');
        path = link ? link[1] : null;
      } else {
        const res = await api('GET', path);
        if (page === 0) header = { movie: res.movie, trace: res.trace };
        frames.push(...(res.frames || []));
        path = res.next == null ? null : moviePath(id) + '/frames?from=' + res.next + '&limit=' + FRAME_PAGE;
      }
    }
  } catch (err) {
    say(errorText(err), 'error');
    return;
  }
  const name = id + '-frames' + holds.suffix + '.' + format;
  const blob = format === 'csv'
    ? new Blob(parts, { type: 'text/csv' })
    : new Blob([JSON.stringify({ movieId: id, holds: holds.kind, ...header, frames }, null, 1)], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  say('Downloaded ' + name + '.', 'ok');
}

$('#download-json').addEventListener('click', () => download('json'));
$('#download-csv').addEventListener('click', () => download('csv'));
