// The history panel: who started, finished, failed or cancelled each trace,
// when, with which settings and which frames it traced (newest first).
'use strict';

import { $, el, show, timeEl, plural } from '../dom.js';
import { EVENT } from '../constants.js';
import { jobRange, traced, storedText } from '../facts.js';
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

// startedText: the frames the trace was planned to trace (the server's
// plan), and the frame asked for when the plan starts before it.
function startedText(e) {
  if (e.firstFrame == null || e.lastFrame == null) return ' started a trace at frame ' + e.fromFrame + ' at ';
  const asked = e.fromFrame > e.firstFrame
    ? ' (asked from frame ' + e.fromFrame + '; the frames from ' + e.firstFrame + ' on were not from a completed trace, so they are traced again)' : '';
  return ' started a trace of frames ' + e.firstFrame + ' to ' + e.lastFrame + asked + ' at ';
}

// lastOf: this item ends the movie's last job (the same instant), so its
// numbers are the movie's facts now (a cancel's count is settled after
// the event was written), stated as every other panel states them.
function lastOf(e, s) {
  const j = s.movie && s.movie.lastJob;
  return !!j && e.at === j.finishedAt && [EVENT.COMPLETED, EVENT.FAILED, EVENT.CANCELLED].includes(e.type) ? j : null;
}

function item(e, s) {
  const job = lastOf(e, s);
  let tail = '';
  if (job) {
    const r = jobRange(s, job);
    e = { ...e, frames: job.frames, firstFrame: r ? r.first : e.firstFrame, lastFrame: r ? r.last : e.lastFrame };
    const t = traced(s);
    if (t.count !== job.frames || e.type !== EVENT.COMPLETED) tail = ' In all, ' + storedText(t, 'stored') + '.';
  }
  const frames = e.frames != null ? plural(e.frames, 'frame') + rangeText(e) : '';
  let text;
  switch (e.type) {
    case EVENT.STARTED: text = [who(e) + startedText(e), timeEl(e.at), '.' + settingsText(e)]; break;
    case EVENT.COMPLETED: text = [(e.yours ? 'Your' : e.userName + '\u2019s') + ' trace completed at ', timeEl(e.at), ': ' + frames + ' traced.']; break;
    case EVENT.FAILED: text = [(e.yours ? 'Your' : e.userName + '\u2019s') + ' trace failed at ', timeEl(e.at), ' after saving ' + frames + '.' +
      (e.summary ? ' Reason: ' + e.summary : '')]; break;
    case EVENT.CANCELLED: text = [who(e) + ' cancelled the trace at ', timeEl(e.at), e.frames != null && job ? ' after it traced ' + frames + '.' : '; the frames it had traced are kept.']; break;
    case EVENT.STOPPED: text = [(e.yours ? 'Your' : e.userName + '\u2019s') + ' trace stopped responding; its lock lapsed at ', timeEl(e.at), '. ' + frames + ' saved.']; break;
    case EVENT.CALIBRATED: text = [who(e) + ' calibrated the movie at ', timeEl(e.at), ': ' + e.calibration + '.']; break;
    case EVENT.UNCALIBRATED: text = [who(e) + ' removed the calibration at ', timeEl(e.at), '; results are in pixels.']; break;
    default: return null;
  }
  if (tail) text.push(tail);
  const data = { testid: 'history-item', type: e.type };
  if (job) data.frames = traced(s).count;
  return el('li', { dataset: data }, ...text);
}

let shown = null;

export function render(s) {
  const h = s.history;
  const j = s.movie && s.movie.lastJob;
  const key = [h, s.framesKey, j && j.frames];
  if (shown && key.every((k, i) => k === shown[i])) return;
  shown = key;
  const items = [...h.events, ...h.older].map((e) => item(e, s)).filter(Boolean);
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
