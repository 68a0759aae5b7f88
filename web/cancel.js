// Cancelling a running trace: only the user who started it may (the API
// refuses anyone else). The frames it traced so far are kept.
'use strict';

import { $, state, el, say, focusEl } from './state.js';
import { api, moviePath, APIError, errorText } from './api.js';
import { loadMovie } from './analyze.js';
import { renderMovie } from './render.js';

const button = el('button', { type: 'button', id: 'cancel-trace', dataset: { testid: 'cancel-trace' } }, 'Cancel this trace');
const note = el('p', { className: 'muted small', id: 'cancel-note' },
  'Cancelling stops the trace at its next step. The frames it has traced so far are kept; the next trace traces them again.');

export function renderCancel(m) {
  const mine = m.status === 'tracing' && m.lock && m.lock.kind === 'tracing' && m.lock.yours;
  const slot = $('#cancel-slot');
  if (mine && !slot.firstChild) slot.replaceChildren(note, button);
  if (!mine && slot.firstChild) {
    const hadFocus = slot.contains(document.activeElement);
    slot.replaceChildren();
    if (hadFocus) focusEl('#movie-title');
  }
  button.disabled = false;
}

button.addEventListener('click', async () => {
  const gen = state.generation;
  button.disabled = true;
  try {
    const m = await api('POST', moviePath(state.movieId) + '/traces/cancel');
    if (gen !== state.generation) return;
    state.movie = m;
  } catch (err) {
    if (gen !== state.generation) return;
    button.disabled = false;
    say(err instanceof APIError && err.code === 'not_tracing' ? 'The trace had already ended.'
      : err instanceof APIError && err.code === 'not_your_trace' ? 'Only the person who started this trace can cancel it.' : errorText(err), 'error');
    try { await loadMovie(gen); } catch { /* the poll retries */ }
    return;
  }
  try { await loadMovie(gen); } catch { /* the poll retries */ }
  renderMovie();
  focusEl('#job-title');
});
