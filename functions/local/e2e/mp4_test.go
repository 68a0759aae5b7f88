package e2e

import (
	"encoding/base64"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
	"github.com/movietrace/tracinglocks/web"
)

// TestChunkReaderRefusesGarbage: the page's MP4 chunk reader (web/mp4.js,
// what the page feeds WebCodecs with) reads a real H.264 MP4 (B-frames, a
// keyframe every 10 frames) into its samples, presentation ranks and closed
// GOPs, and refuses everything else with an MP4Error, never another
// exception and never a hang: empty, zeros, random bytes, text, the file cut
// at 64 places, and 3,000 copies with random bytes of its index changed
// (the page then shows the server's JPEGs instead).
func TestChunkReaderRefusesGarbage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chunk.mp4")
	if err := videotest.Encode(t.Context(), path, videotest.Options{Width: 64, Height: 48, FrameRate: 25, Frames: 30, Codec: videotest.H264,
		Extra: []string{"-g", "10", "-keyint_min", "10", "-sc_threshold", "0", "-bf", "2"}}, func(i int, g []byte) { videotest.DrawIndex(64, 48, i, g) }); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mp4, err := fs.ReadFile(web.Files(), "mp4.js")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mp4.js" {
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write(mp4)
			return
		}
		_, _ = w.Write([]byte("<!doctype html><title>mp4</title>"))
	}))
	defer srv.Close()
	b := newTabs(t, outputDir(t), "reader")[0]
	b.do("open a blank page", chromedp.Navigate(srv.URL))

	type parsed struct {
		Codec   string `json:"codec"`
		Samples int    `json:"samples"`
		Gops    [][2]int
		Ranks   bool `json:"ranks"` // the ranks are 0..samples-1
		Keys    int  `json:"keys"`
	}
	good := eval[parsed](b, `(async () => { const { parseChunk } = await import('/mp4.js');
		const bytes = Uint8Array.from(atob('`+base64.StdEncoding.EncodeToString(data)+`'), (c) => c.charCodeAt(0));
		const c = parseChunk(bytes.buffer);
		const ranks = c.samples.map((s) => s.rank).sort((a, b) => a - b);
		return { codec: c.codec, samples: c.samples.length, Gops: c.gops.map((g) => [g.from, g.to]),
			ranks: ranks.every((r, i) => r === i), keys: c.samples.filter((s) => s.key).length }; })()`)
	if good.Samples != 30 || !good.Ranks || good.Keys != 3 || len(good.Gops) != 3 || good.Gops[1] != [2]int{10, 20} || good.Codec[:5] != "avc1." {
		t.Fatalf("the reader read the MP4 as %+v; want 30 samples in 3 closed GOPs of 10, avc1", good)
	}

	// Garbage: every case must end in an MP4Error (or, for a changed byte
	// that the reader cannot tell, a parse whose samples lie in the file).
	type outcome struct {
		Refused int      `json:"refused"`
		Read    int      `json:"read"`
		Other   []string `json:"other"` // exceptions other than MP4Error
	}
	got := eval[outcome](b, `(async () => { const { parseChunk, MP4Error } = await import('/mp4.js');
		const good = Uint8Array.from(atob('`+base64.StdEncoding.EncodeToString(data)+`'), (c) => c.charCodeAt(0));
		let seed = 7; const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
		const cases = [new Uint8Array(0), new Uint8Array(4096), Uint8Array.from({ length: 65536 }, () => rnd() * 256),
			new TextEncoder().encode('this is not a movie, it is text named .mp4')];
		for (let i = 1; i <= 64; i++) cases.push(good.slice(0, Math.floor(good.length * i / 65)));
		const moov = good.length - 2000 > 0 ? good.length - 2000 : 0; // the index is at the end
		for (let i = 0; i < 3000; i++) {
			const c = good.slice();
			for (let j = 0, n = 1 + Math.floor(rnd() * 4); j < n; j++) c[moov + Math.floor(rnd() * (good.length - moov))] = rnd() * 256;
			cases.push(c);
		}
		const out = { refused: 0, read: 0, other: [] };
		for (const c of cases) {
			try {
				const p = parseChunk(c.buffer);
				if (p.samples.some((s) => s.offset + s.size > c.length)) out.other.push('a sample outside the file');
				out.read++;
			} catch (e) {
				if (e instanceof MP4Error) out.refused++; else out.other.push(String(e));
			}
		}
		return out; })()`)
	t.Logf("garbage: %d refused, %d read (a changed byte the reader cannot tell)", got.Refused, got.Read)
	if len(got.Other) > 0 || got.Refused < 68 {
		t.Fatalf("the reader threw %d other exceptions (first: %v) and refused %d cases", len(got.Other), got.Other[:min(3, len(got.Other))], got.Refused)
	}
}
