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

// tracedOf is the one count of a movie's traced frames: what the server
// summary says it stores (tracedFrames: frames kept from earlier traces plus
// those the last trace wrote; GET /movies/{id}/frames returns them and a
// download holds them). Older servers lack it: then the last job's progress.
export const tracedOf = (m) => (m && m.tracedFrames != null ? m.tracedFrames : ((m && m.progress) || {}).framesWritten || 0);

// traced is the open movie's traced frames: the frames loaded for the
// movie as it is now (the same table the server counts), else the summary's
// count. Every sentence about the open movie's frames uses it: Results,
// Last trace, History, the downloads. first/last: the range, when loaded.
export function traced(s) {
  const m = s.movie;
  const fs = s.frames;
  if (m && s.framesKey === framesKeyOf(m)) {
    return { count: fs.length, first: fs.length ? fs[0].frame : null, last: fs.length ? fs[fs.length - 1].frame : null, loaded: true };
  }
  return { count: tracedOf(m), first: null, last: null, loaded: false };
}

// framesKeyOf names what the stored frames of m are: they change when a
// trace ends (status, job) or a cancel is settled (the job's frames).
export const framesKeyOf = (m) => m.status + '/' + (m.lastJob ? m.lastJob.jobId + '/' + m.lastJob.frames : '') + '/' + tracedOf(m);

// progressText is the movie's progress, not only the last job's: a running
// trace's share, or how much of the movie the stored frames cover. The list
// says it; its count is tracedOf, the one the movie's page states.
export function progressText(m) {
  const p = m.progress || {};
  const n = tracedOf(m);
  switch (m.status) {
    case STATUS.TRACING:
      return p.totalFrames ? 'Tracing: ' + p.framesWritten + ' of ' + p.totalFrames + ' frames so far (' + Math.floor(100 * p.framesWritten / p.totalFrames) + '%)' : 'Tracing: starting';
    case STATUS.TRACED:
      return 'Done: ' + plural(n, 'traced frame') + ' over the ' + plural(m.frameCount, 'frame') + ' of the movie';
    case STATUS.TRACING_FAILED:
      return 'Stopped: ' + n + ' of ' + plural(m.frameCount, 'frame') + ' traced and saved';
    case STATUS.TRACING_CANCELLED:
      return 'Cancelled: ' + n + ' of ' + plural(m.frameCount, 'frame') + ' traced and saved';
    default:
      return 'Not traced yet';
  }
}

// storedText is the sentence every panel ends with when it names the
// movie's traced frames: "601 traced frames are kept (frames 0 to 600)".
export function storedText(t, verb) {
  const range = t.count && t.first != null ? ' (frames ' + t.first + ' to ' + t.last + ')' : '';
  return plural(t.count, 'traced frame') + (t.count === 1 ? ' is ' : ' are ') + verb + range;
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
  // A cancel's count is settled by the server from the stored frames, so
  // a cancelled job has a range too.
  if (!job || !job.frames || !s.movie || s.framesKey !== framesKeyOf(s.movie)) return null;
  const fs = s.frames;
  if (fs.length < job.frames) return null;
  return { first: fs[fs.length - job.frames].frame, last: fs[fs.length - 1].frame };
}

// downloadHolds says what a download would hold now: the same count as
// Results (traced), and the file says it too (frames).
export function downloadHolds(s) {
  const m = s.movie;
  const n = traced(s).count;
  if (m && m.status === STATUS.TRACING) {
    const p = m.progress || {};
    return { kind: 'partial', frames: null, label: 'Download partial frames', suffix: '-partial',
      note: 'A trace is running: a download now holds only the frames traced so far (' + (p.framesWritten || 0) + ' of ' + (p.totalFrames || '?') + ').' };
  }
  if (!n) return { kind: 'none', frames: 0, label: 'Nothing to download yet', suffix: '', note: 'No frames are traced yet, so there is nothing to download.' };
  const stale = m && m.resultsStale ? ' They were traced with other settings than those shown now.' : '';
  if (m && m.status === STATUS.TRACING_FAILED) {
    return { kind: 'failed', frames: n, label: 'Download the failed trace\u2019s frames', suffix: '-failed',
      note: 'The last trace failed: a download holds the ' + plural(n, 'traced frame') + ' saved, not a complete result.' + stale };
  }
  if (m && m.status === STATUS.TRACING_CANCELLED) {
    return { kind: 'cancelled', frames: n, label: 'Download the cancelled trace\u2019s frames', suffix: '-cancelled',
      note: 'The last trace was cancelled: a download holds the ' + plural(n, 'traced frame') + ' saved, not a complete result.' + stale };
  }
  if (m && m.status === STATUS.TRACED) {
    return { kind: m.resultsStale ? 'stale' : 'complete', frames: n, label: m.resultsStale ? 'Download stale results' : 'Download complete results', suffix: m.resultsStale ? '-stale' : '',
      note: 'A download holds the complete results: ' + plural(n, 'traced frame') + '.' + stale };
  }
  return { kind: 'partial', frames: n, label: 'Download saved frames', suffix: '-partial',
    note: 'The last trace did not finish: a download holds the ' + plural(n, 'traced frame') + ' saved so far.' + stale };
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
    case 'keys': return 'A correction must be on a traced frame within the trim (every captured frame), of a marker that still exists, and on the frame (0 to 100 %).';
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

// replacing: a trace runs over stored results of an earlier one, which it
// replaces from its plan's start: they are shown as being replaced, not as
// current results.
export const replacing = (s) => !!s.movie && s.movie.status === STATUS.TRACING && s.frames.length > 0;

// historyKey: what changes the movie's history (a trace starts or ends, a
// cancel is settled, the calibration or the lock changes). While it differs
// from the key the history was loaded for, the history is reloaded at each
// poll (its items follow the row shortly, through the stream).
export function historyKey(m) {
  if (!m) return '';
  const j = m.lastJob;
  const l = m.lock;
  return [m.status, j ? j.jobId + '/' + j.status + '/' + j.frames : '', l && l.kind === LOCK.TRACING ? l.startedAt : '', JSON.stringify(m.calibration || null)].join('|');
}

// staleText says why the stored results are not current, or ''.
export function staleText(m) {
  if (!m || !m.resultsStale) return '';
  return 'These results are stale: the markers, trim or capture interval changed after this trace started. Retrace to bring them up to date.';
}

// ---- Corrections (key frames), where markers start, doubt and quality
// (issue 24). Every sentence about them is here.

// keysOf: the movie's corrections of one marker (or all), by frame.
export const keysOf = (m, markerId) => ((m && m.keys) || []).filter((k) => markerId == null || k.markerId === markerId);

// keyAt: the correction of marker markerId on frame, if any.
export const keyAt = (m, markerId, frame) => keysOf(m, markerId).find((k) => k.frame === frame) || null;

// markerFrame: the frame a marker was placed on (0 when the API has none).
export const markerFrame = (mk) => (mk && mk.frame) || 0;

// markerFrameText says on which frame a marker was placed and, when that is
// outside the trim, what a trace does with it (the tracer starts a marker
// on its frame, or the trim's first frame if earlier; never after the end).
export function markerFrameText(m, mk) {
  const f = markerFrame(mk);
  const said = 'placed on frame ' + f;
  if (!m || !m.trim) return said;
  if (f < m.trim.start) return said + ', before the trim: it is tracked from frame ' + m.trim.start + ', the trim\u2019s first frame, at this position.';
  if (f >= m.trim.end) return said + ', after the trim (frames ' + m.trim.start + ' to ' + (m.trim.end - 1) + '): it is not tracked. Move it on a frame within the trim, or change the trim.';
  return said;
}

// correctable: a marker's point on the shown frame can be corrected: this
// page holds the lease, no trace runs, and the frame is a traced one.
export const correctable = (s) => editable(s) && s.framesByIndex.has(s.frame);

// pointOf: marker markerId's traced point on frame f, or null.
export function pointOf(s, markerId, f) {
  const fr = s.framesByIndex.get(f);
  return fr ? (fr.points || []).find((p) => p.markerId === markerId) || null : null;
}

const DOUBT_WORDS = { appearance: 'it no longer looks like the marker', jump: 'it jumped further than its motion allows', merged: 'it merged with another marker' };

// doubtText: why the tracker doubts a point, or ''.
export const doubtText = (p) => (p && p.doubt ? 'uncertain: ' + (DOUBT_WORDS[p.doubt] || p.doubt) : '');

// pointText: one marker's point on a frame in words (the frame's text
// alternative): where it is, or that it is lost, doubted or corrected.
export function pointText(label, p, key) {
  if (key) return label + ': your correction at ' + pctText(key.x) + ', ' + pctText(key.y) + ' (a key frame)';
  if (isLost(p)) return label + ': lost';
  return label + ' at ' + pctText(p.x) + ', ' + pctText(p.y) + (p.doubt ? ' (' + doubtText(p) + ')' : '');
}

const pctText = (v) => (Math.round(v * 1000) / 10) + ' %';

// keyText: one correction in words.
export const keyText = (label, k) => label + ': corrected on frame ' + k.frame + ' to ' + pctText(k.x) + ', ' + pctText(k.y);

// retraceFromText says what a retrace from a corrected frame keeps.
export const retraceFromText = (k) => 'Frames before ' + k + ' are kept; frames from ' + k + ' on are traced again from your correction.';

// correctHint: how to correct a point on the shown frame, or why not.
export function correctHint(s) {
  if (!s.movie || !s.frames.length) return 'After a trace you can correct a marker\u2019s point on any traced frame.';
  if (!editable(s)) return 'Start editing to correct a marker\u2019s point on this frame.';
  if (!s.framesByIndex.has(s.frame)) return 'Frame ' + s.frame + ' is not traced: go to a traced frame to correct a point there.';
  return 'Drag a marker\u2019s point on the frame to where it belongs, or choose Correct below, move it with the arrow keys and press Enter.';
}

// qualityOf: the last trace's quality sentences, per marker (the API's).
export const qualityOf = (m) => ((m && m.lastJob && m.lastJob.quality) || []).map((q) => q.summary).filter(Boolean);
