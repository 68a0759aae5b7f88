// Frames decoded in the browser from the movie's rendition: the chunk that
// holds a frame (GET /movies/{id}/chunks/{k} as JSON gives its URL; the MP4
// is fetched from the bucket without the page's identity) is read by
// web/mp4.js and the GOP that shows the frame is decoded by WebCodecs'
// VideoDecoder. A chunk's frame i is frame k * chunkFrames + i, the frame
// the server's JPEG and the tracer show (the same H.264 samples, decoded by
// another decoder of the same standard: docs/media.md, "Viewer: frames
// decoded in the browser").
//
// A GOP decodes on its own (it starts with a key frame and the decoder is
// flushed after it), so a jump decodes at most one GOP (20 frames of an
// encoded movie) and a step onto a frame of a decoded GOP costs nothing.
// Every frame a GOP's decode outputs is offered to the sinks that want it;
// the others are closed at once.
'use strict';

import { api, moviePath } from '../api.js';
import { parseChunk, gopOf, MP4Error } from '../mp4.js';

const KEEP_CHUNKS = 4;   // fetched chunks kept (~2 MB each at 1080p)
const KEEP_DECODERS = 2; // configured decoders kept (one per chunk)
const TICKS = 1000;      // timestamp units (µs) per frame: a frame's timestamp is its rank in its chunk

const fetched = new Map();  // movieId/k -> Promise<parsed chunk>
const decoders = new Map(); // movieId/k -> { decoder, sinks: Set, k, movieId, chunkFrames }
const running = new Map();  // movieId/k/gop -> { done: Promise, sinks: Set }
const broken = new Set();   // movie IDs whose chunks could not be decoded here
const FAILURES = 3;         // chunk fetches failing in a row before the page uses the server's images
const failures = new Map(); // movie ID -> chunk fetches failed in a row
const supported = new Map(); // codec -> Promise<boolean>

// usable: frames of movie m can be decoded here (WebCodecs, a rendition in
// chunks, and no earlier failure for it).
export function usable(m) {
  return typeof VideoDecoder === 'function' && !!m && !!m.video && m.video.chunkFrames > 0 && !broken.has(m.id);
}

// forget drops every chunk and decoder (another movie is open).
export function forget() {
  for (const d of decoders.values()) closeDecoder(d);
  decoders.clear();
  fetched.clear();
  running.clear();
}

function closeDecoder(d) {
  try { d.decoder.close(); } catch { /* already closed */ }
}

function touch(map, key, value) {
  map.delete(key);
  map.set(key, value);
}

async function fetchChunk(m, k) {
  const key = m.id + '/' + k;
  let p = fetched.get(key);
  if (!p) {
    p = (async () => {
      const c = await api('GET', moviePath(m.id) + '/chunks/' + k);
      const res = await fetch(c.url, { credentials: 'omit', cache: 'default' });
      if (!res.ok) throw new Error('chunk ' + k + ': the bucket answered ' + res.status);
      return parseChunk(await res.arrayBuffer());
    })();
    p.catch(() => { if (fetched.get(key) === p) fetched.delete(key); });
  }
  touch(fetched, key, p);
  while (fetched.size > KEEP_CHUNKS) fetched.delete(fetched.keys().next().value);
  return p;
}

async function decoderFor(m, k, chunk) {
  const key = m.id + '/' + k;
  const have = decoders.get(key);
  if (have) { touch(decoders, key, have); return have; }
  if (!supported.has(chunk.codec)) {
    supported.set(chunk.codec, VideoDecoder.isConfigSupported({ codec: chunk.codec, description: chunk.description })
      .then((r) => r.supported, () => false));
  }
  if (!(await supported.get(chunk.codec))) throw new MP4Error('this browser cannot decode ' + chunk.codec);
  const d = { sinks: new Set(), k, movieId: m.id, chunkFrames: m.video.chunkFrames };
  d.decoder = new VideoDecoder({
    output: (frame) => offer(d, frame),
    error: (err) => {
      if (decoders.get(key) === d) decoders.delete(key);
      // A decoder the browser reclaimed (a hidden tab) is made again when
      // needed; any other error sends the page back to the server's images.
      if (err.name !== 'QuotaExceededError') broken.add(m.id);
    },
  });
  d.decoder.configure({ codec: chunk.codec, description: chunk.description, codedWidth: chunk.width, codedHeight: chunk.height, optimizeForLatency: true });
  decoders.set(key, d);
  while (decoders.size > KEEP_DECODERS) {
    const [oldKey, old] = decoders.entries().next().value;
    decoders.delete(oldKey);
    closeDecoder(old);
  }
  return d;
}

// offer gives a clone of a decoded frame to each GOP run on this decoder
// that wants it (deliver shares it among the run's sinks) and closes it.
function offer(d, frame) {
  const n = d.k * d.chunkFrames + Math.round(frame.timestamp / TICKS);
  for (const sink of d.sinks) {
    if (sink.wants(n)) sink.take(n, frame.clone());
  }
  frame.close();
}

// decodeGOP decodes the GOP of movie m that shows frame n, offering its
// frames to sink ({ wants(n), take(n, VideoFrame) }: take owns the frame).
// A GOP already being decoded is not decoded twice: the sink joins it.
// Resolves when the GOP is decoded; rejects with an MP4Error when this
// browser cannot decode the movie (and usable(m) is false from then on), or
// another error when the chunk could not be fetched.
export async function decodeGOP(m, n, sink) {
  const cf = m.video.chunkFrames;
  const k = Math.floor(n / cf);
  let chunk;
  try {
    chunk = await fetchChunk(m, k);
    failures.delete(m.id);
  } catch (err) {
    // A chunk the reader refuses, or chunks that do not arrive again and
    // again (a bucket this origin may not fetch from: a CSP or CORS rule):
    // the server's images instead.
    const inARow = (failures.get(m.id) || 0) + 1;
    failures.set(m.id, inARow);
    if (err instanceof MP4Error || inARow >= FAILURES) broken.add(m.id);
    throw err;
  }
  const g = gopOf(chunk, n - k * cf);
  if (!g) { broken.add(m.id); throw new MP4Error('chunk ' + k + ' has no frame ' + (n - k * cf)); }
  const runKey = m.id + '/' + k + '/' + g.from;
  const run = running.get(runKey);
  if (run) {
    run.sinks.add(sink);
    return run.done;
  }
  let d;
  try {
    d = await decoderFor(m, k, chunk);
  } catch (err) {
    if (err instanceof MP4Error) broken.add(m.id);
    throw err;
  }
  const sinks = new Set([sink]);
  const proxy = { wants: (f) => [...sinks].some((s) => s.wants(f)), take: (f, frame) => deliver(sinks, f, frame) };
  d.sinks.add(proxy);
  const done = (async () => {
    try {
      for (let s = g.from; s < g.to; s++) {
        const x = chunk.samples[s];
        d.decoder.decode(new EncodedVideoChunk({ type: s === g.from ? 'key' : 'delta', timestamp: x.rank * TICKS,
          data: new Uint8Array(chunk.buf, x.offset, x.size) }));
      }
      await d.decoder.flush();
    } finally {
      d.sinks.delete(proxy);
      running.delete(runKey);
    }
    if (broken.has(m.id)) throw new MP4Error('the browser could not decode chunk ' + k);
  })();
  running.set(runKey, { done, sinks });
  return done;
}

function deliver(sinks, n, frame) {
  let owner = true;
  for (const s of sinks) {
    if (!s.wants(n)) continue;
    s.take(n, owner ? frame : frame.clone());
    owner = false;
  }
  if (owner) frame.close();
}

// decodeFrame: frame n of movie m as a VideoFrame (the caller closes it).
export async function decodeFrame(m, n) {
  let got = null;
  await decodeGOP(m, n, { wants: (f) => f === n && !got, take: (f, frame) => { got = frame; } });
  if (!got) throw new MP4Error('frame ' + n + ' was not decoded');
  return got;
}

// shrink: an ImageBitmap of frame at width x height, made by a worker
// (views/shrinker.js) so the conversion does not hold up the main thread;
// frame is transferred to it (closed here either way). Without workers, made
// here.
let worker;
const shrinking = new Map(); // id -> { resolve, reject }
let lastID = 0;
export function shrink(frame, width, height) {
  if (worker === undefined) {
    try {
      worker = new Worker(new URL('./shrinker.js', import.meta.url));
      worker.onmessage = (e) => {
        const p = shrinking.get(e.data.id);
        shrinking.delete(e.data.id);
        if (p && e.data.bmp) p.resolve(e.data.bmp); else if (p) p.reject(new Error(e.data.error));
      };
      // A worker that cannot start (its script refused): the page shrinks
      // on its main thread from then on.
      worker.onerror = () => {
        worker = null;
        for (const p of shrinking.values()) p.reject(new Error('the shrinking worker stopped'));
        shrinking.clear();
      };
    } catch {
      worker = null;
    }
  }
  if (!worker) {
    return createImageBitmap(frame, { resizeWidth: width, resizeHeight: height, resizeQuality: 'low' }).finally(() => frame.close());
  }
  return new Promise((resolve, reject) => {
    const id = ++lastID;
    shrinking.set(id, { resolve, reject });
    worker.postMessage({ id, frame, width, height }, [frame]);
  });
}
