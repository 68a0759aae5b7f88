// Downloads: every stored frame as one file, labelled with what it holds.
'use strict';

import { state } from '../state.js';
import { el, say } from '../dom.js';
import { api, moviePath, errorText } from '../api.js';
import { downloadHolds } from '../facts.js';
import { FRAME_PAGE } from './frames.js';

// download saves every stored frame as one file. The API pages frames and
// needs the identity headers, so the page fetches the pages and hands the
// browser a Blob.
export async function download(format) {
  const id = state.movieId;
  if (!id) return;
  const holds = downloadHolds(state);
  if (holds.kind === 'none') return;
  const parts = [];
  const frames = [];
  let header = {};
  try {
    let path = moviePath(id) + '/frames?from=0&limit=' + FRAME_PAGE + (format === 'csv' ? '&format=csv' : '');
    for (let page = 0; path && page < 100000; page++) {
      if (format === 'csv') {
        const res = await api('GET', path, { accept: 'text/csv', raw: true });
        const text = await res.text();
        // Every page starts with the '# key: value' header lines and the
        // column row: keep them once, from the first page.
        parts.push(page === 0 ? text : text.replace(/^(#[^\n]*\n)*[^\n]*\n/, ''));
        const link = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('Link') || '');
        path = link ? link[1] : null;
      } else {
        const res = await api('GET', path);
        if (page === 0) header = { movie: res.movie, trace: res.trace };
        frames.push(...(res.frames || []));
        path = res.next == null ? null : moviePath(id) + '/frames?from=' + res.next + '&limit=' + FRAME_PAGE;
      }
    }
  } catch (err) {
    say(errorText(err), 'error');
    return;
  }
  const name = id + '-frames' + holds.suffix + '.' + format;
  const blob = format === 'csv'
    ? new Blob(parts, { type: 'text/csv' })
    : new Blob([JSON.stringify({ movieId: id, holds: holds.kind, tracedFrames: frames.length, ...header, frames }, null, 1)], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const a = el('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  say('Downloaded ' + name + '.', 'ok');
}
