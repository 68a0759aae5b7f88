// A movie that cannot be analysed yet (its file has not arrived) or at all
// (it could not be read): why, in place of the editor.
'use strict';

import { $, setText } from '../dom.js';
import { STATUS } from '../constants.js';
import { notReady } from '../facts.js';

export function render(s) {
  const m = s.movie;
  if (!notReady(m)) return;
  setText($('#not-ready-title'), m.title);
  setText($('#not-ready-reason'), m.status === STATUS.AWAITING_UPLOAD
    ? "This movie's video has not been uploaded yet. It can be analysed once its file has arrived and been read; this page opens it then."
    : "This movie's video could not be read" + (m.ingestFailure ? ': ' + m.ingestFailure : '.') + ' Upload the file again as a new movie.');
}
