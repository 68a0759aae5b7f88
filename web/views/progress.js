// The running trace: its progress, and Cancel for the user who started it.
'use strict';

import { $, el, show, setText, focusEl } from '../dom.js';
import { STATUS } from '../constants.js';
import { myTrace } from '../facts.js';
import { cancelTrace } from '../actions/edit.js';

const button = el('button', { type: 'button', id: 'cancel-trace', dataset: { testid: 'cancel-trace' } }, 'Cancel this trace');
const note = el('p', { className: 'muted small', id: 'cancel-note' },
  'Cancelling stops the trace at its next step. The frames it has traced so far are kept; the next trace traces them again.');

function renderCancel(m) {
  const mine = myTrace(m);
  const slot = $('#cancel-slot');
  if (mine && !slot.firstChild) { slot.replaceChildren(note, button); button.disabled = false; }
  if (!mine && slot.firstChild) {
    const hadFocus = slot.contains(document.activeElement);
    slot.replaceChildren();
    if (hadFocus) focusEl('#movie-title');
  }
}

export function render(s) {
  const m = s.movie;
  if (!m) return;
  const tracing = m.status === STATUS.TRACING;
  const panel = $('#progress-panel');
  // A trace that ends hides this panel: focus in it goes to Last trace
  // (once every view has rendered it), not to the page's body.
  if (!tracing && !panel.hidden && panel.contains(document.activeElement)) queueMicrotask(() => focusEl('#job-title'));
  show(panel, tracing);
  const p = m.progress || {};
  const bar = $('#progress-bar');
  bar.max = Math.max(p.totalFrames || 0, 1);
  bar.value = p.framesWritten || 0;
  const pt = p.totalFrames
    ? 'Traced ' + (p.framesWritten || 0) + ' of ' + p.totalFrames + ' frames (' + Math.floor(100 * (p.framesWritten || 0) / p.totalFrames) + '%).'
    : 'Waiting for the tracer to start...';
  setText($('#progress-text'), pt);
  bar.setAttribute('aria-valuetext', pt);
  $('#progress-text').dataset.written = p.framesWritten || 0;
  renderCancel(m);
}

button.addEventListener('click', async () => {
  button.disabled = true;
  if (await cancelTrace()) focusEl('#job-title');
  else button.disabled = false;
});
