package e2e

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/movietrace/tracinglocks/functions/local/stack"
)

// apiText GETs path from st as Alice and returns the body.
func apiText(t *testing.T, st *stack.Stack, path string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", st.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+idToken(t, st, "alice"))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v: %s", path, res.StatusCode, err, b)
	}
	return string(b)
}

// TestCalibratedSpeedOnThePlot (issue 26): on the real zebrafish sample
// (320 x 240 pixels, 24 fps), Dana calibrates a line of 256 pixels as 10 mm
// and puts the origin near the bottom-left corner, traces, clicks the speed
// plot at a frame, and the speed the plot's readout shows there equals the
// hand calculation from the exported CSV: the central difference of the
// calibrated positions of the frames before and after it.
func TestCalibratedSpeedOnThePlot(t *testing.T) {
	out := outputDir(t)
	st := startStackWith(t, out, func(o *stack.Options) { o.Movies = nil; o.FailAt = map[string]int{} })
	const id = "zebrafish-larva"
	b := newTabs(t, out, "dana")[0]
	signIn(b, st.URL, "Dana")
	b.do("open the clip", chromedp.Click(chromedp.CSS(`[data-testid="analyze-`+id+`"]`)))
	b.waitJS("Dana edits", banner+`.dataset.mode === 'edit'`)

	b.do("open the calibration", chromedp.Click(chromedp.CSS("#calibration-details summary")))
	for id, v := range map[string]string{"cal-x1": "32", "cal-y1": "120", "cal-x2": "288", "cal-y2": "120", "cal-length": "10", "cal-ox": "32", "cal-oy": "200"} {
		b.typeInto(id, v)
	}
	b.do("choose millimetres", chromedp.SetValue(chromedp.ID("cal-unit"), "mm"))
	b.do("save the calibration", chromedp.Click(chromedp.ID("cal-save")))
	b.waitJS("calibrated", `document.querySelector('#cal-status').dataset.calibrated === 'yes'`)
	if s := b.str(`document.querySelector('#cal-status').textContent`); !strings.Contains(s, "10 mm") || !strings.Contains(s, "0.03906 mm per pixel") {
		t.Fatalf("calibration status %q", s)
	}

	b.do("start the trace", chromedp.Click(chromedp.ID("start-trace")))
	b.waitJS("the plots are drawn", `document.querySelector('#movie-status').dataset.status === 'traced' && document.querySelectorAll('#plots svg').length === 3`)
	b.shot("01-plots")
	b.waitJS("the history lists the calibration", `[...document.querySelectorAll('#history [data-type="calibrated"]')].some((e) => e.textContent.includes('= 10 mm'))`)

	// The exported CSV: find a frame whose neighbours are both known.
	body := apiText(t, st, "/movies/"+id+"/results?format=csv")
	cr := csv.NewReader(strings.NewReader(body))
	cr.Comment = '#'
	rows, err := cr.ReadAll()
	if err != nil || len(rows) < 10 {
		t.Fatalf("results CSV: %v, %d rows", err, len(rows))
	}
	if !strings.Contains(body, "# unit: mm\n") {
		t.Fatalf("the CSV is not in mm: %.600s", body)
	}
	// The wide CSV of the traced sample (one marker: one row per frame)
	// holds the long one's values, read with encoding/csv and with Python's
	// csv module.
	wideBody := apiText(t, st, "/movies/"+id+"/results?format=csv&layout=wide")
	wr := csv.NewReader(strings.NewReader(wideBody))
	wr.Comment = '#'
	wide, err := wr.ReadAll()
	if err != nil || len(wide) != len(rows) || wide[0][2] != "m1.x" {
		t.Fatalf("wide CSV: %v, %d rows (long %d), header %v", err, len(wide), len(rows), wide[0])
	}
	for i := 1; i < len(rows); i++ {
		if want := append(append([]string{}, rows[i][:2]...), rows[i][4:]...); strings.Join(wide[i], ",") != strings.Join(want, ",") {
			t.Fatalf("wide row %d %v, long %v", i, wide[i], rows[i])
		}
	}
	if py, err := exec.LookPath("python3"); err == nil {
		dir := t.TempDir()
		lp, wp := filepath.Join(dir, "long.csv"), filepath.Join(dir, "wide.csv")
		if err := os.WriteFile(lp, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(wp, []byte(wideBody), 0o600); err != nil {
			t.Fatal(err)
		}
		script := "import csv,sys\nr=lambda p:list(csv.reader(l for l in open(p,newline='') if not l.startswith('#')))\n" +
			"l,w=r(sys.argv[1]),r(sys.argv[2])\nassert len(l)==len(w)\nassert all(a[:2]+a[4:]==b for a,b in zip(l[1:],w[1:]))\nprint(len(w)-1)"
		if out, err := exec.Command(py, "-c", script, lp, wp).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != strconv.Itoa(len(rows)-1) {
			t.Fatalf("python3 csv: %v: %s", err, out)
		}
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	f := func(r []string, c string) float64 {
		v, err := strconv.ParseFloat(r[col[c]], 64)
		if err != nil {
			t.Fatalf("row %v column %s: %v", r, c, err)
		}
		return v
	}
	pick := -1
	for i := 20; i+1 < len(rows); i++ {
		if rows[i-1][col["lost"]] == "false" && rows[i][col["lost"]] == "false" && rows[i+1][col["lost"]] == "false" {
			pick = i
			break
		}
	}
	if pick < 0 {
		t.Fatal("no traced frame with known neighbours")
	}
	prev, row, next := rows[pick-1], rows[pick], rows[pick+1]
	dt := f(next, "time") - f(prev, "time")
	hand := math.Hypot((f(next, "x")-f(prev, "x"))/dt, (f(next, "y")-f(prev, "y"))/dt)
	frame := row[col["frame"]]

	// Click the speed plot where that frame's time is.
	click := fmt.Sprintf(`(() => { const g = document.querySelector('#plots svg[data-series="speed"]'); const r = g.getBoundingClientRect();
		const t0 = +g.dataset.t0, t1 = +g.dataset.t1, t = %s;
		return [r.left + (44 + (t - t0) / (t1 - t0) * (320 - 44 - 8)) * r.width / 320, r.top + r.height / 2]; })()`, row[col["time"]])
	b.do("scroll to the plots", chromedp.ScrollIntoView(chromedp.CSS(`#plots svg[data-series="speed"]`)))
	xy := eval[[]float64](b, click)
	b.do("click the speed plot at frame "+frame, chromedp.MouseClickXY(xy[0], xy[1]))
	b.waitJS("the slider went to frame "+frame, `document.querySelector('#frame-label').textContent === '`+frame+`' && document.querySelector('#plots-readout').dataset.frame === '`+frame+`'`)
	got := b.num(`+document.querySelector('#plots-readout').dataset.speed`)
	if math.Abs(got-hand) > 1e-9*math.Max(1, hand) {
		t.Fatalf("the plot says %v mm/s at frame %s, the hand calculation from the CSV %v mm/s", got, frame, hand)
	}
	text := b.str(`document.querySelector('#plots-readout').textContent`)
	if want := "speed " + strconv.FormatFloat(hand, 'g', 4, 64); !strings.Contains(text, want) {
		t.Fatalf("readout %q does not say %q", text, want)
	}
	t.Logf("frame %s: the plot says %.6g mm/s, the CSV by hand %.6g mm/s", frame, got, hand)
	b.checkAxe("02-calibrated-plots")
}
