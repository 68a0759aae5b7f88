// The history panel: who started, finished, failed or cancelled each trace,
// when, with which settings and which frames it traced (newest first).
'use strict';

import { $, state, el, show, timeEl, plural } from './state.js';
import { api, moviePath } from './api.js';

const PAGE = 10;
let next = null;      // cursor of the next (older) page
let firstKey = '';    // what the first page showed, to redraw only on change
let older = [];       // events of the pages after the first, once loaded
let refreshPolls = 0; // polls left during which the first page is reloaded

export function resetHistory() {
  next = null;
  firstKey = '';
  older = [];
  refreshPolls = 0;
  $('#history').replaceChildren();
  show($('#history-empty'), false);
  show($('#history-more'), false);
}

// historyChanged: the movie changed; its audit events follow shortly (the
// stream processor writes them), so reload for the next few polls.
export function historyChanged() { refreshPolls = 5; }

export function historyDue() {
  if (refreshPolls <= 0) return false;
  refreshPolls--;
  return true;
}

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
    case 'started': text = [who(e) + ' started a trace at frame ' + e.fromFrame + ' at ', timeEl(e.at), '.' + settingsText(e)]; break;
    case 'completed': text = [(e.yours ? 'Your' : e.userName + '\u2019s') + ' trace completed at ', timeEl(e.at), ': ' + frames + ' traced.']; break;
    case 'failed': text = [(e.yours ? 'Your' : e.userName + '\u2019s') + ' trace failed at ', timeEl(e.at), ' after saving ' + frames + '.' +
      (e.summary ? ' Reason: ' + e.summary : '')]; break;
    case 'cancelled': text = [who(e) + ' cancelled the trace at ', timeEl(e.at), '; the frames it had traced are kept.']; break;
    case 'stopped': text = [(e.yours ? 'Your' : e.userName + '\u2019s') + ' trace stopped responding; its lock lapsed at ', timeEl(e.at), '. ' + frames + ' saved.']; break;
    default: return null;
  }
  return el('li', { dataset: { testid: 'history-item', type: e.type } }, ...text);
}

function draw(first) {
  const items = [...first, ...older].map(item).filter(Boolean);
  $('#history').replaceChildren(...items);
  show($('#history-empty'), items.length === 0);
  show($('#history-more'), !!next);
}

// loadHistory reloads the first page (and keeps older pages loaded).
export async function loadHistory(gen) {
  if (!state.movieId) return;
  let page;
  try {
    page = await api('GET', moviePath(state.movieId) + '/history?limit=' + PAGE);
  } catch {
    return; // the history is an extra: the poll tries again
  }
  if (gen !== state.generation) return;
  const key = JSON.stringify(page.events);
  if (key === firstKey) return;
  firstKey = key;
  if (!older.length) next = page.next;
  draw(page.events);
}

$('#history-more').addEventListener('click', async () => {
  if (!next || !state.movieId) return;
  const gen = state.generation;
  let page;
  try {
    page = await api('GET', moviePath(state.movieId) + '/history?limit=' + PAGE + '&cursor=' + encodeURIComponent(next));
  } catch {
    return;
  }
  if (gen !== state.generation) return;
  older.push(...page.events);
  next = page.next;
  draw(JSON.parse(firstKey || '[]'));
  const items = $('#history').children;
  const firstNew = items[items.length - page.events.length];
  if (firstNew) { firstNew.tabIndex = -1; firstNew.focus(); }
});
