package stack

import (
	"strings"
	"testing"
)

// validConfig is a complete prod-like configuration tests vary one field of.
func validConfig() Config {
	return Config{
		RemovalPolicy:        "retain",
		LogRetentionDays:     30,
		LogLevel:             "info",
		CORSOrigin:           "https://tracing.example.com",
		WorkerMaxConcurrency: 5,
		Throttle:             ThrottleConfig{RateLimit: 10, BurstLimit: 20},
		Alarms:               AlarmConfig{IteratorAgeSeconds: 60, FunctionErrors: 1, FunctionThrottles: 1},
	}
}

func TestCDKJSONEnvironmentsValidate(t *testing.T) {
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := LoadContext(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"dev", "staging", "prod"} {
		c, err := ConfigFor(ctx["environments"], name)
		if err != nil {
			t.Errorf("cdk.json %s: %v", name, err)
			continue
		}
		if want := IsDevName(name); c.Retain() == want {
			t.Errorf("cdk.json %s: removalPolicy %q, want retain only outside dev", name, c.RemovalPolicy)
		}
	}
	if env, _ := ctx["env"].(string); env != "dev" {
		t.Errorf(`cdk.json context "env" = %q, want the default "dev"`, env)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name, env string
		edit      func(*Config)
		wantErr   string // "" = valid
	}{
		{"prod retains", "prod", func(*Config) {}, ""},
		{"destroy in dev", "dev", func(c *Config) { c.RemovalPolicy = "destroy" }, ""},
		{"destroy in a dev- env", "dev-alice", func(c *Config) { c.RemovalPolicy = "destroy" }, ""},
		{"destroy refused in prod", "prod", func(c *Config) { c.RemovalPolicy = "destroy" }, "only allowed for dev"},
		{"destroy refused in staging", "staging", func(c *Config) { c.RemovalPolicy = "destroy" }, "only allowed for dev"},
		{"unknown removal policy", "dev", func(c *Config) { c.RemovalPolicy = "snapshot" }, "removalPolicy"},
		{"retention not offered by CloudWatch", "prod", func(c *Config) { c.LogRetentionDays = 10 }, "logRetentionDays"},
		{"log level", "prod", func(c *Config) { c.LogLevel = "verbose" }, "logLevel"},
		{"wildcard origin", "prod", func(c *Config) { c.CORSOrigin = "*" }, "corsOrigin"},
		{"origin with a path", "prod", func(c *Config) { c.CORSOrigin = "https://a.example.com/app" }, "corsOrigin"},
		{"http origin in prod", "prod", func(c *Config) { c.CORSOrigin = "http://a.example.com" }, "corsOrigin"},
		{"http localhost in prod", "prod", func(c *Config) { c.CORSOrigin = "http://localhost:8080" }, "corsOrigin"},
		{"http localhost in dev", "dev", func(c *Config) { c.CORSOrigin = "http://localhost:8080" }, ""},
		{"external issuer", "prod", func(c *Config) {
			c.JWT = &JWTConfig{Issuer: "https://idp.example.com/", Audience: []string{"api"}}
		}, ""},
		{"issuer not https", "prod", func(c *Config) {
			c.JWT = &JWTConfig{Issuer: "http://idp.example.com/", Audience: []string{"api"}}
		}, "jwt.issuer"},
		{"issuer without audience", "prod", func(c *Config) { c.JWT = &JWTConfig{Issuer: "https://idp.example.com/"} }, "jwt.audience"},
		{"worker concurrency below the SQS minimum", "prod", func(c *Config) { c.WorkerMaxConcurrency = 1 }, "workerMaxConcurrency"},
		{"no throttling", "prod", func(c *Config) { c.Throttle = ThrottleConfig{} }, "throttle"},
		{"alarm threshold missing", "prod", func(c *Config) { c.Alarms.IteratorAgeSeconds = 0 }, "alarms"},
		{"topic not an ARN", "prod", func(c *Config) { c.Alarms.TopicArn = "alerts" }, "topicArn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.edit(&c)
			err := c.Validate(tt.env)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("accepted, want an error about %s", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("error %q does not mention %s", err, tt.wantErr)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c := validConfig()
	if err := c.Validate("prod"); err != nil {
		t.Fatal(err)
	}
	if c.Alarms.PeriodMinutes != 5 || c.Alarms.DLQDepth != 1 {
		t.Errorf("alarm defaults: period %d min, DLQ depth %d; want 5 and 1", c.Alarms.PeriodMinutes, c.Alarms.DLQDepth)
	}
}

func TestConfigFor(t *testing.T) {
	envs := map[string]any{
		"prod": map[string]any{
			"removalPolicy": "retain", "logRetentionDays": 30, "logLevel": "info",
			"corsOrigin": "https://tracing.example.com", "workerMaxConcurrency": 5,
			"throttle": map[string]any{"rateLimit": 10, "burstLimit": 20},
			"alarms":   map[string]any{"iteratorAgeSeconds": 60, "functionErrors": 1, "functionThrottles": 1},
		},
		"typo": map[string]any{"removalPolicy": "retain", "logRetentionDay": 30},
	}
	if _, err := ConfigFor(envs, "prod"); err != nil {
		t.Errorf("prod: %v", err)
	}
	if _, err := ConfigFor(envs, "qa"); err == nil || !strings.Contains(err.Error(), "prod, typo") {
		t.Errorf("unknown environment: err = %v, want the known names listed", err)
	}
	if _, err := ConfigFor(envs, "typo"); err == nil || !strings.Contains(err.Error(), "logRetentionDay") {
		t.Errorf("misspelt field: err = %v, want it named", err)
	}
	if _, err := ConfigFor(nil, "prod"); err == nil {
		t.Error("no environments: accepted")
	}
}
