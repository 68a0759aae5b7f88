package stack

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/movietrace/tracinglocks/functions/local/oidcprovider"
)

func getWith(t *testing.T, url string, header map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// With SignIn the API takes the local provider's ID tokens, and the
// development headers only with DevAuth.
func TestSignInStackAcceptsProviderTokensAndDevHeadersOnlyWhenEnabled(t *testing.T) {
	for _, devAuth := range []bool{false, true} {
		st := startTestStack(t, Options{SignIn: true, DevAuth: devAuth, NoSeed: true})
		if st.OIDC == nil {
			t.Fatal("no provider")
		}
		code, body := getWith(t, st.URL+strings.TrimPrefix(AuthConfigPath, "/"), nil)
		var cfg AuthConfig
		if err := json.Unmarshal(body, &cfg); code != http.StatusOK || err != nil {
			t.Fatalf("auth config: %d %s", code, body)
		}
		if cfg.Mode != "oidc" || cfg.Authority != st.OIDC.Issuer() || cfg.ClientID != st.OIDC.ClientID() ||
			!strings.HasPrefix(cfg.LogoutURL, st.URL+"oidc/logout?client_id=") || cfg.Scope != Scope {
			t.Errorf("auth config %+v", cfg)
		}
		tok, err := oidcprovider.SignIn(t.Context(), http.DefaultClient, cfg.Authority, cfg.ClientID, st.URL, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if code, body := getWith(t, st.URL+"movies", map[string]string{"Authorization": "Bearer " + tok.IDToken}); code != http.StatusOK {
			t.Errorf("devAuth=%v, ID token: %d %s", devAuth, code, body)
		}
		if code, _ := getWith(t, st.URL+"movies", map[string]string{"Authorization": "Bearer " + tok.IDToken + "x"}); code != http.StatusUnauthorized {
			t.Errorf("devAuth=%v, bad signature: %d, want 401", devAuth, code)
		}
		// A bad token is never rescued by development headers.
		if code, _ := getWith(t, st.URL+"movies", map[string]string{"Authorization": "Bearer x", "X-Dev-User": "dev-eve"}); code != http.StatusUnauthorized {
			t.Errorf("devAuth=%v, bad token plus dev headers: %d, want 401", devAuth, code)
		}
		want := http.StatusUnauthorized
		if devAuth {
			want = http.StatusOK
		}
		if code, _ := getWith(t, st.URL+"movies", map[string]string{"X-Dev-User": "dev-eve"}); code != want {
			t.Errorf("devAuth=%v, dev headers: %d, want %d", devAuth, code, want)
		}
		if code, _ := getWith(t, st.URL+"movies", nil); code != http.StatusUnauthorized {
			t.Errorf("devAuth=%v, nothing: %d, want 401", devAuth, code)
		}
	}
}

func TestStackWithoutSignInSaysDevMode(t *testing.T) {
	st := startTestStack(t, Options{NoSeed: true})
	code, body := getWith(t, st.URL+strings.TrimPrefix(AuthConfigPath, "/"), nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"mode":"dev"`) || st.OIDC != nil {
		t.Errorf("auth config without sign-in: %d %s", code, body)
	}
	if code, _ := getWith(t, st.URL+"oidc/.well-known/openid-configuration", nil); code == http.StatusOK {
		t.Errorf("a provider is served without SignIn")
	}
}
