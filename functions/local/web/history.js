// The history panel: who started, finished, failed or cancelled each trace.
'use strict';

import { $, show } from './state.js';

export function resetHistory() {
  $('#history').replaceChildren();
  show($('#history-empty'), false);
  show($('#history-more'), false);
}

export async function loadHistory() {}
