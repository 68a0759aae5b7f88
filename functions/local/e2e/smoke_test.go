package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/local/oidcprovider"
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
