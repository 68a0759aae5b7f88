package httpapi_test

import (
	"encoding/csv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
)

func withVideo(m *domain.Movie) {
	m.Video = &domain.Video{Width: 640, Height: 480, Codec: "h264", DurationSeconds: 10}
}

// calBody: the line across the middle half of a 640-pixel width (320 px)
// is length m long, origin in the middle, y up.
func calBody(length float64) map[string]any {
	return map[string]any{"frame": 0, "line": map[string]float64{"x1": 0.25, "y1": 0.5, "x2": 0.75, "y2": 0.5},
		"length": length, "unit": "m", "origin": map[string]float64{"x": 0.5, "y": 0.5}}
}

func (b *browser) calibrate(id string, body any) *response {
	b.a.t.Helper()
	return b.do("PUT", "/movies/"+id+"/calibration", body, b.withLease())
}

func closeTo(a *float64, b float64) bool {
	return a != nil && math.Abs(*a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

// readCSV parses a CSV download with Go's encoding/csv, "#" lines as
// comments, and returns the comment lines apart.
func readCSV(t *testing.T, body []byte) (comments []string, rows [][]string) {
	t.Helper()
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "# ") {
			comments = append(comments, strings.TrimPrefix(line, "# "))
		}
	}
	cr := csv.NewReader(strings.NewReader(string(body)))
	cr.Comment = '#'
	rows, err := cr.ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse: %v\n%s", err, body)
	}
	return comments, rows
}

// wideToLong turns the wide CSV's rows into the long CSV's rows: per frame,
// per marker with a point on it (a non-empty lost cell), frame, time, ID,
// label, then the marker's cells. Labels come from "marker: id = label".
func wideToLong(t *testing.T, comments []string, wide [][]string) [][]string {
	t.Helper()
	labels := map[string]string{}
	for _, c := range comments {
		if rest, ok := strings.CutPrefix(c, "marker: "); ok {
			id, label, _ := strings.Cut(rest, " = ")
			labels[id] = label
		}
	}
	header := wide[0]
	n := len(httpapi.WideColumns)
	var ids []string
	for i := 2; i < len(header); i += n {
		id, col, _ := strings.Cut(header[i], ".")
		if col != httpapi.WideColumns[0] {
			t.Fatalf("wide header %v: column %d is %q", header, i, header[i])
		}
		ids = append(ids, id)
	}
	byMarker := map[string][][]string{}
	for _, row := range wide[1:] {
		for k, id := range ids {
			cells := row[2+k*n : 2+(k+1)*n]
			if cells[2] == "" { // no point of this marker on this frame
				continue
			}
			byMarker[id] = append(byMarker[id], append([]string{row[0], row[1], id, labels[id]}, cells...))
		}
	}
	out := [][]string{httpapi.LongColumns}
	for _, id := range ids {
		out = append(out, byMarker[id]...)
	}
	return out
}

// pythonRoundTrip reads both CSVs with Python's csv module and requires the
// wide one, turned into long rows, to equal the long one.
const pythonRoundTrip = `
import csv, sys
def rows(path):
    with open(path, newline='') as f:
        lines = [l for l in f if not l.startswith('#')]
    with open(path, newline='') as f:
        labels = dict(l[len('# marker: '):].rstrip('\n').split(' = ', 1) for l in f if l.startswith('# marker: '))
    return list(csv.reader(lines)), labels
long, _ = rows(sys.argv[1])
wide, labels = rows(sys.argv[2])
n = int(sys.argv[3])
ids = [wide[0][i].split('.')[0] for i in range(2, len(wide[0]), n)]
out = {i: [] for i in ids}
for r in wide[1:]:
    for k, i in enumerate(ids):
        cells = r[2 + k * n: 2 + (k + 1) * n]
        if cells[2] != '':
            out[i].append([r[0], r[1], i, labels[i]] + cells)
got = [long[0]] + [row for i in ids for row in out[i]]
if got != long:
    sys.exit('wide and long differ: %r != %r' % (got[:3], long[:3]))
print(len(long) - 1, 'rows')
`

func TestCalibrationAndResults(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			a := newAPI(t, tr)
			id := a.createMovie(withVideo)
			al, bo := a.alice(), a.bob()
			al.open(id).want(201)

			// Only the lease holder calibrates.
			bo.do("PUT", "/movies/"+id+"/calibration", calBody(2)).problem(428, domain.CodeLeaseRequired)
			bo.do("PUT", "/movies/"+id+"/calibration", calBody(2), al.withLease()).problem(409, domain.CodeLeaseHeld)
			d := al.calibrate(id, calBody(2)).want(200).detail()
			if c := d.Calibration; c == nil || c.Unit != "m" || !c.YUp || c.UnitsPerPixel == nil || c.UnitsPerPixel.X != 2.0/320 || c.UnitsPerPixel.Y != 2.0/320 {
				t.Fatalf("calibration %+v", d.Calibration)
			}
			// The same calibration again writes nothing.
			if again := al.calibrate(id, calBody(2)).want(200).detail(); again.Version != d.Version {
				t.Fatalf("a repeated calibration wrote: version %d -> %d", d.Version, again.Version)
			}
			// Viewers see it.
			if seen := bo.get(id).want(200).detail(); seen.Calibration == nil || seen.Calibration.Length != 2 {
				t.Fatalf("the viewer sees calibration %+v", seen.Calibration)
			}

			// Trace: m1 moves 10 px right and 5 px up per frame (30 fps),
			// then is lost. 1/160 m per pixel: vx = 10/160*30 = 1.875 m/s,
			// vy = 5/160*30 = 0.9375 m/s (y up).
			al.trace(id, 0).want(202)
			var frames []domain.Frame
			for i := range 4 {
				frames = append(frames, domain.Frame{Index: i, Points: []domain.Point{{MarkerID: "m1", X: 0.5 + float64(i)*10/640, Y: 0.5 - float64(i)*5/480,
					PX: 320 + float64(i)*10, PY: 240 - float64(i)*5, Confidence: 0.9}}})
			}
			frames = append(frames, domain.Frame{Index: 4, Points: []domain.Point{{MarkerID: "m1", Lost: true, Confidence: 0.2}}})
			a.runJob(id, frames, true)
			traced := a.row(id)

			var res httpapi.Results
			bo.do("GET", "/movies/"+id+"/results", nil).want(200).decode(&res)
			if res.Coordinates.Unit != "m" || !res.Coordinates.Calibrated || res.Coordinates.Origin != (httpapi.PointXY{X: 0.5, Y: 0.5}) || len(res.Markers) != 1 {
				t.Fatalf("results header %+v, %d markers", res.Coordinates, len(res.Markers))
			}
			mk := res.Markers[0]
			s1 := mk.Samples[1]
			step := math.Hypot(10.0/160, 5.0/160)
			if mk.ID != "m1" || mk.Label != "tip" || len(mk.Samples) != 5 || !closeTo(s1.X, 10.0/160) || !closeTo(s1.Y, 5.0/160) ||
				!closeTo(s1.VX, 1.875) || !closeTo(s1.VY, 0.9375) || !closeTo(s1.Speed, math.Hypot(1.875, 0.9375)) || !closeTo(s1.Path, step) {
				t.Fatalf("marker %s %q, sample 1 %+v", mk.ID, mk.Label, s1)
			}
			if l := mk.Samples[4]; !l.Lost || l.X != nil || l.Speed != nil || l.Time != 4.0/30 {
				t.Fatalf("lost sample %+v", l)
			}
			if sm := mk.Summary; sm.Samples != 5 || sm.Lost != 1 || math.Abs(sm.Distance-3*step) > 1e-12 || math.Abs(sm.TimeLost-1.0/30) > 1e-12 ||
				math.Abs(sm.MaxSpeed-math.Hypot(1.875, 0.9375)) > 1e-9 {
				t.Fatalf("summary %+v", sm)
			}

			// CSV, long and wide; the wide one round-trips the long one,
			// with Go's encoding/csv and with Python's csv module.
			long := bo.do("GET", "/movies/"+id+"/results?format=csv", nil).want(200)
			wide := bo.do("GET", "/movies/"+id+"/results?format=csv&layout=wide", nil).want(200)
			lc, lrows := readCSV(t, long.body)
			wc, wrows := readCSV(t, wide.body)
			for _, want := range []string{"unit: m", "velocityUnit: m/s", "marker: m1 = tip"} {
				if !slices.Contains(lc, want) || !slices.Contains(wc, want) {
					t.Fatalf("CSV headers lack %q: %q / %q", want, lc, wc)
				}
			}
			if !slices.ContainsFunc(lc, func(s string) bool {
				return strings.HasPrefix(s, "calibration: line (0.25, 0.5)-(0.75, 0.5) on frame 0 = 2 m")
			}) ||
				!slices.ContainsFunc(lc, func(s string) bool { return strings.HasPrefix(s, "coordinates: calibrated; origin at (0.5, 0.5)") }) {
				t.Fatalf("CSV header lacks the calibration or the coordinate system: %q", lc)
			}
			if !slices.Equal(lrows[0], httpapi.LongColumns) || len(lrows) != 6 || len(wrows) != 6 || wrows[0][2] != "m1.x" {
				t.Fatalf("long %d rows %v, wide %d rows %v", len(lrows), lrows[0], len(wrows), wrows[0])
			}
			if got := wideToLong(t, wc, wrows); !slices.EqualFunc(got, lrows, slices.Equal) {
				t.Fatalf("the wide CSV does not round-trip the long one:\n%v\n%v", got, lrows)
			}
			if py, err := exec.LookPath("python3"); err == nil {
				dir := t.TempDir()
				lp, wp := filepath.Join(dir, "long.csv"), filepath.Join(dir, "wide.csv")
				if err := os.WriteFile(lp, long.body, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(wp, wide.body, 0o600); err != nil {
					t.Fatal(err)
				}
				out, err := exec.Command(py, "-c", pythonRoundTrip, lp, wp, "13").CombinedOutput()
				if err != nil || strings.TrimSpace(string(out)) != "5 rows" {
					t.Fatalf("python3 csv: %v: %s", err, out)
				}
			} else {
				t.Log("python3 not found: the Python csv check is skipped")
			}

			// Recalibrating changes every derived value and retraces nothing.
			// (The trace took the analysis lease over: open Analyze again.)
			al.open(id).want(201)
			al.calibrate(id, calBody(4)).want(200)
			var res2 httpapi.Results
			bo.do("GET", "/movies/"+id+"/results", nil).want(200).decode(&res2)
			if s := res2.Markers[0].Samples[1]; !closeTo(s.VX, 2*1.875) || !closeTo(s.X, 20.0/160) {
				t.Fatalf("after recalibrating to 4 m: %+v", s)
			}
			if after := a.row(id); after.CleanBefore != traced.CleanBefore || after.Status != domain.StatusTraced || after.LastJob.JobID != traced.LastJob.JobID {
				t.Fatalf("recalibrating touched the trace: %+v", after)
			}
			// A y-down system with the x axis at 90 degrees (pointing up):
			// x = up, y = 90 degrees clockwise of x = right.
			body := calBody(2)
			body["angle"], body["yUp"] = 90, false
			al.calibrate(id, body).want(200)
			bo.do("GET", "/movies/"+id+"/results", nil).want(200).decode(&res2)
			if s := res2.Markers[0].Samples[1]; !closeTo(s.X, 5.0/160) || !closeTo(s.Y, 10.0/160) {
				t.Fatalf("rotated axes: %+v", s)
			}

			// Cleared: pixels from the top-left corner, y down.
			if d := al.do("DELETE", "/movies/"+id+"/calibration", nil, al.withLease()).want(200).detail(); d.Calibration != nil {
				t.Fatalf("cleared calibration %+v", d.Calibration)
			}
			bo.do("GET", "/movies/"+id+"/results", nil).want(200).decode(&res2)
			if s := res2.Markers[0].Samples[1]; res2.Coordinates.Unit != "px" || !closeTo(s.X, 330) || !closeTo(s.Y, 235) || !closeTo(s.VY, -150) {
				t.Fatalf("uncalibrated: %s %+v", res2.Coordinates.Unit, s)
			}

			// A stale lease edits nothing.
			a.clock.Advance(leaseDuration + time.Second)
			al.calibrate(id, calBody(2)).problem(409, domain.CodeLeaseLost)
			bo.do("DELETE", "/movies/"+id+"/calibration", nil).problem(428, domain.CodeLeaseRequired)
		})
	}
}
