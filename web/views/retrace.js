// Retrace asks before it replaces results (issue 25): the question names
// what is replaced, from the same facts as Results.
'use strict';

import { $, show, setText } from '../dom.js';
import { traced, storedText } from '../facts.js';
import { answerRetrace } from '../actions/edit.js';

export function render(s) {
  const f = s.retraceAsk;
  show($('#retrace-ask'), !!f);
  if (!f) return;
  setText($('#retrace-ask-text'), 'In all, ' + storedText(traced(s), 'stored') + '. Retracing from frame ' + f.from +
    ' replaces them from that frame on (or from an earlier frame where they are not from a completed trace); frames before it stay.');
}

$('#retrace-yes').addEventListener('click', () => answerRetrace(true));
$('#retrace-no').addEventListener('click', () => answerRetrace(false));
