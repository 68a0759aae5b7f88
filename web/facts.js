// Pure derivations from the state: what the page says and allows. Every
// sentence about a movie's frames is built here from the same facts, so the
// list, Last trace, Results and the downloads cannot disagree.
'use strict';

import { STATUS, LOCK } from './constants.js';
import { plural } from './dom.js';

const STATUS_TEXT = {
  [STATUS.AWAITING_UPLOAD]: 'Waiting for its video', [STATUS.INGEST_FAILED]: 'Video unreadable',
  [STATUS.READY]: 'Ready', [STATUS.TRACING]: 'Tracing', [STATUS.TRACED]: 'Traced',
  [STATUS.TRACING_FAILED]: 'Trace failed', [STATUS.TRACING_CANCELLED]: 'Trace cancelled',
};
export const statusText = (s) => STATUS_TEXT[s] || 'Unknown';

const COLOURS = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4', '#f032e6', '#9a6324'];
export const colour = (i) => COLOURS[i % COLOURS.length];

// editable: this page holds the live lease and no trace runs.
export function editable(s) {
  return !!s.leaseId && !!s.movie && s.movie.status !== STATUS.TRACING;
}

// notReady: a movie whose file has not arrived, or could not be read.
export const notReady = (m) => !!m && (m.status === STATUS.AWAITING_UPLOAD || m.status === STATUS.INGEST_FAILED);

// progressText is the movie's progress, not only the last job's: a running
// trace's share, or how much of the movie the stored results cover.
export function progressText(m) {
  const p = m.progress || {};
  switch (m.status) {
    case STATUS.TRACING:
      return p.totalFrames ? 'Tracing: ' + p.framesWritten + ' of ' + p.totalFrames + ' frames so far (' + Math.floor(100 * p.framesWritten / p.totalFrames) + '%)' : 'Tracing: starting';
    case STATUS.TRACED:
      return 'Done: ' + plural(p.framesWritten, 'traced frame') + ' over the ' + plural(m.frameCount, 'frame') + ' of the movie';
    case STATUS.TRACING_FAILED:
      return 'Stopped: ' + p.framesWritten + ' of ' + p.totalFrames + ' frames saved';
    case STATUS.TRACING_CANCELLED:
      return 'Cancelled: ' + p.framesWritten + ' of ' + p.totalFrames + ' frames saved';
    default:
      return 'Not traced yet';
  }
}

// startFrom is where Start at begins: after a trace that did not finish,
// the frame a retrace resumes at (the API's restart, domain.RestartOf),
// else the trim's start.
export const startFrom = (m) => (m.restart && m.restart.resumes ? m.restart.resumeFrom : m.trim.start);

// restartText says what Retrace does with the frames an unfinished trace
// left: resume after the kept ones, or replace them.
export function restartText(m) {
  const r = m.restart || {};
  if (r.resumes) return 'Retrace resumes at frame ' + r.resumeFrom + ' and keeps the frames before it (Start at is set to ' + r.resumeFrom + '; an earlier frame traces them again).';
  if (r.replaces) return 'Retrace traces the frames this trace saved again and replaces them (they were not checkpointed, or the markers or settings changed since).';
  return 'Retrace traces again.';
}

// rateText is a frame rate as people write it: 29.97, 30, 23.98.
export const rateText = (rate) => String(+(+rate || 0).toFixed(2));

export function timecode(frame, rate) {
  const sec = frame / (rate || 1);
  const mm = Math.floor(sec / 60);
  const ss = sec - mm * 60;
  return String(mm).padStart(2, '0') + ':' + ss.toFixed(3).padStart(6, '0');
}

// jobRange is what the last job actually traced: its frames are the last
// `frames` of the stored ones (a trace clears everything from its start).
export function jobRange(s, job) {
  // A cancel records the progress last published, which may trail the
  // frames actually stored: no range is claimed for it.
  if (!job || job.status === STATUS.TRACING_CANCELLED || !job.frames || s.framesKey == null || !s.framesKey.endsWith('/' + job.jobId)) return null;
  const fs = s.frames;
  if (fs.length < job.frames) return null;
  return { first: fs[fs.length - job.frames].frame, last: fs[fs.length - 1].frame };
}

// downloadHolds says what a download would hold now.
export function downloadHolds(s) {
  const m = s.movie;
  const n = s.frames.length;
  if (m && m.status === STATUS.TRACING) {
    const p = m.progress || {};
    return { kind: 'partial', label: 'Download partial frames', suffix: '-partial',
      note: 'A trace is running: a download now holds only the frames traced so far (' + (p.framesWritten || 0) + ' of ' + (p.totalFrames || '?') + ').' };
  }
  if (!n) return { kind: 'none', label: 'Nothing to download yet', suffix: '', note: 'No frames are traced yet, so there is nothing to download.' };
  if (m && m.status === STATUS.TRACING_FAILED) {
    return { kind: 'failed', label: 'Download the failed trace\u2019s frames', suffix: '-failed',
      note: 'The last trace failed: a download holds the ' + plural(n, 'frame') + ' it saved, not a complete result.' };
  }
  if (m && m.status === STATUS.TRACING_CANCELLED) {
    return { kind: 'cancelled', label: 'Download the cancelled trace\u2019s frames', suffix: '-cancelled',
      note: 'The last trace was cancelled: a download holds the ' + plural(n, 'frame') + ' saved, not a complete result.' };
  }
  if (m && m.status === STATUS.TRACED) {
    return { kind: 'complete', label: 'Download complete results', suffix: '',
      note: 'A download holds the complete results: ' + plural(n, 'traced frame') + '.' };
  }
  return { kind: 'partial', label: 'Download saved frames', suffix: '-partial',
    note: 'The last trace did not finish: a download holds the ' + plural(n, 'frame') + ' saved so far.' };
}

// invalidText says what a refused control accepts.
export function invalidText(m, control) {
  const last = m ? m.frameCount - 1 : 0;
  switch (control) {
    case 'trim-start':
    case 'trim-end': return 'The trim must be within frames 0 to ' + last + ', with the first frame not after the last.';
    case 'capture-interval': return 'Use a whole number from 1 to 10000.';
    case 'from-frame': return m ? 'Start at a frame within the trim (' + m.trim.start + ' to ' + (m.trim.end - 1) + ').' : 'Start at a frame within the trim.';
    case 'markers': return 'Place at least one marker on the frame before you start a trace.';
    case 'cal-length': return 'The calibration was not accepted: draw a line at least 0.5% of the frame long on the frame, give its real length (a positive number, at most a million), and put the origin on the frame.';
    default: return 'That value is not allowed.';
  }
}

// nearestTraced is the last traced frame at or before frame, or -1.
export function nearestTraced(frames, frame) {
  let lo = 0;
  let hi = frames.length - 1;
  let best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (frames[mid].frame <= frame) { best = frames[mid].frame; lo = mid + 1; } else hi = mid - 1;
  }
  return best;
}

// A lost point (the tracker lost the marker there) has no position: a gap.
export const isLost = (p) => !p || p.lost === true || p.x == null || p.y == null;

// mineTracing: the running trace is this user's.
export const myTrace = (m) => m.status === STATUS.TRACING && !!m.lock && m.lock.kind === LOCK.TRACING && !!m.lock.yours;
