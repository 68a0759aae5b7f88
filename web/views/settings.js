// The one settings form: trim, capture interval and start frame. Start
// trace saves what the form shows first, so a trace can never start with
// settings other than those on screen.
'use strict';

import { $, say, fieldError, clearFieldErrors, setText } from '../dom.js';
import { state } from '../state.js';
import { editable, invalidText, startFrom } from '../facts.js';
import { markDirty, saveSettings, startTrace } from '../actions/edit.js';

const FIELDS = ['trim-start', 'trim-end', 'capture-interval', 'from-frame'];
let filledFor = null; // the movie the form was last filled for
let filledFrom = null; // the Start at it was last filled with (startFrom)

// render shows the stored settings; on opening a movie it also replaces
// what the user typed, so nothing carries over between movies.
export function render(s) {
  const m = s.movie;
  if (!m) { filledFor = null; return; }
  const force = filledFor !== s.movieId;
  filledFor = s.movieId;
  if (force) clearFieldErrors();
  const set = (id, v) => {
    const i = document.getElementById(id);
    if (force || (!s.dirty.has(id) && document.activeElement !== i)) i.value = v;
  };
  set('trim-start', m.trim.start);
  set('trim-end', m.trim.end - 1);
  set('capture-interval', m.captureInterval);
  const from = $('#from-frame');
  const start = startFrom(m);
  if (force || (!s.dirty.has('from-frame') && document.activeElement !== from &&
      (from.value === '' || +from.value < m.trim.start || +from.value >= m.trim.end || start !== filledFrom))) from.value = start;
  filledFrom = start;
  for (const id of ['trim-start', 'trim-end', 'from-frame']) {
    document.getElementById(id).max = m.frameCount - 1;
  }
  const unsaved = ['trim-start', 'trim-end', 'capture-interval'].some((id) => s.dirty.has(id));
  setText($('#settings-state'), unsaved && editable(s)
    ? 'Not saved yet. Start trace saves these settings first.' : '');
}

for (const id of FIELDS) {
  document.getElementById(id).addEventListener('input', () => {
    fieldError(id, '');
    markDirty(id);
  });
}

$('#set-in').addEventListener('click', () => {
  const f = state.frame;
  $('#trim-start').value = f;
  if (+$('#from-frame').value < f) { $('#from-frame').value = f; markDirty('trim-start', 'from-frame'); } else markDirty('trim-start');
  say('Trim in set to frame ' + f + ' (not saved yet).', 'info');
});
$('#set-out').addEventListener('click', () => {
  const f = state.frame;
  $('#trim-end').value = f;
  markDirty('trim-end');
  say('Trim out set to frame ' + f + ' (not saved yet).', 'info');
});

const whole = (v) => /^\d+$/.test(String(v).trim());

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
      ? 'Start at a frame within the trim (' + v['trim-start'] + ' to ' + v['trim-end'] + ').' : invalidText(m, id));
    document.getElementById(bad[0]).focus();
    say('Check the highlighted field.', 'error');
    return null;
  }
  return { start: +v['trim-start'], end: +v['trim-end'] + 1, interval: +v['capture-interval'], from };
}

$('#save-settings').addEventListener('click', async () => {
  if (!editable(state)) return;
  const f = readForm();
  if (!f) return;
  if (await saveSettings(f)) say('Settings saved.', 'ok');
});

$('#settings-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  if (!editable(state)) return;
  const f = readForm();
  if (f) await startTrace(f);
});
