// The movie list.
'use strict';

import { $, el, timeEl } from '../dom.js';
import { LOCK, STATUS } from '../constants.js';
import { statusText, progressText, tracedOf } from '../facts.js';
import { preparingText } from '../preparing.js';
import { thumb, details, manageButtons } from './moviecells.js';

function lockCell(m) {
  const l = m.lock;
  if (!l) return el('span', { className: 'muted', dataset: { testid: 'lock-' + m.id, kind: '' } }, 'free');
  const who = l.yours ? 'You' : l.userName;
  const text = l.kind === LOCK.TRACING
    ? (l.yours ? 'Your trace running since ' : l.userName + "'s trace running since ")
    : (l.yours ? 'You are editing (another tab) since ' : who + ' editing since ');
  return el('span', { className: 'lock', dataset: { testid: 'lock-' + m.id, kind: l.kind } }, text, timeEl(l.startedAt));
}

function row(m) {
  return el('tr', { dataset: { movieId: m.id } },
    el('th', { scope: 'row' }, el('span', { className: 'movie-title' }, thumb(m), el('span', {}, m.title, el('br'), details(m)))),
    el('td', { dataset: { testid: 'status-' + m.id, label: 'Status' } }, el('span', { className: 'status s-' + m.status }, preparingText(m) || statusText(m.status))),
    el('td', { dataset: { testid: 'progress-' + m.id, label: 'Progress', frames: m.status === STATUS.TRACING ? '' : tracedOf(m) } }, progressText(m)),
    // The last completed trace's quality, a sentence per marker (the API's).
    el('td', { className: 'small', dataset: { testid: 'quality-' + m.id, label: 'Trace quality' } },
      ...(m.quality && m.quality.length ? m.quality.flatMap((q, i) => (i ? [el('br'), q] : [q])) : [el('span', { className: 'muted' }, '\u2014')])),
    el('td', { dataset: { label: 'Lock' } }, lockCell(m)),
    el('td', {}, el('a', { href: '#/movies/' + encodeURIComponent(m.id), className: 'button', dataset: { testid: 'analyze-' + m.id },
      'aria-label': 'Analyze ' + m.title }, 'Analyze'), ' ', ...manageButtons(m)));
}

export function render(s) {
  if (!s.movies) return;
  const rowsEl = $('#movie-rows');
  const key = JSON.stringify(s.movies);
  if (rowsEl.dataset.key === key) return; // nothing changed: keep the nodes (and focus)
  const focused = rowsEl.contains(document.activeElement) ? document.activeElement.dataset.testid : '';
  rowsEl.dataset.key = key;
  rowsEl.replaceChildren(...s.movies.map(row));
  if (focused) { const f = rowsEl.querySelector('[data-testid="' + focused + '"]'); if (f) f.focus(); }
}
