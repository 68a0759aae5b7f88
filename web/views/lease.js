// The lease banner: who edits, since when, until when; Start editing.
'use strict';

import { $, el, show, timeEl, replaceIfChanged } from '../dom.js';
import { state } from '../state.js';
import { LOCK } from '../constants.js';
import { startEditing } from '../actions/movie.js';

// banner returns the lease banner's parts: [mode, ...nodes].
function banner(s) {
  const lock = s.movie.lock;
  const who = (l) => el('strong', { dataset: { testid: 'holder-name' } }, l.userName);
  const since = (l) => timeEl(l.startedAt, 'holder-since');
  if (s.leaseId) {
    return ['edit', 'You are editing this movie. Others see it view-only until you leave this page.'];
  }
  const lost = s.lostLease ? 'You are no longer editing this movie: your editing lock lapsed or was taken over. ' : '';
  if (!lock) {
    return [s.lostLease ? 'lost' : 'free', lost + 'Nobody is editing this movie now. Choose Start editing to change it.'];
  }
  if (lock.yours && lock.kind === LOCK.TRACING) {
    return ['view', lost, 'You started this trace at ', since(lock), '. It is running; this page is view-only until it ends.'];
  }
  if (lock.yours) {
    return ['view', lost, 'You are editing this movie in another tab or window (since ', since(lock),
      '). This tab is view-only: edit in the other one, or close it.'];
  }
  if (lock.kind === LOCK.TRACING) {
    return ['view', lost, 'View only: ', who(lock), ' started a trace at ', since(lock), '. It is running.'];
  }
  return ['view', lost, 'View only: ', who(lock), ' is editing this movie (since ', since(lock), ').'];
}

function detail(s) {
  const lock = s.movie.lock;
  if (s.leaseId) {
    return s.offline
      ? ['The server cannot be reached. Your changes cannot be saved now; your editing lock lapses at ',
        timeEl(s.leaseExpiresAt, 'lease-expires'), ' unless the connection returns.']
      : ['Your editing lock renews itself while this page is open; it would lapse at ', timeEl(s.leaseExpiresAt, 'lease-expires'),
        ' if this page lost its connection.'];
  }
  if (!lock || !lock.lastActiveAt) return [];
  const holder = lock.yours ? (lock.kind === LOCK.TRACING ? 'Your trace' : 'Your other tab') : lock.kind === LOCK.TRACING ? 'The trace' : lock.userName;
  return [holder + ' was last active at ', timeEl(lock.lastActiveAt, 'holder-active'), '; the lock lapses at ',
    timeEl(lock.expiresAt, 'holder-expires'), ' unless renewed.'];
}

export function render(s) {
  if (!s.movie) return;
  const [mode, ...parts] = banner(s);
  const b = $('#lease-banner');
  b.dataset.mode = mode;
  replaceIfChanged(b, parts.filter((p) => p !== ''));
  replaceIfChanged($('#lease-detail'), detail(s));
  show($('#acquire'), !s.leaseId && !s.movie.lock);
}

$('#acquire').addEventListener('click', async () => {
  await startEditing(state.generation);
  if (state.leaseId) $('#add-marker').focus();
});
