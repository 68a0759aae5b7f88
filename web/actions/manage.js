// Renaming and deleting a movie from the list (issue 25). state.manage is
// the open dialog: { kind: 'rename' | 'delete', movieId, error }.
'use strict';

import { state, commit } from '../state.js';
import { say } from '../dom.js';
import { api, moviePath, errorText, APIError } from '../api.js';
import { CODE } from '../constants.js';

export const askRename = (movieId) => commit({ manage: { kind: 'rename', movieId, error: '', busy: false } });
export const askDelete = (movieId) => commit({ manage: { kind: 'delete', movieId, error: '', busy: false } });
export const closeManage = () => commit({ manage: null });

const movie = (id) => (state.movies || []).find((m) => m.id === id);

function refused(err) {
  if (err instanceof APIError && err.code === CODE.INVALID_INPUT) return 'That title is not allowed: ' + (err.problem.detail || 'use 1-200 printable characters, without spaces at either end.');
  if (err instanceof APIError && err.code === CODE.LEASE_HELD) {
    const h = err.problem.holder;
    return (h ? h.userName : 'Someone') + ' is editing this movie; try again when they are done.';
  }
  return errorText(err);
}

// rename sets the title; the list shows it at once.
export async function rename(movieId, title) {
  title = title.trim().replace(/\s+/g, ' ');
  const m = movie(movieId);
  if (m && title === m.title) { closeManage(); return; }
  commit({ manage: { ...state.manage, busy: true, error: '' } });
  try {
    const d = await api('PUT', moviePath(movieId) + '/title', { body: { title } });
    commit({ manage: null, movies: (state.movies || []).map((x) => (x.id === movieId ? { ...x, title: d.title } : x))
      .sort((a, b) => a.title.localeCompare(b.title)) });
    say('Renamed to “' + d.title + '”.');
  } catch (err) {
    commit({ manage: { ...state.manage, busy: false, error: refused(err) } });
  }
}

// remove deletes the movie for everyone; it leaves the list at once.
export async function remove(movieId) {
  const m = movie(movieId);
  commit({ manage: { ...state.manage, busy: true, error: '' } });
  try {
    await api('DELETE', moviePath(movieId));
  } catch (err) {
    if (!(err instanceof APIError && err.code === CODE.NOT_FOUND)) {
      commit({ manage: { ...state.manage, busy: false, error: refused(err) } });
      return;
    }
  }
  commit({ manage: null, movies: (state.movies || []).filter((x) => x.id !== movieId) });
  say('“' + (m ? m.title : 'The movie') + '” was deleted.');
}
