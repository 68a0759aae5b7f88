package stack

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/movietrace/tracinglocks/functions/internal/httpapi"
	"github.com/movietrace/tracinglocks/functions/internal/jwtauth"
	"github.com/movietrace/tracinglocks/functions/local/oidcprovider"
	"github.com/movietrace/tracinglocks/infra/edge"
	"github.com/movietrace/tracinglocks/web/authconfig"
)

// The deployed shape (Options.Edge): what differs from AWS is only what
// cannot run here (loopback http instead of https, the S3 emulator's origin
// instead of the bucket's regional endpoint), and each of those is mapped
// from the template's own values by package edge.
//
//   - The OIDC provider is on two origins, neither the page's: the issuer
//     (discovery, JWKS) on IssuerHost, the sign-in pages, token, userinfo
//     and /logout on LoginHost, as Cognito's issuer is on
//     cognito-idp.<region>.amazonaws.com and its managed login on
//     <prefix>.auth.<region>.amazoncognito.com.
//   - The page's auth-config.json is written by the same code as the
//     stack's (authconfig.OIDC with Cognito's logout URL).
//   - Every response of the page's origin carries the template's response
//     headers policy, replacing the handler's own (CloudFront's Override),
//     and only the template's API path patterns reach the API; every other
//     path is the page's files (the site bucket).
const (
	IssuerHost = "127.0.0.1"
	LoginHost  = "127.0.0.2"
)

// startDeployedSignIn serves the provider on its two origins and returns
// the JWT authenticator that trusts it.
func (s *Stack) startDeployedSignIn(opts Options) (httpapi.Authenticator, error) {
	issuerLn, err := net.Listen("tcp", IssuerHost+":0")
	if err != nil {
		return nil, fmt.Errorf("deployed shape: issuer: %w", err)
	}
	loginLn, err := net.Listen("tcp", LoginHost+":0")
	if err != nil {
		issuerLn.Close()
		return nil, fmt.Errorf("deployed shape: sign-in pages on %s: %w", LoginHost, err)
	}
	p, err := oidcprovider.New(oidcprovider.Options{
		BaseURL: "http://" + issuerLn.Addr().String(), LoginBaseURL: "http://" + loginLn.Addr().String(),
		TokenTTL: opts.SignInTokenTTL, Users: opts.SignInUsers,
	})
	if err != nil {
		issuerLn.Close()
		loginLn.Close()
		return nil, err
	}
	s.OIDC = p
	for _, ln := range []net.Listener{issuerLn, loginLn} {
		srv := &http.Server{Handler: hostGuard(p.Handler()), ReadHeaderTimeout: opts.ReadHeaderTimeout,
			ErrorLog: slog.NewLogLogger(opts.Log.Handler(), slog.LevelWarn)}
		s.signInServers = append(s.signInServers, srv)
		go func() { _ = srv.Serve(ln) }()
	}
	s.authConfig = authconfig.OIDC(p.Issuer(), p.ClientID(), authconfig.CognitoLogoutURL(p.LoginBaseURL(), p.ClientID()))
	return jwtauth.New(jwtauth.Options{Issuer: p.Issuer(), Audience: []string{p.ClientID()}})
}

// deployedShape is the page's origin as CloudFront serves it: the
// template's API path patterns to api, everything else to the page's files
// (page), every answer with the template's response headers.
func (s *Stack) deployedShape(e *edge.Edge, page *http.ServeMux, api http.Handler) (http.Handler, error) {
	headers, err := e.Headers(edge.Local{Issuer: s.OIDC.Issuer(), SignIn: s.OIDC.LoginBaseURL(), Storage: s.storageOrigin})
	if err != nil {
		return nil, err
	}
	s.EdgeHeaders = headers
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ow := &overrideWriter{ResponseWriter: w, headers: headers}
		if e.IsAPI(r.URL.Path) {
			api.ServeHTTP(ow, r)
			return
		}
		page.ServeHTTP(ow, r)
	}), nil
}

// overrideWriter sets headers on the response when it is written, replacing
// the handler's values (a response headers policy with Override).
type overrideWriter struct {
	http.ResponseWriter
	headers http.Header
	wrote   bool
}

func (o *overrideWriter) WriteHeader(code int) {
	if !o.wrote {
		o.wrote = true
		for k, v := range o.headers {
			o.ResponseWriter.Header()[k] = v
		}
	}
	o.ResponseWriter.WriteHeader(code)
}

func (o *overrideWriter) Write(b []byte) (int, error) {
	if !o.wrote {
		o.WriteHeader(http.StatusOK)
	}
	return o.ResponseWriter.Write(b)
}

func (o *overrideWriter) Unwrap() http.ResponseWriter { return o.ResponseWriter }
