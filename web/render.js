// Rendering the Analyze view from the movie metadata. Live regions change
// only when what they say changes.
'use strict';

import { $, state, el, show, timeEl, setText, plural } from './state.js';
import { draw, timecode } from './player.js';
import { renderMarkers, canvasHint } from './markers.js';
import { editable } from './analyze.js';
import { fillSettings } from './settings.js';
import { renderResults, downloadHolds } from './results.js';
import { renderCancel } from './cancel.js';

const STATUS_TEXT = {
  awaiting_upload: 'Waiting for its video', ingest_failed: 'Video unreadable',
  ready: 'Ready', tracing: 'Tracing', traced: 'Traced', tracing_failed: 'Trace failed', tracing_cancelled: 'Trace cancelled',
};
export const statusText = (s) => STATUS_TEXT[s] || 'Unknown';

// banner returns the lease banner's parts: [mode, ...nodes].
function banner(m) {
  const lock = m.lock;
  const who = (l) => el('strong', { dataset: { testid: 'holder-name' } }, l.userName);
  const since = (l) => timeEl(l.startedAt, 'holder-since');
  if (state.leaseId) {
    return ['edit', 'You are editing this movie. Others see it view-only until you leave this page.'];
  }
  const lost = state.lostLease ? 'You are no longer editing this movie: your editing lock lapsed or was taken over. ' : '';
  if (!lock) {
    return [state.lostLease ? 'lost' : 'free', lost + 'Nobody is editing this movie now. Choose Start editing to change it.'];
  }
  if (lock.yours && lock.kind === 'tracing') {
    return ['view', lost, 'You started this trace at ', since(lock), '. It is running; this page is view-only until it ends.'];
  }
  if (lock.yours) {
    return ['view', lost, 'You are editing this movie in another tab or window (since ', since(lock),
      '). This tab is view-only: edit in the other one, or close it.'];
  }
  if (lock.kind === 'tracing') {
    return ['view', lost, 'View only: ', who(lock), ' started a trace at ', since(lock), '. It is running.'];
  }
  return ['view', lost, 'View only: ', who(lock), ' is editing this movie (since ', since(lock), ').'];
}

function leaseDetail(m) {
  const lock = m.lock;
  if (state.leaseId) {
    return state.offline
      ? ['The server cannot be reached. Your changes cannot be saved now; your editing lock lapses at ',
        timeEl(state.leaseExpiresAt, 'lease-expires'), ' unless the connection returns.']
      : ['Your editing lock renews itself while this page is open; it would lapse at ', timeEl(state.leaseExpiresAt, 'lease-expires'),
        ' if this page lost its connection.'];
  }
  if (!lock || !lock.lastActiveAt) return [];
  const holder = lock.yours ? (lock.kind === 'tracing' ? 'Your trace' : 'Your other tab') : lock.kind === 'tracing' ? 'The trace' : lock.userName;
  return [holder + ' was last active at ', timeEl(lock.lastActiveAt, 'holder-active'), '; the lock lapses at ',
    timeEl(lock.expiresAt, 'holder-expires'), ' unless renewed.'];
}

// replaceIfChanged swaps an element's children only when their text differs.
function replaceIfChanged(e, nodes) {
  const key = nodes.map((n) => (typeof n === 'string' ? n : n.textContent + '|' + (n.dateTime || ''))).join('');
  if (e.dataset.key === key) return;
  e.dataset.key = key;
  e.replaceChildren(...nodes);
}

export function renderMovie() {
  const m = state.movie;
  if (!m) return;
  document.title = m.title + ' - Analyze';
  setText($('#movie-title'), m.title);
  const st = $('#movie-status');
  setText(st, statusText(m.status));
  st.className = 'status s-' + m.status;
  st.dataset.status = m.status;
  setText($('#movie-info'), m.frameCount + ' frames at ' + m.frameRate + ' frames per second (' + timecode(m.frameCount, m.frameRate) + ')');

  const [mode, ...parts] = banner(m);
  const b = $('#lease-banner');
  b.dataset.mode = mode;
  replaceIfChanged(b, parts.filter((p) => p !== ''));
  replaceIfChanged($('#lease-detail'), leaseDetail(m));
  show($('#acquire'), !state.leaseId && !m.lock);

  // Edit controls: enabled only with our live lease and no trace running.
  const can = editable();
  for (const c of document.querySelectorAll('.edit-control')) c.disabled = !can;
  setText($('#canvas-hint'), canvasHint(can));
  $('#player').classList.toggle('placing', can);
  $('#player').setAttribute('aria-label', 'Frame ' + state.frame + ' of the movie' + (can ? ', where you place markers' : ''));
  fillSettings(false);
  $('#start-trace').textContent = m.lastJob ? 'Retrace' : 'Start trace';
  renderMarkers(can);

  // The trim on the timeline.
  const band = $('#trim-band');
  band.style.left = (100 * m.trim.start / m.frameCount) + '%';
  band.style.width = (100 * (m.trim.end - m.trim.start) / m.frameCount) + '%';
  const slider = $('#frame-slider');
  slider.max = Math.max(m.frameCount - 1, 0);
  if (state.frame > m.frameCount - 1) state.frame = 0;
  slider.value = state.frame;

  // Progress.
  const tracing = m.status === 'tracing';
  show($('#progress-panel'), tracing);
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

  renderJob(m);
  renderResults();
  const holds = downloadHolds();
  setText($('#downloads-note'), holds.note);
  $('#downloads-note').dataset.holds = holds.kind;
  for (const id of ['download-json', 'download-csv']) $('#' + id).disabled = holds.kind === 'none';
  setText($('#download-json'), holds.label + ' (JSON)');
  setText($('#download-csv'), holds.label + ' (CSV)');
  draw();
}

// jobRange is what the last job actually traced: its frames are the last
// `frames` of the stored ones (a trace clears everything from its start).
export function jobRange(job) {
  // A cancel records the progress last published, which may trail the
  // frames actually stored: no range is claimed for it.
  if (!job || job.status === 'tracing_cancelled' || !job.frames || state.framesKey == null || !state.framesKey.endsWith('/' + job.jobId)) return null;
  const fs = state.frames;
  if (fs.length < job.frames) return null;
  return { first: fs[fs.length - job.frames].frame, last: fs[fs.length - 1].frame };
}

function renderJob(m) {
  const job = m.lastJob;
  show($('#job-panel'), !!job && m.status !== 'tracing');
  if (!job) return;
  const by = job.yours ? 'you' : job.userName;
  const range = jobRange(job);
  const frames = range ? plural(job.frames, 'frame') + ' (frames ' + range.first + ' to ' + range.last + ')' : plural(job.frames, 'frame');
  let what;
  if (job.status === 'traced') what = 'Complete: ' + frames + ' traced by ' + by + ', finished ';
  else if (job.status === 'tracing_cancelled') what = 'Cancelled: the trace ' + by + ' started was stopped; the frames it had traced are kept (see Results), and the next trace traces them again. Stopped at ';
  else what = 'Failed: the trace ' + by + ' started saved ' + (job.frames ? frames : 'no frames') + ' before it stopped, at ';
  replaceIfChanged($('#last-job'), [what, timeEl(job.finishedAt), '.']);
  $('#last-job').dataset.status = job.status;
  const failed = job.status === 'tracing_failed';
  const fs = $('#failure-summary');
  setText(fs, failed && job.failureSummary
    ? 'Reason: ' + job.failureSummary + (range ? ' Nothing after frame ' + range.last + ' was saved.' : '') : '');
  show(fs, failed && !!job.failureSummary);
  const next = $('#next-step');
  show(next, failed);
  if (failed) {
    setText(next, editable()
      ? 'What next: check the markers and settings, then choose Retrace to trace again; the frames of a failed trace are always traced again.'
      : state.movie.lock ? 'What next: once the movie is free, start editing and choose Retrace.' : 'What next: choose Start editing, then Retrace to trace again.');
  }
}
