// What the list shows of each movie besides its status (issue 25): a
// thumbnail (frame 0's image), its duration and resolution, who added it,
// and the Rename and Delete buttons. The thumbnails are a cache of this
// view (object URLs of the frame-0 JPEGs, fetched with the identity, at
// most two at a time), not page state.
'use strict';

import { el } from '../dom.js';
import { api, moviePath } from '../api.js';
import { askRename, askDelete } from '../actions/manage.js';

const THUMB_W = 64;
const thumbs = new Map(); // movie ID -> object URL | 'loading' | 'none'
const waiting = [];
let running = 0;

function pump() {
  while (running < 2 && waiting.length) {
    const id = waiting.shift();
    running++;
    api('GET', moviePath(id) + '/frames/0/image', { accept: 'image/*', raw: true, cache: 'default', priority: 'low' })
      .then((r) => r.blob())
      .then((b) => { thumbs.set(id, URL.createObjectURL(b)); })
      .catch(() => thumbs.set(id, 'none'))
      .finally(() => {
        running--;
        const url = thumbs.get(id);
        for (const img of document.querySelectorAll('img[data-thumb="' + CSS.escape(id) + '"]')) {
          if (url !== 'none') img.src = url; else img.replaceWith(placeholder());
        }
        pump();
      });
  }
}

const placeholder = () => el('span', { className: 'thumb thumb-none', 'aria-hidden': 'true' });

// durationText: 0:07, 1:02:03.
export function durationText(seconds) {
  const t = Math.round(+seconds || 0);
  const h = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60), s = t % 60;
  const two = (n) => String(n).padStart(2, '0');
  return h ? h + ':' + two(m) + ':' + two(s) : m + ':' + two(s);
}

// thumb is frame 0's image, or a grey box before the video is ingested.
export function thumb(m) {
  const v = m.video;
  if (!v) return placeholder();
  const h = Math.max(1, Math.round(THUMB_W * v.height / v.width));
  const img = el('img', { className: 'thumb', alt: '', width: THUMB_W, height: h, dataset: { thumb: m.id, testid: 'thumb-' + m.id } });
  const url = thumbs.get(m.id);
  if (url && url !== 'loading' && url !== 'none') img.src = url;
  else if (url === 'none') return placeholder();
  else if (!url) { thumbs.set(m.id, 'loading'); waiting.push(m.id); queueMicrotask(pump); }
  return img;
}

// details: "0:20 · 640 × 480 · added by Alice" (what is known of it).
export function details(m) {
  const bits = [];
  if (m.video) bits.push(durationText(m.video.durationSeconds), m.video.width + ' × ' + m.video.height);
  if (m.addedBy) bits.push('added by ' + (m.addedBy.yours ? 'you' : m.addedBy.userName));
  return el('span', { className: 'movie-details muted', dataset: { testid: 'details-' + m.id } }, bits.join(' · '));
}

// manageButtons: Rename and Delete, each naming the movie for a screen reader.
export function manageButtons(m) {
  return [
    el('button', { type: 'button', className: 'small-button', dataset: { testid: 'rename-' + m.id }, 'aria-label': 'Rename ' + m.title,
      onclick: () => askRename(m.id) }, 'Rename'),
    el('button', { type: 'button', className: 'small-button danger', dataset: { testid: 'delete-' + m.id }, 'aria-label': 'Delete ' + m.title,
      onclick: () => askDelete(m.id) }, 'Delete'),
  ];
}
