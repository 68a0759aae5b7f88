package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
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

	// CORSOrigin is the one browser origin allowed to call the HTTP API
	// (scheme://host[:port], no path). It is also passed to the API as
	// CORS_ORIGIN.
	CORSOrigin string `json:"corsOrigin"`

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
	// (alarm and OK). Without it the alarms only show in the console.
	TopicArn string `json:"topicArn,omitempty"`
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
	if err := checkOrigin(c.CORSOrigin, IsDevName(name)); err != nil {
		bad("corsOrigin: %v", err)
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
