// The "Add a movie" panel of the list: drop files or choose them, each
// upload's progress bar, cancel, resume, and then its ingest's progress
// (from the list's row of the new movie).
'use strict';

import { $, el, setText } from '../dom.js';
import { statusText } from '../facts.js';
import { preparingText } from '../preparing.js';
import { addFiles, cancelUpload, dismissUpload, restoreUploads } from '../actions/upload.js';
import { STATUS } from '../constants.js';

const MB = 1000 * 1000; // as file managers count them
export const sizeText = (n) => (n >= 10 * MB ? Math.round(n / MB) : (n / MB).toFixed(1)) + ' MB';

let wired = false;
let restoredFor = '';

function wire() {
  wired = true;
  const input = $('#add-file');
  const zone = $('#drop-zone');
  $('#add-choose').addEventListener('click', () => input.click());
  input.addEventListener('change', () => { addFiles([...input.files]); input.value = ''; });
  zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    if (e.dataTransfer && e.dataTransfer.files.length) addFiles([...e.dataTransfer.files]);
  });
  $('#upload-rows').addEventListener('click', (e) => {
    const b = e.target.closest('button[data-upload]');
    if (!b) return;
    if (b.dataset.act === 'cancel') cancelUpload(b.dataset.upload);
    else dismissUpload(b.dataset.upload);
  });
}

// what the row says under its bar
function phaseText(u, m) {
  const parts = u.parts ? ' (' + (u.partsDone || 0) + ' of ' + u.parts + ' parts)' : '';
  switch (u.phase) {
    case 'starting': return 'Starting the upload…';
    case 'uploading': return 'Uploading: ' + sizeText(u.sent) + ' of ' + sizeText(u.size) + parts;
    case 'completing': return 'Uploaded ' + sizeText(u.size) + parts + '; assembling the file…';
    case 'cancelling': return 'Cancelling…';
    case 'interrupted': return (u.message || 'The upload was interrupted.') + ' ' + sizeText(u.sent) + ' of ' + sizeText(u.size) + ' sent' + parts + '.';
    case 'failed': return u.message;
    case 'sent': {
      if (!m) return 'Uploaded; waiting for the movie to appear.';
      const p = preparingText(m);
      if (p) return 'Uploaded. ' + p + '.';
      if (m.status === STATUS.AWAITING_UPLOAD) return 'Uploaded; its frames will be prepared shortly.';
      return 'Uploaded. ' + statusText(m.status) + '.';
    }
  }
  return '';
}

function row(u, m) {
  const done = u.phase === 'sent' && m && m.status !== STATUS.AWAITING_UPLOAD;
  const active = ['starting', 'uploading', 'completing', 'interrupted'].includes(u.phase);
  const bar = el('progress', { max: u.size, value: u.phase === 'sent' ? u.size : u.sent, 'aria-label': 'Upload of ' + u.fileName,
    dataset: { testid: 'upload-progress' } });
  const ingest = u.phase === 'sent' && m && m.progress && m.progress.totalFrames > 0 && m.status === STATUS.AWAITING_UPLOAD
    ? el('progress', { max: m.progress.totalFrames, value: m.progress.framesWritten, 'aria-label': 'Frames of ' + u.title + ' prepared',
      dataset: { testid: 'ingest-progress' } }) : null;
  const buttons = [];
  if (active) buttons.push(el('button', { type: 'button', className: 'small-button', dataset: { upload: u.key, act: 'cancel', testid: 'upload-cancel' },
    'aria-label': (u.phase === 'interrupted' ? 'Discard the upload of ' : 'Cancel the upload of ') + u.fileName }, u.phase === 'interrupted' ? 'Discard' : 'Cancel'));
  if (u.phase === 'failed' || done) buttons.push(el('button', { type: 'button', className: 'small-button', dataset: { upload: u.key, act: 'dismiss' },
    'aria-label': 'Dismiss ' + u.fileName }, 'Dismiss'));
  if (done) buttons.unshift(el('a', { href: '#/movies/' + encodeURIComponent(u.movieId), className: 'button small-button' }, 'Analyze'));
  return el('li', { className: 'upload upload-' + u.phase, dataset: { testid: 'upload', phase: u.phase, movieId: u.movieId || '' } },
    el('p', { className: 'upload-name' }, el('strong', {}, u.title), ' ', el('span', { className: 'muted' }, u.fileName + ', ' + sizeText(u.size))),
    bar, ingest,
    el('p', { className: 'upload-state', dataset: { testid: 'upload-state' } }, phaseText(u, m)),
    buttons.length ? el('p', { className: 'upload-buttons' }, ...buttons) : null);
}

export function render(s) {
  if (!$('#add-movie')) return;
  if (!wired) wire();
  const who = s.user ? s.user.id : '';
  if (who && restoredFor !== who) { restoredFor = who; queueMicrotask(restoreUploads); }
  const ups = s.uploads || [];
  const movies = new Map((s.movies || []).map((m) => [m.id, m]));
  const list = $('#upload-rows');
  const key = JSON.stringify(ups.map((u) => [u, movies.get(u.movieId) || null]));
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  const focused = list.contains(document.activeElement) ? document.activeElement.getAttribute('aria-label') : '';
  list.replaceChildren(...ups.map((u) => row(u, movies.get(u.movieId))));
  if (focused) { const f = [...list.querySelectorAll('button')].find((b) => b.getAttribute('aria-label') === focused); if (f) f.focus(); }
  const n = ups.filter((u) => ['starting', 'uploading', 'completing'].includes(u.phase)).length;
  setText($('#upload-summary'), n ? (n === 1 ? 'One upload running.' : n + ' uploads running.') : '');
}
