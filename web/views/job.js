// Last trace: what the last job did, and what to do after a failure.
'use strict';

import { $, el, show, setText, timeEl, plural, replaceIfChanged } from '../dom.js';
import { STATUS } from '../constants.js';
import { editable, jobRange, restartText, traced, storedText, staleText, qualityOf } from '../facts.js';

export function render(s) {
  const m = s.movie;
  if (!m) return;
  const job = m.lastJob;
  show($('#job-panel'), !!job && m.status !== STATUS.TRACING);
  if (!job) return;
  const by = job.yours ? 'you' : job.userName;
  const range = jobRange(s, job);
  const frames = range ? plural(job.frames, 'frame') + ' (frames ' + range.first + ' to ' + range.last + ')' : plural(job.frames, 'frame');
  const t = traced(s);
  let what;
  if (job.status === STATUS.TRACED) what = 'Complete: ' + frames + ' traced by ' + by + ', finished ';
  else if (job.status === STATUS.TRACING_CANCELLED) what = 'Cancelled: the trace ' + by + ' started traced ' + (job.frames ? frames : 'no frames') + ' before it was stopped at ';
  else what = 'Failed: the trace ' + by + ' started saved ' + (job.frames ? frames : 'no frames') + ' before it stopped, at ';
  // The movie's count, the same in every panel (facts.traced): a partial
  // retrace or a cancel keeps frames of earlier traces.
  const kept = job.status === STATUS.TRACED && t.count === job.frames ? '' : ' In all, ' + storedText(t, 'stored') + '.';
  const stale = staleText(m);
  replaceIfChanged($('#last-job'), [what, timeEl(job.finishedAt), '.' + kept + (stale ? ' ' + stale : '')]);
  $('#last-job').dataset.status = job.status;
  $('#last-job').dataset.frames = t.count;
  // Quality per marker (the API's sentences, domain.TraceQuality).
  replaceIfChanged($('#job-quality'), qualityOf(m).map((q) => el('li', {}, q)));
  const failed = job.status === STATUS.TRACING_FAILED;
  const fs = $('#failure-summary');
  setText(fs, failed && job.failureSummary
    ? 'Reason: ' + job.failureSummary + (range ? ' Nothing after frame ' + range.last + ' was saved.' : '') : '');
  show(fs, failed && !!job.failureSummary);
  const next = $('#next-step');
  show(next, failed);
  if (failed) {
    setText(next, (editable(s)
      ? 'What next: check the markers and settings, then choose Retrace. '
      : m.lock ? 'What next: once the movie is free, start editing and choose Retrace. ' : 'What next: choose Start editing, then Retrace. ') + restartText(m));
  }
}
