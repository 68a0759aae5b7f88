// The history panel: who started, finished, failed or cancelled each trace,
// when, with which settings and which frames it traced (newest first).
'use strict';

import { $, el, show, timeEl, plural } from '../dom.js';
import { EVENT } from '../constants.js';
import { loadOlder } from '../actions/history.js';

function who(e) { return e.yours ? 'You' : e.userName; }

function rangeText(e) {
  if (e.firstFrame == null || e.lastFrame == null) return '';
  return ' (frames ' + e.firstFrame + ' to ' + e.lastFrame + ')';
}

function settingsText(e) {
  const s = e.settings;
  if (!s) return '';
  return ' Settings: frames ' + s.trim.start + ' to ' + (s.trim.end - 1) +
    (s.captureInterval > 1 ? ', every ' + s.captureInterval + (s.captureInterval === 2 ? 'nd' : s.captureInterval === 3 ? 'rd' : 'th') + ' frame' : ', every frame') + '.';
}

function item(e) {
  const frames = e.frames != null ? plural(e.frames, 'frame') + rangeText(e) : '';
  let text;
  switch (e.type) {
    case EVENT.STARTED: text = [who(e) + ' started a trace at frame ' + e.fromFrame + ' at ', timeEl(e.at), '.' + settingsText(e)]; break;
    case EVENT.COMPLETED: text = [(e.yours ? 'Your' : e.userName + '\u2019s') + ' trace completed at ', timeEl(e.at), ': ' + frames + ' traced.']; break;
    case EVENT.FAILED: text = [(e.yours ? 'Your' : e.userName + '\u2019s') + ' trace failed at ', timeEl(e.at), ' after saving ' + frames + '.' +
      (e.summary ? ' Reason: ' + e.summary : '')]; break;
    case EVENT.CANCELLED: text = [who(e) + ' cancelled the trace at ', timeEl(e.at), '; the frames it had traced are kept.']; break;
    case EVENT.STOPPED: text = [(e.yours ? 'Your' : e.userName + '\u2019s') + ' trace stopped responding; its lock lapsed at ', timeEl(e.at), '. ' + frames + ' saved.']; break;
    case EVENT.CALIBRATED: text = [who(e) + ' calibrated the movie at ', timeEl(e.at), ': ' + e.calibration + '.']; break;
    case EVENT.UNCALIBRATED: text = [who(e) + ' removed the calibration at ', timeEl(e.at), '; results are in pixels.']; break;
    default: return null;
  }
  return el('li', { dataset: { testid: 'history-item', type: e.type } }, ...text);
}

let shown = null;

export function render(s) {
  const h = s.history;
  if (h === shown) return;
  shown = h;
  const items = [...h.events, ...h.older].map(item).filter(Boolean);
  $('#history').replaceChildren(...items);
  show($('#history-empty'), h.loaded && items.length === 0);
  show($('#history-more'), !!h.next);
}

$('#history-more').addEventListener('click', async () => {
  const n = await loadOlder();
  if (!n) return;
  const items = $('#history').children;
  const firstNew = items[items.length - n];
  if (firstNew) { firstNew.tabIndex = -1; firstNew.focus(); }
});
