// Results: the traced frames, the results table, and downloads labelled
// with what they hold.
'use strict';

import { $, el, setText, plural, replaceIfChanged } from '../dom.js';
import { state } from '../state.js';
import { downloadHolds, timecode, isLost, traced, replacing, staleText, qualityOf, doubtText } from '../facts.js';
import { download } from '../actions/download.js';

const TABLE_ROWS = 2000;

export function render(s) {
  const r = $('#results');
  const fs = s.frames;
  const t = traced(s);
  // During a retrace the loaded frames are the earlier trace's, being
  // replaced from the new plan's start: not the current results.
  const state_ = replacing(s) ? 'replacing' : s.movie && s.movie.resultsStale ? 'stale' : 'current';
  let text = fs.length
    ? plural(fs.length, 'traced frame') + ' loaded (frames ' + fs[0].frame + ' to ' + fs[fs.length - 1].frame + ').'
    : 'No traced frames yet.';
  if (state_ === 'replacing') text = 'Being replaced: a trace is running; these ' + plural(fs.length, 'frame') + ' (frames ' + fs[0].frame + ' to ' + fs[fs.length - 1].frame + ') are the earlier results, replaced as it goes.';
  else if (state_ === 'stale') text += ' ' + staleText(s.movie);
  setText(r, text);
  r.dataset.count = fs.length;
  r.dataset.frames = t.count;
  r.dataset.state = state_;
  $('#results-panel').dataset.state = state_;
  if (!s.movie) { $('#results-table').replaceChildren(); $('#results-table').dataset.key = ''; }
  replaceIfChanged($('#results-quality'), s.movie && s.frames.length ? qualityOf(s.movie).map((q) => el('li', {}, q)) : []);
  if ($('#results-details').open) renderTable(s);
  const holds = downloadHolds(s);
  setText($('#downloads-note'), holds.note);
  $('#downloads-note').dataset.holds = holds.kind;
  $('#downloads-note').dataset.frames = holds.frames == null ? '' : holds.frames;
  for (const id of ['download-json', 'download-csv']) $('#' + id).disabled = holds.kind === 'none';
  setText($('#download-json'), holds.label + ' (JSON)');
  setText($('#download-csv'), holds.label + ' (CSV)');
}

// The table: one row per traced frame, x and y in percent per marker; a
// lost point is an empty cell saying "lost".
function renderTable(s) {
  const t = $('#results-table');
  const ms = (s.movie && s.movie.markers) || [];
  const key = s.framesKey + '|' + JSON.stringify(ms.map((m) => [m.id, m.label])) + '|' + qualityOf(s.movie).join('|');
  if (t.dataset.key === key) return;
  t.dataset.key = key;
  const rate = s.movie ? s.movie.frameRate : 1;
  const head = el('tr', {}, el('th', { scope: 'col' }, 'Frame'), el('th', { scope: 'col' }, 'Time'),
    ...ms.flatMap((m) => [el('th', { scope: 'col' }, (m.label || m.id) + ' x %'), el('th', { scope: 'col' }, (m.label || m.id) + ' y %')]));
  const rows = s.frames.slice(0, TABLE_ROWS).map((f) => {
    const byID = new Map((f.points || []).map((p) => [p.markerId, p]));
    return el('tr', {}, el('th', { scope: 'row' }, String(f.frame)), el('td', {}, timecode(f.frame, rate)),
      ...ms.flatMap((m) => {
        const p = byID.get(m.id);
        if (isLost(p)) return [el('td', { colSpan: 2, className: 'lost' }, 'lost')];
        // A doubted point says so in its cells (an uncertain position).
        if (p.doubt) return [el('td', { className: 'doubt', title: doubtText(p) }, (p.x * 100).toFixed(1) + ' ?'), el('td', { className: 'doubt' }, (p.y * 100).toFixed(1) + ' (uncertain)')];
        return [el('td', {}, (p.x * 100).toFixed(1)), el('td', {}, (p.y * 100).toFixed(1))];
      }));
  });
  const quality = qualityOf(s.movie);
  t.replaceChildren(el('caption', {}, 'Traced points per frame' + (quality.length ? '. ' + quality.join('. ') + '.' : '') + ' A ? marks an uncertain position.'),
    el('thead', {}, head), el('tbody', {}, ...rows));
}

$('#results-details').addEventListener('toggle', () => { if ($('#results-details').open) renderTable(state); });
$('#download-json').addEventListener('click', () => download('json'));
$('#download-csv').addEventListener('click', () => download('csv'));
