// Adding a movie from the page (issue 25): POST /movies, then the file
// straight to S3 through the presigned URL(s), with progress and cancel.
// A file larger than one part goes in parts (S3 multipart upload): each
// part's ETag is kept in localStorage, so an upload interrupted (the tab
// closed, the network gone) resumes when the same file is chosen again:
// fresh URLs for the parts not yet sent, then complete. Owns the transfers
// (XMLHttpRequest, for upload progress) and the resume records; the state
// holds only what the upload panel shows (state.uploads).
'use strict';

import { state, commit } from '../state.js';
import { say } from '../dom.js';
import { api, moviePath, errorText, APIError } from '../api.js';
import { CODE } from '../constants.js';

const RESUME_PREFIX = 'tracinglocks.upload.';
const PARALLEL_PARTS = 3;
const RETRIES = 3;
const PROGRESS_MS = 150; // commit progress at most this often

// Video types the API accepts, by extension, for files the browser gives no type.
const TYPES = { mp4: 'video/mp4', m4v: 'video/x-m4v', mov: 'video/quicktime', avi: 'video/x-msvideo', mkv: 'video/x-matroska',
  webm: 'video/webm', mpg: 'video/mpeg', mpeg: 'video/mpeg', ogv: 'video/ogg', '3gp': 'video/3gpp', ts: 'video/mp2t' };

export function videoType(file) {
  if (file.type && file.type.startsWith('video/')) return file.type;
  const ext = (file.name.split('.').pop() || '').toLowerCase();
  return TYPES[ext] || file.type || '';
}

// titleOf: the file name without its extension, as the API accepts a title.
export function titleOf(name) {
  const t = name.replace(/\.[^.]+$/, '').replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, ' ')
    .replace(/\s+/g, ' ').trim();
  return (t || 'Untitled movie').slice(0, 200);
}

const fileKey = (f) => [f.name, f.size, f.lastModified].join('|');

// --- the resume records ------------------------------------------------------

function records() {
  const out = [];
  for (let i = 0; i < localStorage.length; i++) {
    const k = localStorage.key(i);
    if (!k.startsWith(RESUME_PREFIX)) continue;
    try {
      const r = JSON.parse(localStorage.getItem(k));
      if (r && r.movieId && r.uploadId && r.fileKey) out.push(r);
    } catch { /* not ours */ }
  }
  return out;
}
const saveRecord = (r) => { try { localStorage.setItem(RESUME_PREFIX + r.movieId, JSON.stringify(r)); } catch { /* full: no resume */ } };
const dropRecord = (movieId) => localStorage.removeItem(RESUME_PREFIX + movieId);

// --- the panel's rows ----------------------------------------------------------

const live = new Map(); // key -> { xhrs: Set, cancelled, file, record }
let nextKey = 1;
let lastProgress = 0;

function setUpload(key, patch) {
  const list = (state.uploads || []).map((u) => (u.key === key ? { ...u, ...patch } : u));
  commit({ uploads: list });
}

function progress(key, sent, force) {
  const now = Date.now();
  if (!force && now - lastProgress < PROGRESS_MS) return;
  lastProgress = now;
  setUpload(key, { sent });
}

// restoreUploads shows the interrupted uploads of this browser (on load and
// after sign-in), each waiting for its file to be chosen again.
export function restoreUploads() {
  if (!state.user) return;
  const have = new Set((state.uploads || []).map((u) => u.movieId));
  const add = records().filter((r) => r.userId === state.user.id && !have.has(r.movieId)).map((r) => ({
    key: 'u' + nextKey++, movieId: r.movieId, title: r.title, fileName: r.fileName, size: r.size,
    sent: Object.keys(r.etags).length * r.partBytes, phase: 'interrupted',
    partsDone: Object.keys(r.etags).length, parts: Math.ceil(r.size / r.partBytes), message: '',
  }));
  if (add.length) commit({ uploads: [...(state.uploads || []), ...add] });
}

// addFiles starts an upload per file (or resumes one: the same file as an
// interrupted upload).
export function addFiles(files) {
  for (const file of files) {
    const interrupted = (state.uploads || []).find((u) => u.phase === 'interrupted' && records().some(
      (r) => r.movieId === u.movieId && r.fileKey === fileKey(file)));
    if (interrupted) { resume(interrupted.key, file); continue; }
    start(file);
  }
}

function failRow(file, message) {
  const key = 'u' + nextKey++;
  commit({ uploads: [...(state.uploads || []), { key, title: titleOf(file.name), fileName: file.name, size: file.size, sent: 0, phase: 'failed', message }] });
  say(message, 'error');
}

async function start(file) {
  const type = videoType(file);
  if (!type.startsWith('video/')) { failRow(file, file.name + ' is not a video file, so it cannot be added.'); return; }
  if (file.size < 1) { failRow(file, file.name + ' is empty.'); return; }
  const key = 'u' + nextKey++;
  const title = titleOf(file.name);
  const job = { xhrs: new Set(), cancelled: false, file };
  live.set(key, job);
  commit({ uploads: [...(state.uploads || []), { key, title, fileName: file.name, size: file.size, sent: 0, phase: 'starting', message: '' }] });
  let created;
  try {
    created = await api('POST', '/movies', {
      body: { title, fileName: file.name, contentType: type, sizeBytes: file.size, parts: true },
      idempotencyKey: crypto.randomUUID(),
    });
  } catch (err) {
    live.delete(key);
    setUpload(key, { phase: 'failed', message: createRefusal(err, file) });
    say(createRefusal(err, file), 'error');
    return;
  }
  const movieId = created.movie.id;
  setUpload(key, { movieId, phase: 'uploading' });
  if (job.cancelled) { await discard(movieId, created.upload.uploadId); return; }
  const up = created.upload;
  if (up.method === 'MULTIPART') {
    job.record = { movieId, userId: state.user.id, uploadId: up.uploadId, partBytes: up.partBytes, size: file.size, fileName: file.name,
      title, fileKey: fileKey(file), etags: {} };
    saveRecord(job.record);
    setUpload(key, { parts: up.parts.length, partsDone: 0 });
    await sendParts(key, job, up.parts);
  } else {
    await sendWhole(key, job, up);
  }
}

async function resume(key, file) {
  const u = (state.uploads || []).find((x) => x.key === key);
  const record = records().find((r) => r.movieId === u.movieId);
  if (!record) return;
  const job = { xhrs: new Set(), cancelled: false, file, record };
  live.set(key, job);
  setUpload(key, { phase: 'uploading', message: '' });
  const count = Math.ceil(record.size / record.partBytes);
  const missing = [];
  for (let n = 1; n <= count; n++) if (!record.etags[n]) missing.push(n);
  try {
    if (missing.length) {
      const fresh = await api('POST', moviePath(record.movieId) + '/upload/parts', { body: { uploadId: record.uploadId, partNumbers: missing } });
      await sendParts(key, job, fresh.parts);
    } else {
      await sendParts(key, job, []);
    }
  } catch (err) {
    stopped(key, job, err);
  }
}

// createRefusal words a refused POST /movies for the person adding it.
function createRefusal(err, file) {
  if (!(err instanceof APIError)) return errorText(err);
  const d = err.problem.detail || '';
  if (err.status === 413) return file.name + ' is too large to add: ' + d;
  if (err.status === 415) return file.name + ' is not a video type the tracer reads.';
  if (err.code === CODE.INVALID_INPUT) return file.name + ' cannot be added: ' + d;
  return errorText(err);
}

// put sends body to url with XMLHttpRequest (fetch reports no upload
// progress) and resolves with the answer's ETag.
function put(job, url, body, headers, onProgress) {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    job.xhrs.add(x);
    x.open('PUT', url);
    for (const [k, v] of Object.entries(headers || {})) x.setRequestHeader(k, v);
    x.upload.onprogress = (e) => onProgress(e.loaded);
    const done = () => job.xhrs.delete(x);
    x.onload = () => {
      done();
      if (x.status >= 200 && x.status < 300) resolve(x.getResponseHeader('ETag') || '');
      else reject(Object.assign(new Error('storage answered ' + x.status), { status: x.status }));
    };
    x.onerror = () => { done(); reject(new Error('network')); };
    x.onabort = () => { done(); reject(Object.assign(new Error('cancelled'), { cancelled: true })); };
    x.send(body);
  });
}

async function sendWhole(key, job, up) {
  try {
    await put(job, up.url, job.file, up.headers, (n) => progress(key, n));
  } catch (err) {
    stopped(key, job, err);
    return;
  }
  progress(key, job.file.size, true);
  arrived(key, job);
}

async function sendParts(key, job, urls) {
  const r = job.record;
  const inFlight = new Map(); // part number -> bytes sent of it
  const doneBytes = () => {
    let n = 0;
    for (const p of Object.keys(r.etags)) n += partSize(r, Number(p));
    for (const b of inFlight.values()) n += b;
    return n;
  };
  const queue = urls.slice().sort((a, b) => a.partNumber - b.partNumber);
  const byNumber = new Map(queue.map((p) => [p.partNumber, p.url]));
  async function sendOne(n) {
    const from = (n - 1) * r.partBytes;
    const blob = job.file.slice(from, from + partSize(r, n));
    for (let attempt = 1; ; attempt++) {
      try {
        inFlight.set(n, 0);
        const etag = await put(job, byNumber.get(n), blob, { 'Content-Type': 'application/octet-stream' }, (b) => {
          inFlight.set(n, b); progress(key, doneBytes());
        });
        inFlight.delete(n);
        if (!etag) throw new Error('no ETag: the storage does not expose it to the page (CORS)');
        r.etags[n] = etag;
        saveRecord(r);
        setUpload(key, { partsDone: Object.keys(r.etags).length, sent: doneBytes() });
        return;
      } catch (err) {
        inFlight.delete(n);
        if (err.cancelled || job.cancelled || attempt >= RETRIES) throw err;
        if (err.status === 403) { // the URL expired: sign it again
          const fresh = await api('POST', moviePath(r.movieId) + '/upload/parts', { body: { uploadId: r.uploadId, partNumbers: [n] } });
          byNumber.set(n, fresh.parts[0].url);
        }
      }
    }
  }
  try {
    const workers = [];
    for (let w = 0; w < PARALLEL_PARTS; w++) {
      workers.push((async () => { while (queue.length && !job.cancelled) await sendOne(queue.shift().partNumber); })());
    }
    await Promise.all(workers);
    if (job.cancelled) return;
    const count = Math.ceil(r.size / r.partBytes);
    const parts = [];
    for (let n = 1; n <= count; n++) parts.push({ partNumber: n, etag: r.etags[n] });
    setUpload(key, { phase: 'completing' });
    await api('POST', moviePath(r.movieId) + '/upload/complete', { body: { uploadId: r.uploadId, parts } });
  } catch (err) {
    stopped(key, job, err);
    return;
  }
  dropRecord(r.movieId);
  progress(key, r.size, true);
  arrived(key, job);
}

const partSize = (r, n) => Math.min(r.partBytes, r.size - (n - 1) * r.partBytes);

function arrived(key, job) {
  live.delete(key);
  setUpload(key, { phase: 'sent', sent: job.file.size });
  say(job.file.name + ' is uploaded; its frames are being prepared.');
}

// stopped: a transfer failed (or was cancelled). A multipart upload can be
// resumed by choosing the file again; one PUT starts over.
function stopped(key, job, err) {
  for (const x of job.xhrs) x.abort();
  live.delete(key);
  if (job.cancelled || err.cancelled) return;
  const resumable = !!job.record;
  const message = (err instanceof APIError ? errorText(err) : 'The upload stopped (' + err.message + ').') +
    (resumable ? ' Choose the same file again to resume it.' : '');
  setUpload(key, { phase: resumable ? 'interrupted' : 'failed', message });
  say(message, 'error');
}

// cancelUpload stops an upload and removes its movie (a cancelled upload
// leaves nothing in anyone's list); an interrupted one is discarded alike.
export async function cancelUpload(key) {
  const u = (state.uploads || []).find((x) => x.key === key);
  if (!u) return;
  const job = live.get(key);
  if (job) { job.cancelled = true; for (const x of job.xhrs) x.abort(); live.delete(key); }
  setUpload(key, { phase: 'cancelling' });
  const rec = records().find((r) => r.movieId === u.movieId);
  if (u.movieId) await discard(u.movieId, rec ? rec.uploadId : (job && job.record && job.record.uploadId));
  commit({ uploads: (state.uploads || []).filter((x) => x.key !== key) });
  say('The upload of ' + u.fileName + ' was cancelled; nothing was added.');
}

async function discard(movieId, uploadId) {
  try {
    if (uploadId) await api('POST', moviePath(movieId) + '/upload/abort', { body: { uploadId } });
  } catch { /* the lifecycle rule aborts it */ }
  try {
    await api('DELETE', moviePath(movieId));
  } catch (err) {
    if (!(err instanceof APIError && err.code === CODE.NOT_FOUND)) say(errorText(err), 'error');
  }
  dropRecord(movieId);
}

// dismissUpload removes a finished or failed row from the panel.
export function dismissUpload(key) {
  commit({ uploads: (state.uploads || []).filter((x) => x.key !== key) });
}
