// Package authconfig is the page's sign-in settings, auth-config.json: the
// one code that writes them, for the deployed stack (infra/stack deploys the
// file next to the page) and for the local stack (which serves it), so the
// page is tested with settings of the deployed shape.
package authconfig

import "strings"

// File is the settings' file name next to the page; Path where the page
// reads it.
const (
	File = "auth-config.json"
	Path = "/" + File
)

// Scopes the page asks for: profile for the name claim.
var Scopes = []string{"openid", "email", "profile"}

// Config tells the page's sign-in module which OIDC provider and client to
// use. Mode "oidc" signs in; mode "dev" (a local stack without a provider)
// leaves the page on the development identity.
type Config struct {
	Mode      string `json:"mode"`
	Authority string `json:"authority,omitempty"`
	ClientID  string `json:"clientId,omitempty"`
	Scope     string `json:"scope,omitempty"`
	// LogoutURL is the provider's logout endpoint with client_id; the page
	// adds logout_uri (Cognito's /logout).
	LogoutURL string `json:"logoutUrl,omitempty"`
}

// OIDC is the settings for an issuer (the authority, whose discovery
// document the page fetches), a public client and, when the provider has
// one, its logout URL.
func OIDC(issuer, clientID, logoutURL string) Config {
	return Config{Mode: "oidc", Authority: issuer, ClientID: clientID, Scope: strings.Join(Scopes, " "), LogoutURL: logoutURL}
}

// Dev is the settings of a stack without sign-in.
func Dev() Config { return Config{Mode: "dev"} }

// CognitoLogoutURL is Cognito's logout endpoint on a managed login domain
// (https://<prefix>.auth.<region>.amazoncognito.com) for a client. The
// local stack's deployment-shaped provider serves the same path. The client
// ID is not escaped: Cognito's are alphanumeric, and the stack passes a
// CloudFormation token, which escaping would break.
func CognitoLogoutURL(loginBaseURL, clientID string) string {
	return strings.TrimSuffix(loginBaseURL, "/") + "/logout?client_id=" + clientID
}

// Map is the settings as the JSON object the stack deploys.
func (c Config) Map() map[string]any {
	m := map[string]any{"mode": c.Mode}
	for k, v := range map[string]string{"authority": c.Authority, "clientId": c.ClientID, "scope": c.Scope, "logoutUrl": c.LogoutURL} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}
