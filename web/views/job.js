// Last trace: what the last job did, and what to do after a failure.
'use strict';

import { $, show, setText, timeEl, plural, replaceIfChanged } from '../dom.js';
import { STATUS } from '../constants.js';
import { editable, jobRange, restartText } from '../facts.js';

export function render(s) {
  const m = s.movie;
  if (!m) return;
  const job = m.lastJob;
  show($('#job-panel'), !!job && m.status !== STATUS.TRACING);
  if (!job) return;
  const by = job.yours ? 'you' : job.userName;
  const range = jobRange(s, job);
  const frames = range ? plural(job.frames, 'frame') + ' (frames ' + range.first + ' to ' + range.last + ')' : plural(job.frames, 'frame');
  let what;
  if (job.status === STATUS.TRACED) what = 'Complete: ' + frames + ' traced by ' + by + ', finished ';
  else if (job.status === STATUS.TRACING_CANCELLED) what = 'Cancelled: the trace ' + by + ' started was stopped; the frames it had traced are kept (see Results), and the next trace traces them again. Stopped at ';
  else what = 'Failed: the trace ' + by + ' started saved ' + (job.frames ? frames : 'no frames') + ' before it stopped, at ';
  replaceIfChanged($('#last-job'), [what, timeEl(job.finishedAt), '.']);
  $('#last-job').dataset.status = job.status;
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
