// Package edge reads, from a synthesized CloudFormation template of the
// stack, what the browser meets in front of the page in AWS: the response
// headers CloudFront's response headers policy sets (CSP, HSTS, framing,
// sniffing, referrer), the paths the distribution sends to the HTTP API,
// the issuer the API trusts and the sign-in domain. The local stack's
// deployment-shaped mode serves the page with these very headers, with
// each deployed origin the CSP allows mapped onto its local stand-in (the
// issuer, the sign-in pages, the movies bucket): a source the template's CSP
// does not allow is not allowed locally either.
//
// It reads the template's JSON only (no CDK): a whole template (cdk.out) or
// the extract infra/stack keeps in testdata (Extract), with the intrinsic
// functions the stack uses evaluated on stand-in values.
package edge

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Region is the stand-in for AWS::Region when templates are evaluated.
const Region = "us-east-1"

// Edge is what a template says about the edge.
type Edge struct {
	security    map[string]any // ResponseHeadersPolicyConfig.SecurityHeadersConfig
	apiPaths    []string
	rootObject  string
	issuer      string // the JWT authorizer's issuer, evaluated
	signIn      string // the SignInDomain output, evaluated ("" without a user pool)
	storageHost string // a movies bucket's host name in the region
}

// Load reads a template file (JSON).
func Load(path string) (*Edge, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tpl map[string]any
	if err := json.Unmarshal(b, &tpl); err != nil {
		return nil, fmt.Errorf("edge: %s: %w", path, err)
	}
	return FromTemplate(tpl)
}

// Extract keeps of a template only what FromTemplate reads: the response
// headers policies, the distribution, the HTTP API's authorizer and the
// SignInDomain output.
func Extract(tpl map[string]any) map[string]any {
	res := map[string]any{}
	for id, r := range resourcesOf(tpl) {
		switch r["Type"] {
		case "AWS::CloudFront::ResponseHeadersPolicy", "AWS::CloudFront::Distribution", "AWS::ApiGatewayV2::Authorizer":
			res[id] = r
		}
	}
	out := map[string]any{"Resources": res}
	if o, ok := tpl["Outputs"].(map[string]any)["SignInDomain"]; ok {
		out["Outputs"] = map[string]any{"SignInDomain": o}
	}
	return out
}

func resourcesOf(tpl map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	rs, _ := tpl["Resources"].(map[string]any)
	for id, r := range rs {
		if m, ok := r.(map[string]any); ok {
			out[id] = m
		}
	}
	return out
}

func one(tpl map[string]any, typ string) (map[string]any, error) {
	var found []map[string]any
	for _, r := range resourcesOf(tpl) {
		if r["Type"] == typ {
			p, _ := r["Properties"].(map[string]any)
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("edge: %d resources of type %s, want 1", len(found), typ)
	}
	return found[0], nil
}

// FromTemplate reads a template (whole or Extract's).
func FromTemplate(tpl map[string]any) (*Edge, error) {
	dist, err := one(tpl, "AWS::CloudFront::Distribution")
	if err != nil {
		return nil, err
	}
	cfg, _ := dist["DistributionConfig"].(map[string]any)
	e := &Edge{storageHost: "movies." + "s3." + Region + ".amazonaws.com"}
	e.rootObject, _ = cfg["DefaultRootObject"].(string)
	def, _ := cfg["DefaultCacheBehavior"].(map[string]any)
	policyRef := def["ResponseHeadersPolicyId"]
	behaviors, _ := cfg["CacheBehaviors"].([]any)
	for _, b := range behaviors {
		if b, ok := b.(map[string]any); ok {
			p, _ := b["PathPattern"].(string)
			e.apiPaths = append(e.apiPaths, p)
			if fmt.Sprint(b["ResponseHeadersPolicyId"]) != fmt.Sprint(policyRef) {
				return nil, fmt.Errorf("edge: %s has another response headers policy than the page", p)
			}
		}
	}
	ref, _ := policyRef.(map[string]any)["Ref"].(string)
	policy, ok := resourcesOf(tpl)[ref]
	if !ok {
		return nil, fmt.Errorf("edge: the page's response headers policy %v is not in the template", policyRef)
	}
	pc, _ := policy["Properties"].(map[string]any)["ResponseHeadersPolicyConfig"].(map[string]any)
	if e.security, ok = pc["SecurityHeadersConfig"].(map[string]any); !ok {
		return nil, errors.New("edge: the response headers policy has no security headers")
	}
	auth, err := one(tpl, "AWS::ApiGatewayV2::Authorizer")
	if err != nil {
		return nil, err
	}
	jwt, _ := auth["JwtConfiguration"].(map[string]any)
	if e.issuer, err = Eval(jwt["Issuer"]); err != nil {
		return nil, fmt.Errorf("edge: issuer: %w", err)
	}
	if o, ok := tpl["Outputs"].(map[string]any)["SignInDomain"].(map[string]any); ok {
		if e.signIn, err = Eval(o["Value"]); err != nil {
			return nil, fmt.Errorf("edge: sign-in domain: %w", err)
		}
	}
	return e, nil
}

// Eval evaluates a template value: Fn::Join, Fn::Select, Fn::Split, and
// Ref / Fn::GetAtt with stand-ins (AWS::Region is Region, a resource's Ref
// its logical ID in lower case, a GetAtt "<id>-<attribute>").
func Eval(v any) (string, error) {
	l, err := eval(v)
	if err != nil {
		return "", err
	}
	if len(l) != 1 {
		return "", fmt.Errorf("a list where a string was expected: %v", l)
	}
	return l[0], nil
}

func eval(v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return []string{x}, nil
	case []any:
		var out []string
		for _, e := range x {
			s, err := Eval(e)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	case map[string]any:
		if len(x) != 1 {
			break
		}
		for fn, arg := range x {
			switch fn {
			case "Ref":
				switch r := arg.(string); r {
				case "AWS::Region":
					return []string{Region}, nil
				case "AWS::URLSuffix":
					return []string{"amazonaws.com"}, nil
				case "AWS::AccountId":
					return []string{"123456789012"}, nil
				case "AWS::Partition":
					return []string{"aws"}, nil
				default:
					return []string{strings.ToLower(r)}, nil
				}
			case "Fn::GetAtt":
				a, _ := arg.([]any)
				if len(a) != 2 {
					break
				}
				return []string{strings.ToLower(fmt.Sprint(a[0])) + "-" + strings.ToLower(fmt.Sprint(a[1]))}, nil
			case "Fn::Join":
				a, _ := arg.([]any)
				if len(a) != 2 {
					break
				}
				parts, err := eval(a[1])
				if err != nil {
					return nil, err
				}
				return []string{strings.Join(parts, fmt.Sprint(a[0]))}, nil
			case "Fn::Split":
				a, _ := arg.([]any)
				if len(a) != 2 {
					break
				}
				s, err := Eval(a[1])
				if err != nil {
					return nil, err
				}
				return strings.Split(s, fmt.Sprint(a[0])), nil
			case "Fn::Select":
				a, _ := arg.([]any)
				if len(a) != 2 {
					break
				}
				i, err := strconv.Atoi(fmt.Sprint(a[0]))
				if err != nil {
					return nil, err
				}
				l, err := eval(a[1])
				if err != nil {
					return nil, err
				}
				if i < 0 || i >= len(l) {
					return nil, fmt.Errorf("Fn::Select %d of %d", i, len(l))
				}
				return []string{l[i]}, nil
			}
		}
	}
	return nil, fmt.Errorf("cannot evaluate %v", v)
}

// Local are the local stand-ins of the deployed origins: the issuer's URL
// (its origin replaces the deployed issuer's), the sign-in pages' origin
// (Cognito's managed login domain) and the movie storage's origin (the S3
// emulator, for the movies bucket's regional endpoint).
type Local struct {
	Issuer, SignIn, Storage string
}

// APIPaths are the distribution's path patterns routed to the HTTP API.
func (e *Edge) APIPaths() []string { return slices.Clone(e.apiPaths) }

// DefaultRootObject is the object served for "/".
func (e *Edge) DefaultRootObject() string { return e.rootObject }

// IsAPI reports whether CloudFront sends path to the HTTP API (its path
// patterns: * any run of characters, ? one).
func (e *Edge) IsAPI(path string) bool {
	for _, p := range e.apiPaths {
		re := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(p)) + "$"
		if regexp.MustCompile(re).MatchString(path) {
			return true
		}
	}
	return false
}

// Issuer is the deployed issuer (evaluated with stand-ins).
func (e *Edge) Issuer() string { return e.issuer }

// Headers are the response headers the policy sets, the CSP's deployed
// origins mapped onto l's.
func (e *Edge) Headers(l Local) (http.Header, error) {
	h := http.Header{}
	csp, _ := e.security["ContentSecurityPolicy"].(map[string]any)
	if csp != nil {
		v, err := Eval(csp["ContentSecurityPolicy"])
		if err != nil {
			return nil, fmt.Errorf("edge: CSP: %w", err)
		}
		h.Set("Content-Security-Policy", e.localCSP(v, l))
	}
	if hsts, ok := e.security["StrictTransportSecurity"].(map[string]any); ok {
		age, _ := hsts["AccessControlMaxAgeSec"].(float64)
		v := "max-age=" + strconv.FormatFloat(age, 'f', -1, 64)
		if hsts["IncludeSubdomains"] == true {
			v += "; includeSubDomains"
		}
		if hsts["Preload"] == true {
			v += "; preload"
		}
		h.Set("Strict-Transport-Security", v)
	}
	if fo, ok := e.security["FrameOptions"].(map[string]any); ok {
		h.Set("X-Frame-Options", fmt.Sprint(fo["FrameOption"]))
	}
	if _, ok := e.security["ContentTypeOptions"]; ok {
		h.Set("X-Content-Type-Options", "nosniff")
	}
	if rp, ok := e.security["ReferrerPolicy"].(map[string]any); ok {
		h.Set("Referrer-Policy", fmt.Sprint(rp["ReferrerPolicy"]))
	}
	return h, nil
}

// localCSP adds, to every directive, the local stand-in of each deployed
// origin one of its sources allows.
func (e *Edge) localCSP(csp string, l Local) string {
	type pair struct{ deployed, local string }
	pairs := []pair{{Origin(e.issuer), Origin(l.Issuer)}, {"https://" + e.storageHost, Origin(l.Storage)}}
	if e.signIn != "" {
		pairs = append(pairs, pair{Origin(e.signIn), Origin(l.SignIn)})
	} else {
		pairs = append(pairs, pair{Origin(e.issuer), Origin(l.SignIn)})
	}
	var out []string
	for _, d := range strings.Split(csp, ";") {
		f := strings.Fields(d)
		if len(f) == 0 {
			continue
		}
		sources := f[1:]
		for _, p := range pairs {
			if p.local == "" || slices.Contains(sources, p.local) {
				continue
			}
			for _, s := range f[1:] {
				if SourceMatches(s, p.deployed) {
					sources = append(sources, p.local)
					break
				}
			}
		}
		out = append(out, strings.Join(append([]string{f[0]}, sources...), " "))
	}
	return strings.Join(out, "; ")
}

// Origin is a URL's scheme://host[:port].
func Origin(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	host, _, _ := strings.Cut(rest, "/")
	return scheme + "://" + host
}

// SourceMatches reports whether a CSP source expression allows the origin
// (scheme://host, default port): a scheme source ("https:"), a host source
// with or without scheme, a leading "*." for any subdomain. Keywords
// ('self', 'none', ...) match no other origin.
func SourceMatches(source, origin string) bool {
	if strings.HasPrefix(source, "'") {
		return false
	}
	oScheme, oHost, _ := strings.Cut(origin, "://")
	if strings.HasSuffix(source, ":") && !strings.Contains(source, "/") {
		return strings.TrimSuffix(source, ":") == oScheme
	}
	host := source
	if scheme, rest, ok := strings.Cut(source, "://"); ok {
		if scheme != oScheme {
			return false
		}
		host = rest
	}
	host, _, _ = strings.Cut(host, "/")
	if strings.HasPrefix(host, "*.") {
		return strings.HasSuffix(oHost, host[1:])
	}
	return host == oHost
}
