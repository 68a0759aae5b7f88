// The Analyze view's frame: the movie's title, status and facts, which
// controls are enabled, and the trim on the timeline.
'use strict';

import { $, setText } from '../dom.js';
import { statusText, editable, timecode, notReady, rateText } from '../facts.js';

export function render(s) {
  const m = s.movie;
  if (!m || notReady(m)) return;
  setText($('#movie-title'), m.title);
  const st = $('#movie-status');
  setText(st, statusText(m.status));
  st.className = 'status s-' + m.status;
  st.dataset.status = m.status;
  setText($('#movie-info'), m.frameCount + ' frames at ' + rateText(m.frameRate) + ' frames per second (' + timecode(m.frameCount, m.frameRate) + ')');

  // Edit controls: enabled only with our live lease and no trace running.
  const can = editable(s);
  for (const c of document.querySelectorAll('.edit-control')) c.disabled = !can;
  setText($('#start-trace'), m.lastJob ? 'Retrace' : 'Start trace');

  // The trim on the timeline.
  const band = $('#trim-band');
  band.style.left = (100 * m.trim.start / m.frameCount) + '%';
  band.style.width = (100 * (m.trim.end - m.trim.start) / m.frameCount) + '%';
}
