// Lock etiquette (issue 25): "Still editing?" for an idle editor, a
// viewer's "Ask to release" and "Tell me when it is free", and the
// editor's view of a viewer's request.
'use strict';

import { $, show, timeEl, replaceIfChanged, plural } from '../dom.js';
import { LOCK } from '../constants.js';
import { stillEditing, releaseNow, askRelease, notifyWhenFree } from '../actions/etiquette.js';
import { state } from '../state.js';

function minutes(sec) {
  return sec >= 120 ? plural(Math.round(sec / 60), 'minute') : plural(sec, 'second');
}

export function render(s) {
  const m = s.movie;
  const panel = $('#etiquette');
  if (!m) { show(panel, false); return; }
  const l = m.lock;
  // The editor: an unanswered "Still editing?" and a viewer's request.
  const asking = !!s.leaseId && !!s.idleAsk;
  show($('#idle-ask'), asking);
  if (asking) {
    replaceIfChanged($('#idle-ask-text'), ['Nobody has edited this movie for ' + minutes(s.idleSeconds || 600) +
      '. Unless you answer, it is released for others at ', timeEl(s.idleAsk, 'idle-release-at'), '.']);
  }
  const ask = s.leaseId && l && l.yours && l.kind === LOCK.ANALYSIS ? l.releaseAsk : null;
  show($('#release-asked'), !!ask);
  if (ask) {
    replaceIfChanged($('#release-asked-text'), [ask.userName + ' asked you at ', timeEl(ask.at, 'release-asked-at'),
      ' to release this movie so they can edit it.']);
  }
  // A viewer of someone else's editing.
  const viewer = !s.leaseId && !!l && !l.yours;
  const canAsk = viewer && l.kind === LOCK.ANALYSIS;
  show($('#ask-release'), canAsk);
  if (canAsk) $('#ask-release').textContent = 'Ask ' + l.userName + ' to release it';
  const asked = canAsk && l.releaseAsk;
  show($('#ask-sent'), !!asked);
  if (asked) replaceIfChanged($('#ask-sent'), [asked.userName + ' asked ' + l.userName + ' to release it at ', timeEl(asked.at), '.']);
  show($('#notify-free'), !s.leaseId && !!l);
  $('#notify-free').setAttribute('aria-pressed', s.notifyFree ? 'true' : 'false');
  $('#notify-free').textContent = s.notifyFree ? 'You will be told when it is free (choose to stop)' : 'Tell me when it is free';
  show(panel, asking || !!ask || !!l && !s.leaseId);
}

$('#still-editing').addEventListener('click', () => stillEditing());
$('#release-now').addEventListener('click', () => releaseNow());
$('#ask-release').addEventListener('click', () => askRelease());
$('#notify-free').addEventListener('click', () => notifyWhenFree(!state.notifyFree));
