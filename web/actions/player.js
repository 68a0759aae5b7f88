// Frame navigation and playback. Owns the playback timer.
'use strict';

import { state, commit } from '../state.js';

let playTimer = null;

export function setFrame(n) {
  const m = state.movie;
  if (!m) return;
  commit({ frame: Math.min(Math.max(0, n | 0), m.frameCount - 1) });
}

export const step = (d) => setFrame(state.frame + d);

export function stopPlayback() {
  clearInterval(playTimer);
  playTimer = null;
  if (state.playing) commit({ playing: false });
}

export function togglePlayback() {
  if (playTimer) { stopPlayback(); return; }
  const m = state.movie;
  if (!m) return;
  if (state.frame >= m.frameCount - 1) setFrame(0);
  commit({ playing: true });
  playTimer = setInterval(() => {
    if (!state.movie || state.frame >= state.movie.frameCount - 1) { stopPlayback(); return; }
    setFrame(state.frame + 1);
  }, 1000 / Math.min(Math.max(m.frameRate || 24, 1), 60));
}
