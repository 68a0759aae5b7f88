// Loading the traced frames of the open movie.
'use strict';

import { state, commit } from '../state.js';
import { api, moviePath } from '../api.js';

export const FRAME_PAGE = 1000;

export async function loadFrames(gen, key) {
  const frames = [];
  let from = 0;
  for (let page = 0; page < 10000; page++) {
    const res = await api('GET', moviePath(state.movieId) + '/frames?from=' + from + '&limit=' + FRAME_PAGE);
    if (gen !== state.generation) return;
    frames.push(...(res.frames || []));
    if (res.next == null) break;
    from = res.next;
  }
  frames.sort((a, b) => a.frame - b.frame);
  commit({ frames, framesByIndex: new Map(frames.map((f) => [f.frame, f])), framesKey: key });
}
