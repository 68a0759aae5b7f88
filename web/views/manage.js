// The rename and delete dialogs of the list (issue 25): a modal <dialog>
// opened and closed from state.manage. The delete dialog names what is
// lost; focus returns to the button that opened it.
'use strict';

import { $, el, setText, plural } from '../dom.js';
import { rename, remove, closeManage } from '../actions/manage.js';
import { durationText } from './moviecells.js';
import { STATUS } from '../constants.js';

let wired = false;
let openedFor = '';

function wire() {
  wired = true;
  const d = $('#manage-dialog');
  d.addEventListener('cancel', (e) => { e.preventDefault(); closeManage(); });
  $('#manage-cancel').addEventListener('click', () => closeManage());
  $('#manage-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const id = d.dataset.movieId;
    if (d.dataset.kind === 'rename') rename(id, $('#manage-title').value);
    else remove(id);
  });
}

// lossText says what deleting m removes.
export function lossText(m) {
  const lost = [];
  lost.push(m.video ? 'its video (' + durationText(m.video.durationSeconds) + ', ' + m.video.width + ' × ' + m.video.height + ')' : 'its upload');
  const p = m.progress || {};
  const traced = [STATUS.TRACED, STATUS.TRACING_FAILED, STATUS.TRACING_CANCELLED].includes(m.status) && p.framesWritten > 0;
  if (traced) lost.push('its ' + plural(p.framesWritten, 'traced frame') + ' and their results');
  lost.push('its markers, trim and calibration', 'its history');
  return 'This removes ' + lost.slice(0, -1).join(', ') + ' and ' + lost[lost.length - 1] + ', for everyone. It cannot be undone.';
}

export function render(s) {
  const d = $('#manage-dialog');
  if (!d) return;
  if (!wired) wire();
  const g = s.manage;
  const m = g && (s.movies || []).find((x) => x.id === g.movieId);
  if (!g || !m) {
    if (d.open) {
      d.close();
      const back = openedFor && document.querySelector('[data-testid="' + openedFor + '"]');
      if (back) back.focus(); else { const h = $('#list-title'); if (h) h.focus(); }
    }
    openedFor = '';
    return;
  }
  const kind = g.kind;
  d.dataset.kind = kind;
  d.dataset.movieId = m.id;
  setText($('#manage-heading'), kind === 'rename' ? 'Rename “' + m.title + '”' : 'Delete “' + m.title + '”?');
  $('#manage-rename').hidden = kind !== 'rename';
  setText($('#manage-loss'), kind === 'delete' ? lossText(m) : '');
  $('#manage-loss').hidden = kind !== 'delete';
  const ok = $('#manage-ok');
  setText(ok, kind === 'rename' ? 'Save' : 'Delete for everyone');
  ok.className = kind === 'rename' ? 'primary' : 'danger';
  ok.disabled = !!g.busy;
  const err = $('#manage-error');
  setText(err, g.error || '');
  err.hidden = !g.error;
  const input = $('#manage-title');
  if (g.error) input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid');
  const key = kind + '-' + m.id;
  if (!d.open || openedFor !== (kind === 'rename' ? 'rename-' : 'delete-') + m.id) {
    openedFor = (kind === 'rename' ? 'rename-' : 'delete-') + m.id;
    if (kind === 'rename') input.value = m.title;
    d.dataset.key = key;
    if (!d.open) d.showModal();
    (kind === 'rename' ? input : $('#manage-cancel')).focus();
    if (kind === 'rename') input.select();
  }
}
