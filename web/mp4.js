// Reads a chunk of a movie's rendition (an MP4 the media pipeline wrote:
// one H.264 video track) into what WebCodecs' VideoDecoder needs: the codec
// string and avcC description, and the samples in decode order with their
// presentation rank and whether each is a key frame.
//
// The chunk's frames are numbered as the server numbers them: frame i of a
// chunk is the i-th frame in presentation order (composition time; the
// decoder outputs them in that order), so sample s shows frame rank[s].
// A GOP is a run of samples that starts with a key frame and that no sample
// before it shows a frame after (a closed GOP): it decodes on its own, so a
// frame is reached by decoding its GOP only.
//
// Anything else (another codec, a missing table, a table that points out of
// the file, counts that disagree) is an MP4Error: the page then shows the
// server's JPEG of each frame instead.
'use strict';

export class MP4Error extends Error {}

const MAX_SAMPLES = 100000;

function fail(what) { throw new MP4Error('chunk: ' + what); }

// boxes lists the boxes of buf[from, to): { type, start (payload), end }.
function boxes(view, from, to) {
  const out = [];
  let at = from;
  while (at + 8 <= to) {
    let size = view.getUint32(at);
    const type = String.fromCharCode(view.getUint8(at + 4), view.getUint8(at + 5), view.getUint8(at + 6), view.getUint8(at + 7));
    let head = 8;
    if (size === 1) {
      if (at + 16 > to) fail('box ' + type + ' is cut');
      size = view.getUint32(at + 8) * 2 ** 32 + view.getUint32(at + 12);
      head = 16;
    } else if (size === 0) {
      size = to - at;
    }
    if (size < head || at + size > to) fail('box ' + type + ' of ' + size + ' bytes does not fit');
    out.push({ type, start: at + head, end: at + size });
    at += size;
  }
  return out;
}

function child(view, box, type) {
  const b = boxes(view, box.start, box.end).find((c) => c.type === type);
  if (!b) fail('no ' + type + ' box');
  return b;
}

// table reads a full box's entry count and checks that count entries of
// width bytes fit.
function table(view, box, skip, width) {
  const at = box.start + 4 + skip;
  if (at + 4 > box.end) fail('table is cut');
  const n = view.getUint32(at);
  if (n > MAX_SAMPLES * 4 || at + 4 + n * width > box.end) fail('table of ' + n + ' entries does not fit');
  return { n, at: at + 4 };
}

// parseChunk reads an MP4 chunk (an ArrayBuffer).
export function parseChunk(buf) {
  const view = new DataView(buf);
  const moov = boxes(view, 0, buf.byteLength).find((b) => b.type === 'moov');
  if (!moov) fail('no moov box');
  const trak = boxes(view, moov.start, moov.end).filter((b) => b.type === 'trak').find((t) => {
    const hdlr = child(view, child(view, t, 'mdia'), 'hdlr');
    return hdlr.start + 12 <= hdlr.end && view.getUint32(hdlr.start + 8) === 0x76696465; // 'vide'
  });
  if (!trak) fail('no video track');
  const stbl = child(view, child(view, child(view, trak, 'mdia'), 'minf'), 'stbl');

  // The sample entry: avc1/avc3 with its avcC.
  const stsd = child(view, stbl, 'stsd');
  const entries = boxes(view, stsd.start + 8, stsd.end);
  const entry = entries[0];
  if (!entry || (entry.type !== 'avc1' && entry.type !== 'avc3')) fail('the video is ' + (entry ? entry.type : 'not described') + ', not H.264');
  if (entry.start + 78 > entry.end) fail('sample entry is cut');
  const width = view.getUint16(entry.start + 24);
  const height = view.getUint16(entry.start + 26);
  const avcC = boxes(view, entry.start + 78, entry.end).find((b) => b.type === 'avcC');
  if (!avcC || avcC.end - avcC.start < 7) fail('no avcC box');
  const hex = (i) => view.getUint8(avcC.start + i).toString(16).padStart(2, '0');
  const codec = entry.type + '.' + hex(1) + hex(2) + hex(3);
  const description = new Uint8Array(buf.slice(avcC.start, avcC.end));

  // Sizes.
  const stsz = child(view, stbl, 'stsz');
  if (stsz.start + 12 > stsz.end) fail('stsz is cut');
  const fixed = view.getUint32(stsz.start + 4);
  const count = view.getUint32(stsz.start + 8);
  if (count === 0 || count > MAX_SAMPLES) fail(count + ' samples');
  if (!fixed && stsz.start + 12 + 4 * count > stsz.end) fail('stsz is cut');
  const size = (i) => (fixed || view.getUint32(stsz.start + 12 + 4 * i));

  // Offsets: chunks (stco/co64) of runs of samples (stsc).
  const kids = boxes(view, stbl.start, stbl.end);
  const co = kids.find((b) => b.type === 'stco' || b.type === 'co64');
  if (!co) fail('no stco box');
  const wide = co.type === 'co64';
  const stco = table(view, co, 0, wide ? 8 : 4);
  const chunkOffset = (c) => (wide ? view.getUint32(stco.at + 8 * c) * 2 ** 32 + view.getUint32(stco.at + 8 * c + 4) : view.getUint32(stco.at + 4 * c));
  const stsc = table(view, child(view, stbl, 'stsc'), 0, 12);
  const offsets = new Array(count);
  let s = 0;
  for (let e = 0; e < stsc.n && s < count; e++) {
    const first = view.getUint32(stsc.at + 12 * e) - 1;
    const per = view.getUint32(stsc.at + 12 * e + 4);
    const last = e + 1 < stsc.n ? view.getUint32(stsc.at + 12 * (e + 1)) - 1 : stco.n;
    if (first < 0 || last > stco.n || last < first || per === 0 || per > MAX_SAMPLES) fail('stsc entry ' + e);
    for (let c = first; c < last && s < count; c++) {
      let at = chunkOffset(c);
      for (let i = 0; i < per && s < count; i++, s++) {
        offsets[s] = at;
        at += size(s);
      }
    }
  }
  if (s !== count) fail('stsc places ' + s + ' of ' + count + ' samples');

  // Times: decode (stts) plus composition offsets (ctts).
  const stts = table(view, child(view, stbl, 'stts'), 0, 8);
  const cts = new Array(count);
  let t = 0;
  s = 0;
  for (let e = 0; e < stts.n && s < count; e++) {
    const n = view.getUint32(stts.at + 8 * e);
    const delta = view.getUint32(stts.at + 8 * e + 4);
    for (let i = 0; i < n && s < count; i++, s++, t += delta) cts[s] = t;
  }
  if (s !== count) fail('stts times ' + s + ' of ' + count + ' samples');
  const cttsBox = kids.find((b) => b.type === 'ctts');
  if (cttsBox) {
    const ctts = table(view, cttsBox, 0, 8);
    s = 0;
    for (let e = 0; e < ctts.n && s < count; e++) {
      const n = view.getUint32(ctts.at + 8 * e);
      const off = view.getInt32(ctts.at + 8 * e + 4);
      for (let i = 0; i < n && s < count; i++, s++) cts[s] += off;
    }
  }

  // Key frames (stss; none: every sample is one).
  const stssBox = kids.find((b) => b.type === 'stss');
  const key = new Array(count).fill(!stssBox);
  if (stssBox) {
    const stss = table(view, stssBox, 0, 4);
    for (let i = 0; i < stss.n; i++) {
      const k = view.getUint32(stss.at + 4 * i) - 1;
      if (k >= 0 && k < count) key[k] = true;
    }
  }

  // Presentation ranks, then closed GOPs.
  const order = [...cts.keys()].sort((a, b) => cts[a] - cts[b] || a - b);
  const rank = new Array(count);
  order.forEach((sample, r) => { rank[sample] = r; });
  const samples = [];
  for (let i = 0; i < count; i++) {
    if (offsets[i] + size(i) > buf.byteLength || size(i) === 0) fail('sample ' + i + ' lies outside the file');
    samples.push({ offset: offsets[i], size: size(i), rank: rank[i], key: key[i] });
  }
  if (!samples[0].key) fail('the chunk does not start with a key frame');
  // A GOP starts at a key frame that every sample before it shows an
  // earlier frame than (ranks 0..i-1 are exactly samples 0..i-1).
  const starts = [];
  let seenMax = -1;
  for (let i = 0; i < count; i++) {
    if (samples[i].key && seenMax === i - 1) starts.push(i);
    seenMax = Math.max(seenMax, samples[i].rank);
  }
  const gops = starts.map((from, i) => ({ from, to: i + 1 < starts.length ? starts[i + 1] : count }));
  return { codec, description, width, height, samples, gops, buf };
}

// gopOf: the GOP that shows frame rank r (its samples show ranks from..to-1:
// a closed GOP's ranks are its decode positions).
export function gopOf(chunk, r) {
  return chunk.gops.find((g) => r >= g.from && r < g.to);
}
