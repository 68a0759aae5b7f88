// What the page says while the ingest prepares a movie's frames (issue 22):
// the movie's progress counts the frames prepared while it awaits its video
// (domain.PrepareFrames). Pure: the list and Analyze both ask it.
'use strict';

const count = (x) => Number(x || 0).toLocaleString('en-US');

// preparingText is "Preparing frames 1,234 of 108,000" for a movie whose
// ingest has begun, else ''.
export function preparingText(m) {
  const p = (m && m.progress) || {};
  if (!m || m.status !== 'awaiting_upload' || !(p.totalFrames > 0)) return '';
  return 'Preparing frames ' + count(p.framesWritten) + ' of ' + count(p.totalFrames);
}
