package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/movietrace/tracinglocks/domain"
	"github.com/movietrace/tracinglocks/functions/envvar"
)

// Authenticator says who sent a request. It returns an error with code
// CodeUnauthenticated when the request carries no usable identity.
type Authenticator interface {
	Authenticate(r *http.Request) (domain.User, error)
	// Name is logged once at startup ("jwt-claims" or "dev-header").
	Name() string
}

// Environment variables the authenticator choice reads.
const (
	EnvDevAuth            = envvar.DevAuth
	EnvLambdaFunctionName = envvar.LambdaFunctionName
	EnvLambdaRuntimeAPI   = envvar.LambdaRuntimeAPI
)

// Headers of the development identity (local stack only).
const (
	HeaderDevUser     = "X-Dev-User"
	HeaderDevUserName = "X-Dev-User-Name"
)

// InLambda reports whether the process runs inside AWS Lambda: the runtime
// always sets both variables, and a process outside Lambda has no reason to.
func InLambda(getenv func(string) string) bool {
	return getenv(EnvLambdaFunctionName) != "" || getenv(EnvLambdaRuntimeAPI) != ""
}

// ChooseAuthenticator decides at startup how requests are authenticated:
//
//   - inside Lambda, always from the HTTP API JWT authorizer's claims; if
//     DEV_AUTH is set there at all, startup fails, so the development
//     identity can never be switched on in AWS by configuration;
//   - outside Lambda, from the X-Dev-User headers when DEV_AUTH=1, otherwise
//     from JWT claims too (which only the Lambda adapter supplies, so every
//     request is 401: the safe default).
func ChooseAuthenticator(getenv func(string) string) (Authenticator, error) {
	dev := getenv(EnvDevAuth)
	if InLambda(getenv) {
		if dev != "" {
			return nil, fmt.Errorf("httpapi: %s=%q is set inside Lambda: the development identity is only for the local stack", EnvDevAuth, dev)
		}
		return ClaimsAuthenticator{}, nil
	}
	switch dev {
	case "", "0":
		return ClaimsAuthenticator{}, nil
	case "1":
		return devHeaderAuthenticator{}, nil
	default:
		return nil, fmt.Errorf("httpapi: %s=%q: want 1 or unset", EnvDevAuth, dev)
	}
}

func unauthenticated(msg string) error {
	return &domain.Error{Code: CodeUnauthenticated, Message: msg}
}

// ClaimsAuthenticator reads the user from the JWT authorizer's claims in the
// request context that httpadapter.NewV2(...).ProxyWithContext attaches:
// `sub` is the user ID and `name` (else `email`, else `username` /
// `cognito:username`) the display name. Nothing is read from headers: the
// adapter's non-context variant puts the gateway context in a header a
// client could forge, which is why only the context is trusted.
type ClaimsAuthenticator struct{}

func (ClaimsAuthenticator) Name() string { return "jwt-claims" }

func (ClaimsAuthenticator) Authenticate(r *http.Request) (domain.User, error) {
	rc, ok := core.GetAPIGatewayV2ContextFromContext(r.Context())
	if !ok || rc.Authorizer == nil || rc.Authorizer.JWT == nil {
		return domain.User{}, unauthenticated("no authenticated identity")
	}
	return UserFromClaims(rc.Authorizer.JWT.Claims)
}

// UserFromClaims is the user a validated token's claims name, as the JWT
// authorizer passes them (string values): `sub` is the user ID and `name`
// (else `email`, else `username` / `cognito:username`) the display name.
// It is the one mapping from claims to a user, for the Lambda (claims from
// API Gateway) and the local stack (claims from a JWT it validated itself).
func UserFromClaims(claims map[string]string) (domain.User, error) {
	sub := claims["sub"]
	if sub == "" || len(sub) > maxUserField || !printable(sub) {
		return domain.User{}, unauthenticated("the token has no usable sub claim")
	}
	var name string
	for _, k := range []string{"name", "email", "username", "cognito:username"} {
		if v := cleanName(claims[k]); v != "" {
			name = v
			break
		}
	}
	if name == "" {
		return domain.User{}, unauthenticated("the token has no name or email claim")
	}
	return domain.User{ID: sub, Name: name}, nil
}

// devHeaderAuthenticator trusts X-Dev-User (ID) and X-Dev-User-Name
// (display name, defaulting to the ID). Only ChooseAuthenticator creates it,
// and never inside Lambda.
type devHeaderAuthenticator struct{}

func (devHeaderAuthenticator) Name() string { return "dev-header" }

func (devHeaderAuthenticator) Authenticate(r *http.Request) (domain.User, error) {
	id := r.Header.Get(HeaderDevUser)
	if id == "" || len(id) > maxUserField || !printable(id) {
		return domain.User{}, unauthenticated("no development identity (" + HeaderDevUser + ")")
	}
	name := cleanName(r.Header.Get(HeaderDevUserName))
	if name == "" {
		name = id
	}
	return domain.User{ID: id, Name: name}, nil
}

// maxUserField is the domain's bound on user IDs and names.
const maxUserField = 128

// cleanName makes a display name safe to store and show: printable, single
// spaces, at most maxUserField bytes of whole runes.
func cleanName(s string) string {
	if !utf8.ValidString(s) {
		return ""
	}
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }), " ")
	for len(s) > maxUserField {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
