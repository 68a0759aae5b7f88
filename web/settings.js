// The one settings form: trim, capture interval and start frame. Start
// trace saves what the form shows first, so a trace can never start with
// settings other than those on screen.
'use strict';

import { $, state, say, fieldError, clearFieldErrors, focusEl, setText } from './state.js';
import { api, moviePath } from './api.js';
import { write, showRefusal, invalidText, loadMovie, schedulePoll, editable } from './analyze.js';
import { renderMovie } from './render.js';

const FIELDS = ['trim-start', 'trim-end', 'capture-interval', 'from-frame'];

// fillSettings shows the stored settings; force (on opening a movie) also
// replaces what the user typed, so nothing carries over between movies.
export function fillSettings(force) {
  const m = state.movie;
  if (!m) return;
  if (force) { state.dirty.clear(); clearFieldErrors(); }
  const set = (id, v) => {
    const i = document.getElementById(id);
    if (force || (!state.dirty.has(id) && document.activeElement !== i)) i.value = v;
  };
  set('trim-start', m.trim.start);
  set('trim-end', m.trim.end - 1);
  set('capture-interval', m.captureInterval);
  const from = $('#from-frame');
  if (force || (!state.dirty.has('from-frame') && document.activeElement !== from &&
      (from.value === '' || +from.value < m.trim.start || +from.value >= m.trim.end))) from.value = m.trim.start;
  for (const id of ['trim-start', 'trim-end', 'from-frame']) {
    document.getElementById(id).max = m.frameCount - 1;
  }
  const unsaved = ['trim-start', 'trim-end', 'capture-interval'].some((id) => state.dirty.has(id));
  setText($('#settings-state'), unsaved && editable()
    ? 'Not saved yet. Start trace saves these settings first.' : '');
}

for (const id of FIELDS) {
  document.getElementById(id).addEventListener('input', () => {
    state.dirty.add(id);
    fieldError(id, '');
    fillSettings(false);
  });
}

$('#set-in').addEventListener('click', () => {
  $('#trim-start').value = state.frame;
  state.dirty.add('trim-start');
  if (+$('#from-frame').value < state.frame) { $('#from-frame').value = state.frame; state.dirty.add('from-frame'); }
  fillSettings(false);
  say('Trim in set to frame ' + state.frame + ' (not saved yet).', 'info');
});
$('#set-out').addEventListener('click', () => {
  $('#trim-end').value = state.frame;
  state.dirty.add('trim-end');
  fillSettings(false);
  say('Trim out set to frame ' + state.frame + ' (not saved yet).', 'info');
});

const whole = (s) => /^\d+$/.test(String(s).trim());

// readForm checks the form and marks every wrong field; null when wrong.
function readForm() {
  const m = state.movie;
  clearFieldErrors();
  const v = Object.fromEntries(FIELDS.map((id) => [id, document.getElementById(id).value]));
  const bad = [];
  const last = m.frameCount - 1;
  if (!whole(v['trim-start']) || +v['trim-start'] > last) bad.push('trim-start');
  if (!whole(v['trim-end']) || +v['trim-end'] > last) bad.push('trim-end');
  if (!bad.length && +v['trim-start'] > +v['trim-end']) bad.push('trim-end');
  if (!whole(v['capture-interval']) || +v['capture-interval'] < 1 || +v['capture-interval'] > 10000) bad.push('capture-interval');
  const from = +v['from-frame'];
  if (!whole(v['from-frame']) || (!bad.length && (from < +v['trim-start'] || from > +v['trim-end']))) bad.push('from-frame');
  if (bad.length) {
    for (const id of bad) fieldError(id, id === 'from-frame' && !bad.includes('trim-start') && !bad.includes('trim-end')
      ? 'Start at a frame within the trim (' + v['trim-start'] + ' to ' + v['trim-end'] + ').' : invalidText(id));
    document.getElementById(bad[0]).focus();
    say('Check the highlighted field.', 'error');
    return null;
  }
  return { start: +v['trim-start'], end: +v['trim-end'] + 1, interval: +v['capture-interval'], from };
}

// saveForm writes what differs from the stored settings.
async function saveForm(f) {
  const m = state.movie;
  if (f.start !== m.trim.start || f.end !== m.trim.end) {
    const ok = await write('Trim', () => api('PUT', moviePath(state.movieId) + '/trim',
      { leaseId: state.leaseId, body: { start: f.start, end: f.end } }), ['trim-start', 'trim-end'], 'trim-end');
    if (!ok) return false;
  }
  if (f.interval !== state.movie.captureInterval) {
    const ok = await write('Capture interval', () => api('PUT', moviePath(state.movieId) + '/capture-interval',
      { leaseId: state.leaseId, body: { captureInterval: f.interval } }), ['capture-interval'], 'capture-interval');
    if (!ok) return false;
  }
  state.dirty.delete('trim-start');
  state.dirty.delete('trim-end');
  state.dirty.delete('capture-interval');
  return true;
}

$('#save-settings').addEventListener('click', async () => {
  if (!editable()) return;
  const f = readForm();
  if (!f) return;
  if (await saveForm(f)) { fillSettings(false); say('Settings saved.', 'ok'); }
});

$('#settings-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  if (!editable()) return;
  const f = readForm();
  if (!f || !(await saveForm(f))) return;
  const gen = state.generation;
  try {
    await api('POST', moviePath(state.movieId) + '/traces', { leaseId: state.leaseId, body: { fromFrame: f.from } });
  } catch (err) {
    if (gen === state.generation) showRefusal(err, (err.field || '').startsWith('markers') ? 'markers' : 'from-frame');
    return;
  }
  if (gen !== state.generation) return;
  // The analysis lease became the tracing lease: nothing to heartbeat or
  // release any more.
  clearInterval(state.heartbeatTimer);
  state.heartbeatTimer = null;
  state.leaseId = null;
  state.startedTrace = true;
  state.dirty.clear();
  say('You started a trace. It is safe to leave this page and come back later.', 'ok');
  try { await loadMovie(gen); } catch { /* the poll retries */ }
  renderMovie();
  // Start trace disabled itself: focus goes to the progress it started.
  focusEl('#progress-title');
  schedulePoll(gen);
});
