package proof

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/movietrace/tracinglocks/functions/envvar"
)

// Result is the verdict on one history.
type Result struct {
	// Linearizable is porcupine's verdict: Ok, Illegal, or Unknown when the
	// checker ran out of time (which the suite counts as a failure).
	Linearizable porcupine.CheckResult
	Info         porcupine.LinearizationInfo
	// Violations are the invariant violations found without porcupine.
	Violations []string
	Stats      Stats
}

// OK reports whether the history passed every check.
func (r Result) OK() bool { return r.Linearizable == porcupine.Ok && len(r.Violations) == 0 }

// Check runs both checks on a history.
func Check(h *History, timeout time.Duration) Result {
	res, info := porcupine.CheckOperationsVerbose(Model(h.Initial, h.Base), Operations(h.Ops), timeout)
	v, st := Invariants(h)
	return Result{Linearizable: res, Info: info, Violations: v, Stats: st}
}

// Summary is one line describing a failed result.
func (r Result) Summary() string {
	var parts []string
	if r.Linearizable != porcupine.Ok {
		parts = append(parts, "porcupine: "+string(r.Linearizable))
	}
	if n := len(r.Violations); n > 0 {
		parts = append(parts, fmt.Sprintf("%d invariant violations, first: %s", n, r.Violations[0]))
	}
	return strings.Join(parts, "; ")
}

// WriteReport writes porcupine's visualization of a history to
// dir/name.html and the invariant violations and the whole history as text
// to dir/name.txt, and returns the HTML path.
func WriteReport(dir, name string, h *History, r Result) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	html := filepath.Join(dir, name+".html")
	if err := porcupine.VisualizePath(Model(h.Initial, h.Base), r.Info, html); err != nil {
		return "", fmt.Errorf("visualize: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, name+".txt"))
	if err != nil {
		return "", err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "movie %s, seed %d, %d browsers, %d workers, lease %s, length %s, skews %v\n",
		h.MovieID, h.Config.Seed, h.Config.Browsers, h.Config.Workers, h.Config.Lease, h.Config.Length, h.Config.Skews)
	fmt.Fprintf(w, "porcupine: %s\n", r.Linearizable)
	fmt.Fprintf(w, "invariant violations: %d\n", len(r.Violations))
	for _, v := range r.Violations {
		fmt.Fprintf(w, "  - %s\n", v)
	}
	fmt.Fprintf(w, "\ninitial: %s\nfinal:   %s\n\n", DescribeMovie(h.Initial, h.Base), DescribeMovie(h.Final, h.Base))
	for _, op := range h.Ops {
		fmt.Fprintf(w, "%5d c%d [%9.3fms, %9.3fms] %s → %s\n", op.ID, op.Client,
			float64(op.Start)/1e6, float64(op.End)/1e6, DescribeCall(op.Call, h.Base), describeOutcome(op.Out))
	}
	for _, s := range h.Frames {
		fmt.Fprintf(w, "stored frame %d job %s token %s\n", s.Frame, short(s.JobID), short(s.Token))
	}
	return html, errors.Join(w.Flush(), f.Close())
}

// OutputDir is where failing histories are written: $PROOF_OUTPUT, else
// testoutput/proof under the module root (git-ignored).
func OutputDir() string {
	if d := os.Getenv(envvar.ProofOutput); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Join("testoutput", "proof")
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "testoutput", "proof")
		}
		if filepath.Dir(d) == d {
			return filepath.Join(dir, "testoutput", "proof")
		}
	}
}

// AppendCounts appends one "proof-count key=value ..." line to the file
// named by $PROOF_COUNTS, if set; cmd/proofsum adds such lines up. kv
// alternates keys (strings) and values (integers).
func AppendCounts(kv ...any) error {
	path := os.Getenv(envvar.ProofCounts)
	if path == "" {
		return nil
	}
	if len(kv)%2 != 0 {
		return errors.New("proof: AppendCounts needs key/value pairs")
	}
	var b strings.Builder
	b.WriteString("proof-count")
	for i := 0; i < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%v", kv[i], kv[i+1])
	}
	b.WriteString("\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(b.String())
	return errors.Join(err, f.Close())
}
