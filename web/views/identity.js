// The development identity picker (only where the stack asks for it).
'use strict';

import { $, show, fieldError } from '../dom.js';
import { state } from '../state.js';
import { NAME_RE, userFor, signInMode } from '../api.js';
import { setUser } from '../actions/nav.js';

export function render(s) {
  show($('#identity-form'), signInMode() === 'dev');
  // The footer names the local development stack only where it runs.
  show($('#footer-local'), signInMode() === 'dev');
  $('#identity-current').textContent = s.user ? 'signed in as ' + s.user.name : 'no name chosen';
  if (s.user && document.activeElement !== $('#identity-name') && $('#identity-name').dataset.shown !== s.user.name) {
    $('#identity-name').value = s.user.name;
    $('#identity-name').dataset.shown = s.user.name;
  }
}

$('#identity-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  if (signInMode() !== 'dev') return;
  const name = $('#identity-name').value;
  if (!NAME_RE.test(name.trim())) {
    fieldError('identity-name', 'Use 1 to 64 letters, digits, spaces or . _ \' -');
    $('#identity-name').focus();
    return;
  }
  fieldError('identity-name', '');
  const user = userFor(name);
  if (state.user && state.user.id === user.id) return;
  setUser(user);
});
