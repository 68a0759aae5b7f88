package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Config is one environment's settings, read from the "environments" object
// of cdk.json's context (see ConfigFor). Every field without a default must be
// set in cdk.json; Validate says which.
type Config struct {
	// Account and Region pin the stack to an AWS environment. Both are
	// optional: left empty, the CLI's CDK_DEFAULT_ACCOUNT/CDK_DEFAULT_REGION
	// are used, or the stack stays environment-agnostic.
	Account string `json:"account,omitempty"`
	Region  string `json:"region,omitempty"`

	// RemovalPolicy is "retain" or "destroy" and applies to the tables, the
	// user pool and the log groups. "retain" also turns on deletion
	// protection. "destroy" is refused for every environment that is not a
	// development one (see IsDevName).
	RemovalPolicy string `json:"removalPolicy"`

	// LogRetentionDays is the retention of every log group: one of the
	// values CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ...).
	LogRetentionDays int `json:"logRetentionDays"`
	// LogLevel is passed to the functions as LOG_LEVEL (debug, info, warn, error).
	LogLevel string `json:"logLevel"`

	// CORSOrigin, when set, is one more browser origin allowed to call the
	// HTTP API cross-origin (scheme://host[:port], no path), e.g. a local
	// page against a deployed dev API; it is passed to the API as
	// CORS_ORIGIN. The deployed page never needs it: the CloudFront
	// distribution serves the page and the API on one origin (web.go).
	CORSOrigin string `json:"corsOrigin,omitempty"`

	// SignIn configures the Cognito managed login (cognito.go).
	SignIn SignInConfig `json:"signIn"`

	// JWT, when set, makes the HTTP API trust an external issuer instead of
	// the Cognito user pool the stack creates by default.
	JWT *JWTConfig `json:"jwt,omitempty"`

	// WorkerMaxConcurrency caps concurrent worker invocations from the
	// trace-job queue (2-1000, the SQS event source limits).
	WorkerMaxConcurrency int `json:"workerMaxConcurrency"`

	// Throttle is the HTTP API's default route throttling.
	Throttle ThrottleConfig `json:"throttle"`

	// Alarms holds the CloudWatch alarm thresholds.
	Alarms AlarmConfig `json:"alarms"`
}

// SignInConfig is the Cognito user pool's sign-in.
type SignInConfig struct {
	// DomainPrefix is the managed login domain's prefix
	// (<prefix>.auth.<region>.amazoncognito.com), unique in the region.
	// Default: tracinglocks-<env>-<account ID>.
	DomainPrefix string `json:"domainPrefix,omitempty"`
	// MFA is "off", "optional" or "required" (authenticator apps; default
	// "required"). An environment named prod must use "required".
	MFA string `json:"mfa,omitempty"`
}

// JWTConfig names an external OIDC issuer for the HTTP API's JWT authorizer.
type JWTConfig struct {
	// Issuer is the issuer URL (https); API Gateway fetches its
	// /.well-known/openid-configuration.
	Issuer string `json:"issuer"`
	// Audience lists the accepted "aud" (or Cognito "client_id") values.
	Audience []string `json:"audience"`
}

// ThrottleConfig is API Gateway's token bucket for the default stage.
type ThrottleConfig struct {
	RateLimit  float64 `json:"rateLimit"`
	BurstLimit float64 `json:"burstLimit"`
}

// AlarmConfig holds alarm thresholds; each alarm fires when its value is
// reached (>=) within one evaluation period.
type AlarmConfig struct {
	// PeriodMinutes is the evaluation period of every alarm (default 5).
	PeriodMinutes int `json:"periodMinutes,omitempty"`
	// DLQDepth is the visible-message count on the trace-job DLQ and on the
	// stream failure queue (default 1: any message is an incident).
	DLQDepth int `json:"dlqDepth,omitempty"`
	// IteratorAgeSeconds is the stream processor's maximum iterator age.
	IteratorAgeSeconds int `json:"iteratorAgeSeconds"`
	// FunctionErrors is the per-function error count in a period.
	FunctionErrors int `json:"functionErrors"`
	// FunctionThrottles is the per-function throttle count in a period.
	FunctionThrottles int `json:"functionThrottles"`
	// TopicArn, when set, is an existing SNS topic every alarm notifies
	// (alarm and OK) besides the stack's own alarm topic.
	TopicArn string `json:"topicArn,omitempty"`
	// Email subscribes to the stack's alarm topic. Required outside dev
	// (ProductionGuards); `make synth ALARM_EMAIL=...` sets it from the
	// command line (context value alarmEmail).
	Email string `json:"email,omitempty"`
	// API5xx is the HTTP API's 5xx count in a period (default 1).
	API5xx int `json:"api5xx,omitempty"`
	// APILatencyMs is the HTTP API's p99 latency (default 3000).
	APILatencyMs int `json:"apiLatencyMs,omitempty"`
	// QueueAgeSeconds is the age of the oldest trace job (default 900).
	QueueAgeSeconds int `json:"queueAgeSeconds,omitempty"`
	// TableThrottles is a table's throttled requests in a period (default 1).
	TableThrottles int `json:"tableThrottles,omitempty"`
}

// retentionDays are the values CloudWatch Logs accepts for a log group.
var retentionDays = map[int]bool{
	1: true, 3: true, 5: true, 7: true, 14: true, 30: true, 60: true, 90: true, 120: true, 150: true,
	180: true, 365: true, 400: true, 545: true, 731: true, 1096: true, 1827: true, 2192: true,
	2557: true, 2922: true, 3288: true, 3653: true,
}

// IsDevName reports whether an environment name is a development one
// ("dev" or "dev-<suffix>"), the only kind allowed removalPolicy "destroy".
func IsDevName(name string) bool { return name == "dev" || strings.HasPrefix(name, "dev-") }

// Retain reports whether the environment keeps its data when the stack or a
// resource is deleted.
func (c Config) Retain() bool { return c.RemovalPolicy == "retain" }

// Validate checks the settings of environment name and fills defaults.
func (c *Config) Validate(name string) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	switch c.RemovalPolicy {
	case "retain":
	case "destroy":
		if !IsDevName(name) {
			bad(`removalPolicy "destroy" is only allowed for dev environments; %q must use "retain"`, name)
		}
	default:
		bad(`removalPolicy must be "retain" or "destroy", not %q`, c.RemovalPolicy)
	}
	if !retentionDays[c.LogRetentionDays] {
		bad("logRetentionDays %d is not a CloudWatch Logs retention (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, ...)", c.LogRetentionDays)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("logLevel must be debug, info, warn or error, not %q", c.LogLevel)
	}
	if c.CORSOrigin != "" {
		if err := checkOrigin(c.CORSOrigin, IsDevName(name)); err != nil {
			bad("corsOrigin: %v", err)
		}
	}
	switch c.SignIn.MFA {
	case "":
		c.SignIn.MFA = "required"
	case "off", "optional", "required":
	default:
		bad(`signIn.mfa must be "off", "optional" or "required", not %q`, c.SignIn.MFA)
	}
	if name == "prod" && c.SignIn.MFA != "required" {
		bad(`signIn.mfa must be "required" in prod, not %q`, c.SignIn.MFA)
	}
	if p := c.SignIn.DomainPrefix; p != "" && (!domainPrefix.MatchString(p) || strings.Contains(p, "aws") ||
		strings.Contains(p, "amazon") || strings.Contains(p, "cognito")) {
		bad("signIn.domainPrefix %q: lower-case letters, digits and hyphens, 1-63, not starting or ending with a hyphen, without aws, amazon or cognito", p)
	}
	if c.JWT != nil {
		if u, err := url.Parse(c.JWT.Issuer); err != nil || u.Scheme != "https" || u.Host == "" {
			bad("jwt.issuer must be an https URL, not %q", c.JWT.Issuer)
		}
		if len(c.JWT.Audience) == 0 {
			bad("jwt.audience must name at least one audience")
		}
		for _, a := range c.JWT.Audience {
			if a == "" {
				bad("jwt.audience has an empty entry")
			}
		}
	}
	if c.WorkerMaxConcurrency < 2 || c.WorkerMaxConcurrency > 1000 {
		bad("workerMaxConcurrency must be 2-1000, not %d", c.WorkerMaxConcurrency)
	}
	if c.Throttle.RateLimit <= 0 || c.Throttle.BurstLimit < 1 {
		bad("throttle.rateLimit and throttle.burstLimit must be positive")
	}
	if c.Alarms.PeriodMinutes == 0 {
		c.Alarms.PeriodMinutes = 5
	}
	if c.Alarms.DLQDepth == 0 {
		c.Alarms.DLQDepth = 1
	}
	for _, d := range []struct {
		v   *int
		def int
	}{{&c.Alarms.API5xx, 1}, {&c.Alarms.APILatencyMs, 3000}, {&c.Alarms.QueueAgeSeconds, 900}, {&c.Alarms.TableThrottles, 1}} {
		if *d.v == 0 {
			*d.v = d.def
		}
		if *d.v < 0 {
			bad("alarms: api5xx, apiLatencyMs, queueAgeSeconds and tableThrottles must be positive")
		}
	}
	if e := c.Alarms.Email; e != "" && !emailRE.MatchString(e) {
		bad("alarms.email %q is not an email address", e)
	}
	if c.Alarms.PeriodMinutes < 1 || c.Alarms.DLQDepth < 1 || c.Alarms.IteratorAgeSeconds < 1 ||
		c.Alarms.FunctionErrors < 1 || c.Alarms.FunctionThrottles < 1 {
		bad("alarms: periodMinutes, dlqDepth, iteratorAgeSeconds, functionErrors and functionThrottles must be positive")
	}
	if t := c.Alarms.TopicArn; t != "" && !strings.HasPrefix(t, "arn:") {
		bad("alarms.topicArn must be an SNS topic ARN, not %q", t)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("environment %q: %w", name, err)
	}
	return nil
}

var (
	domainPrefix = regexp.MustCompile(`^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)$`)
	emailRE      = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
)

// ProductionGuards refuses what must never be deployed outside a dev
// environment, checked by the app before it synthesizes: no alarm address
// (alarms nobody reads), and placeholder hosts (example.com, .test, ...)
// in the CORS origin, the external issuer or the alarm address.
func ProductionGuards(name string, c Config) error {
	if IsDevName(name) {
		return nil
	}
	var errs []error
	if c.Alarms.Email == "" {
		errs = append(errs, fmt.Errorf("alarms.email is required outside dev: set it in cdk.json or pass ALARM_EMAIL=you@yourdomain (context alarmEmail)"))
	} else if _, host, _ := strings.Cut(c.Alarms.Email, "@"); placeholderHost(host) {
		errs = append(errs, fmt.Errorf("alarms.email %q is a placeholder address", c.Alarms.Email))
	}
	if c.CORSOrigin != "" {
		if u, err := url.Parse(c.CORSOrigin); err == nil && placeholderHost(u.Hostname()) {
			errs = append(errs, fmt.Errorf("corsOrigin %q is a placeholder origin: remove it (the distribution serves page and API on one origin) or set your own", c.CORSOrigin))
		}
	}
	if c.JWT != nil {
		if u, err := url.Parse(c.JWT.Issuer); err == nil && placeholderHost(u.Hostname()) {
			errs = append(errs, fmt.Errorf("jwt.issuer %q is a placeholder", c.JWT.Issuer))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("environment %q: %w", name, err)
	}
	return nil
}

// placeholderHost: the reserved example and test names (RFC 2606, 6761).
func placeholderHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, p := range []string{"example.com", "example.net", "example.org", "example", "test", "invalid", "localhost"} {
		if host == p || strings.HasSuffix(host, "."+p) {
			return true
		}
	}
	return false
}

// checkOrigin accepts scheme://host[:port]: https, or http for localhost in
// development environments. A wildcard is never accepted.
func checkOrigin(origin string, dev bool) error {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q is not an origin (scheme://host[:port])", origin)
	}
	if strings.Contains(origin, "*") {
		return fmt.Errorf("%q: wildcards are not allowed", origin)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && dev && (u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1"):
	default:
		return fmt.Errorf("%q must be https (http only for localhost in dev)", origin)
	}
	return nil
}

// ConfigFor returns the validated settings of environment name from the
// context value "environments" (a JSON object of objects, as decoded by jsii
// or encoding/json).
func ConfigFor(environments any, name string) (Config, error) {
	if environments == nil {
		return Config{}, errors.New(`no "environments" in the CDK context (cdk.json)`)
	}
	raw, err := json.Marshal(environments)
	if err != nil {
		return Config{}, fmt.Errorf("environments: %w", err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return Config{}, fmt.Errorf(`"environments" must be an object: %w`, err)
	}
	one, ok := all[name]
	if !ok {
		names := make([]string, 0, len(all))
		for n := range all {
			names = append(names, n)
		}
		sort.Strings(names)
		return Config{}, fmt.Errorf("unknown environment %q (cdk.json has %s)", name, strings.Join(names, ", "))
	}
	dec := json.NewDecoder(strings.NewReader(string(one)))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("environment %q: %w", name, err)
	}
	if err := c.Validate(name); err != nil {
		return Config{}, err
	}
	return c, nil
}

// FindRoot returns the nearest directory at or above dir holding cdk.json:
// the repository root, where asset paths such as build/api are resolved.
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "cdk.json")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no cdk.json at or above %s", dir)
		}
	}
}

// LoadContext returns the "context" object of the cdk.json in root. The app
// passes it as its own context, so that running the Go program directly
// (without the CDK CLI, which would pass it itself) sees the same settings.
func LoadContext(root string) (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join(root, "cdk.json"))
	if err != nil {
		return nil, err
	}
	var f struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("cdk.json: %w", err)
	}
	return f.Context, nil
}
