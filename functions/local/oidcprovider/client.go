package oidcprovider

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Tokens is a token endpoint response.
type Tokens struct {
	IDToken      string `json:"id_token"`
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int    `json:"expires_in"`
	TokenType    string `json:"token_type"`
}

// SignIn runs the authorization code flow with PKCE (S256) against the
// provider at issuer as a public client, choosing login on the sign-in
// page, the way the page does in a browser: for tests and tools without a
// browser. redirectURI only has to be a loopback URL: the code is read from
// the redirect, which is not followed.
func SignIn(ctx context.Context, client *http.Client, issuer, clientID, redirectURI, login string) (Tokens, error) {
	verifier := rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"client_id": {clientID}, "redirect_uri": {redirectURI}, "response_type": {"code"},
		"scope": {"openid profile email"}, "state": {rand.Text()},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"login": {login},
	}
	noFollow := *client
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, issuer+"/authorize?"+q.Encode(), nil)
	if err != nil {
		return Tokens{}, err
	}
	res, err := noFollow.Do(req)
	if err != nil {
		return Tokens{}, err
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	res.Body.Close()
	if res.StatusCode != http.StatusFound {
		return Tokens{}, fmt.Errorf("authorize: %s: %s", res.Status, body)
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		return Tokens{}, fmt.Errorf("authorize: redirect: %w", err)
	}
	if loc.Query().Get("state") != q.Get("state") {
		return Tokens{}, errors.New("authorize: the redirect's state is not ours")
	}
	code := loc.Query().Get("code")
	if code == "" {
		return Tokens{}, fmt.Errorf("authorize: no code in %s", loc.Redacted())
	}
	return token(ctx, client, issuer, url.Values{
		"grant_type": {"authorization_code"}, "client_id": {clientID}, "code": {code},
		"redirect_uri": {redirectURI}, "code_verifier": {verifier},
	})
}

// Refresh exchanges a refresh token for new tokens.
func Refresh(ctx context.Context, client *http.Client, issuer, clientID, refreshToken string) (Tokens, error) {
	return token(ctx, client, issuer, url.Values{
		"grant_type": {"refresh_token"}, "client_id": {clientID}, "refresh_token": {refreshToken},
	})
}

func token(ctx context.Context, client *http.Client, issuer string, form url.Values) (Tokens, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, issuer+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		return Tokens{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := client.Do(req)
	if err != nil {
		return Tokens{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return Tokens{}, err
	}
	if res.StatusCode != http.StatusOK {
		return Tokens{}, fmt.Errorf("token: %s: %s", res.Status, body)
	}
	var t Tokens
	if err := json.Unmarshal(body, &t); err != nil {
		return Tokens{}, fmt.Errorf("token: %w", err)
	}
	return t, nil
}
