package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/local/oidcprovider"
	"github.com/movietrace/tracinglocks/functions/testkit/videotest"
	"github.com/movietrace/tracinglocks/functions/tools/smoke"
)

// TestSmokeWalkAgainstTheLocalStack runs `make smoke-deployed`'s walk
// (package smoke) against make run's stack with its local OIDC provider:
// sign in, list, Analyze, marker, trace, results, release, sign out.
func TestSmokeWalkAgainstTheLocalStack(t *testing.T) {
	if _, err := os.Stat(ChromiumPath); err != nil {
		t.Fatalf("%s not found (%v): .ci/run installs chromium", ChromiumPath, err)
	}
	out := outputDir(t)
	st := startSignInStack(t, out, 10*time.Minute)
	err := smoke.Walk(t.Context(), smoke.Options{
		URL: st.URL, Login: "alice", MovieID: movieID, Chromium: ChromiumPath, Out: out,
		StepTimeout: stepTimeout, TraceTimeout: 2 * time.Minute, Log: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The API's view, as Bob (a token from the same provider).
	tok, err := oidcprovider.SignIn(t.Context(), http.DefaultClient, st.OIDC.Issuer(), st.OIDC.ClientID(), st.URL, "bob")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, st.URL+"movies/"+movieID, nil)
	req.Header.Set("Authorization", "Bearer "+tok.IDToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m httpapi.MovieDetail
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /movies/%s: %s, %v", movieID, res.Status, err)
	}
	if m.Status != "traced" || m.Lock != nil || m.LastJob == nil || m.LastJob.UserName != "Alice" {
		t.Fatalf("after the walk: status %s, lock %+v, last job %+v; want traced by Alice and free", m.Status, m.Lock, m.LastJob)
	}
}

// TestSmokeWalkWithItsOwnMovieInTheDeployedShape runs `make
// smoke-deployed`'s walk as it runs against AWS (no movie named: it adds its
// own clip through the page, the file PUT from the browser under the
// template's CSP, traces it and deletes it) against the deployment-shaped
// stack; the lab's movie is left as it was.
func TestSmokeWalkWithItsOwnMovieInTheDeployedShape(t *testing.T) {
	out := outputDir(t)
	st := startDeployedShape(t, out, loadEdgeTemplate(t))
	clip := filepath.Join(t.TempDir(), "smoke.mp4")
	if err := videotest.Encode(t.Context(), clip, videotest.Options{Width: 160, Height: 120, FrameRate: 25, Frames: 40}, func(i int, g []byte) {
		for p := range g {
			x, y := p%160, p/160
			g[p] = byte((x*7 + y*13 + i*4) % 251) // texture moving right
		}
	}); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(clip)
	if err != nil {
		t.Fatal(err)
	}
	var own string
	err = smoke.Walk(t.Context(), smoke.Options{
		URL: st.URL, Login: "alice", Clip: body, Chromium: ChromiumPath, Out: out,
		StepTimeout: stepTimeout, TraceTimeout: 2 * time.Minute,
		Log: func(f string, a ...any) {
			t.Logf(f, a...)
			if strings.HasPrefix(f, "smoke:    own movie") && len(a) == 1 {
				own = fmt.Sprint(a[0])
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if own == "" {
		t.Fatal("the walk did not add its own movie")
	}
	tok, err := oidcprovider.SignIn(t.Context(), http.DefaultClient, st.OIDC.Issuer(), st.OIDC.ClientID(), st.URL, "bob")
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, httpapi.MovieDetail) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, st.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok.IDToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m httpapi.MovieDetail
		_ = json.NewDecoder(res.Body).Decode(&m)
		return res.StatusCode, m
	}
	if code, _ := get("movies/" + own); code != http.StatusNotFound {
		t.Errorf("the walk's own movie %s answers %d after the walk, want 404 (deleted)", own, code)
	}
	if code, m := get("movies/" + movieID); code != http.StatusOK || m.LastJob != nil || m.Lock != nil {
		t.Errorf("the lab's movie after the walk: %d, last job %+v, lock %+v; want untouched", code, m.LastJob, m.Lock)
	}
}
