package stack

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// One origin: the distribution serves the page from the private site bucket
// through origin access control and the API paths from the HTTP API, with
// the security headers policy on every behavior.
func TestDistributionServesPageAndAPIOnOneOrigin(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st, tpl := fx.stacks[key], fx.templates[key]
		check(t, key+" one distribution", func() { tpl.ResourceCountIs(jsii.String("AWS::CloudFront::Distribution"), jsii.Number(1)) })
		check(t, key+" one OAC", func() { tpl.ResourceCountIs(jsii.String("AWS::CloudFront::OriginAccessControl"), jsii.Number(1)) })
		hasProps(t, tpl, "AWS::S3::Bucket", map[string]any{
			"PublicAccessBlockConfiguration": map[string]any{
				"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true,
			},
			"LoggingConfiguration": obj(map[string]any{"LogFilePrefix": "site/"}),
		})
		dist := props(resources(fx.json[key], "AWS::CloudFront::Distribution")[logicalID(st, st.Distribution)])["DistributionConfig"].(map[string]any)
		if dist["DefaultRootObject"] != "index.html" {
			t.Errorf("%s: default root object %v", key, dist["DefaultRootObject"])
		}
		policy := ref(st, st.HeadersPolicy)
		def := dist["DefaultCacheBehavior"].(map[string]any)
		if def["ViewerProtocolPolicy"] != "redirect-to-https" || fmt.Sprint(def["ResponseHeadersPolicyId"]) != fmt.Sprint(policy) {
			t.Errorf("%s: default behavior %v", key, def)
		}
		origins := map[string]map[string]any{}
		for _, o := range dist["Origins"].([]any) {
			o := o.(map[string]any)
			origins[o["Id"].(string)] = o
		}
		s3 := origins[def["TargetOriginId"].(string)]
		if s3["S3OriginConfig"] == nil || s3["OriginAccessControlId"] == nil {
			t.Errorf("%s: the page's origin %v is not S3 with origin access control", key, s3)
		}
		var paths []string
		for _, b := range dist["CacheBehaviors"].([]any) {
			b := b.(map[string]any)
			paths = append(paths, b["PathPattern"].(string))
			o := origins[b["TargetOriginId"].(string)]
			custom, _ := o["CustomOriginConfig"].(map[string]any)
			if custom == nil || custom["OriginProtocolPolicy"] != "https-only" || !strings.Contains(fmt.Sprint(o["DomainName"]), logicalID(st, st.API)) {
				t.Errorf("%s: %s goes to %v, want the HTTP API over HTTPS", key, b["PathPattern"], o)
			}
			methods := fmt.Sprint(b["AllowedMethods"])
			for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
				if !strings.Contains(methods, m) {
					t.Errorf("%s: %s does not allow %s (the beacon release is a POST)", key, b["PathPattern"], m)
				}
			}
			// CachingDisabled, AllViewerExceptHostHeader: the Authorization
			// header reaches the API and nothing is cached.
			if b["CachePolicyId"] != "4135ea2d-6df8-44a3-9df3-4b5a84be39ad" || b["OriginRequestPolicyId"] != "b689b0a8-53d0-40ab-baf2-68738e2966ac" {
				t.Errorf("%s: %s cache policy %v, origin request policy %v", key, b["PathPattern"], b["CachePolicyId"], b["OriginRequestPolicyId"])
			}
			if fmt.Sprint(b["ResponseHeadersPolicyId"]) != fmt.Sprint(policy) {
				t.Errorf("%s: %s has no security headers policy", key, b["PathPattern"])
			}
		}
		if strings.Join(paths, ",") != strings.Join(APIPathPatterns, ",") {
			t.Errorf("%s: API paths %v, want %v", key, paths, APIPathPatterns)
		}
		// The site bucket's policy lets only CloudFront (this distribution) read.
		hasProps(t, tpl, "AWS::S3::BucketPolicy", map[string]any{
			"Bucket": ref(st, st.SiteBucket),
			"PolicyDocument": obj(map[string]any{"Statement": arr(obj(map[string]any{
				"Action": "s3:GetObject", "Principal": map[string]any{"Service": "cloudfront.amazonaws.com"},
			}))}),
		})
	}
}

func TestSecurityHeaders(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st := fx.stacks[key]
		r := resources(fx.json[key], "AWS::CloudFront::ResponseHeadersPolicy")[logicalID(st, st.HeadersPolicy)]
		sec := props(r)["ResponseHeadersPolicyConfig"].(map[string]any)["SecurityHeadersConfig"].(map[string]any)
		csp := fmt.Sprint(sec["ContentSecurityPolicy"].(map[string]any)["ContentSecurityPolicy"])
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP lacks %q: %s", key, want, csp)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, " * ") {
			t.Errorf("%s: CSP too open: %s", key, csp)
		}
		if key == extJWTStack && !strings.Contains(csp, "connect-src 'self' https://login.example.com ") {
			t.Errorf("%s: CSP does not let the page reach the external issuer: %s", key, csp)
		}
		if key != extJWTStack && !strings.Contains(csp, logicalID(st, st.UserPoolDomain)) {
			t.Errorf("%s: CSP does not name the Cognito domain: %s", key, csp)
		}
		hsts := sec["StrictTransportSecurity"].(map[string]any)
		if hsts["AccessControlMaxAgeSec"] != float64(730*24*3600) || hsts["IncludeSubdomains"] != true || hsts["Override"] != true {
			t.Errorf("%s: HSTS %v", key, hsts)
		}
		if fo := sec["FrameOptions"].(map[string]any); fo["FrameOption"] != "DENY" {
			t.Errorf("%s: frame options %v", key, fo)
		}
		if sec["ContentTypeOptions"] == nil || sec["ReferrerPolicy"].(map[string]any)["ReferrerPolicy"] != "no-referrer" {
			t.Errorf("%s: content type options %v, referrer %v", key, sec["ContentTypeOptions"], sec["ReferrerPolicy"])
		}
	}
}

// The page is deployed by the stack, with its auth-config.json.
func TestPageDeployment(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st := fx.stacks[key]
		deps := resources(fx.json[key], "Custom::CDKBucketDeployment")
		if len(deps) != 1 {
			t.Fatalf("%s: %d bucket deployments, want 1", key, len(deps))
		}
		for _, d := range deps {
			p := props(d)
			if fmt.Sprint(p["DestinationBucketName"]) != fmt.Sprint(ref(st, st.SiteBucket)) || p["Prune"] != true ||
				fmt.Sprint(p["DistributionPaths"]) != "[/*]" || fmt.Sprint(p["DistributionId"]) != fmt.Sprint(ref(st, st.Distribution)) {
				t.Errorf("%s: deployment %v", key, p)
			}
			if n := len(p["SourceObjectKeys"].([]any)); n != 2 {
				t.Errorf("%s: %d sources, want the page and auth-config.json", key, n)
			}
			b, _ := json.Marshal(p["SourceMarkers"])
			if key != extJWTStack && !strings.Contains(string(b), logicalID(st, st.UserPoolClient)) {
				t.Errorf("%s: auth-config.json does not carry the client ID: %s", key, b)
			}
		}
	}
}

// Sign-in: the managed login domain and a public client for the
// authorization code flow only, whose URLs are the distribution's, and
// which cannot write the display name the API trusts.
func TestCognitoManagedLoginClient(t *testing.T) {
	fx := synth(t)
	for _, key := range []string{devStack, prodStack} {
		st, tpl := fx.stacks[key], fx.templates[key]
		hasProps(t, tpl, "AWS::Cognito::UserPoolDomain", map[string]any{"ManagedLoginVersion": 2, "UserPoolId": ref(st, st.UserPool)})
		check(t, key+" branding", func() { tpl.ResourceCountIs(jsii.String("AWS::Cognito::ManagedLoginBranding"), jsii.Number(1)) })
		c := props(resources(fx.json[key], "AWS::Cognito::UserPoolClient")[logicalID(st, st.UserPoolClient)])
		if fmt.Sprint(c["AllowedOAuthFlows"]) != "[code]" || c["AllowedOAuthFlowsUserPoolClient"] != true || c["GenerateSecret"] != false {
			t.Errorf("%s: client flows %v secret %v", key, c["AllowedOAuthFlows"], c["GenerateSecret"])
		}
		if fmt.Sprint(c["AllowedOAuthScopes"]) != "[openid email profile]" {
			t.Errorf("%s: scopes %v", key, c["AllowedOAuthScopes"])
		}
		for _, k := range []string{"CallbackURLs", "LogoutURLs"} {
			urls := fmt.Sprint(c[k])
			if !strings.Contains(urls, logicalID(st, st.Distribution)) || strings.Contains(urls, "example.com") {
				t.Errorf("%s: %s %s, want the distribution's URL", key, k, urls)
			}
		}
		write := fmt.Sprint(c["WriteAttributes"])
		if strings.Contains(write, DisplayNameClaim) || strings.Contains(write, "email") || c["WriteAttributes"] == nil {
			t.Errorf("%s: users may write %s", key, write)
		}
		if read := fmt.Sprint(c["ReadAttributes"]); !strings.Contains(read, DisplayNameClaim) {
			t.Errorf("%s: the client cannot read %s: %s", key, DisplayNameClaim, read)
		}
	}
	if n := len(resources(fx.json[extJWTStack], "AWS::Cognito::UserPoolDomain")); n != 0 {
		t.Errorf("external issuer: %d Cognito domains", n)
	}
}

func TestOperations(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st, tpl, cfg := fx.stacks[key], fx.templates[key], fx.configs[key]
		subs := resources(fx.json[key], "AWS::SNS::Subscription")
		if cfg.Alarms.Email == "" && len(subs) != 0 || cfg.Alarms.Email != "" && len(subs) != 1 {
			t.Errorf("%s: %d subscriptions for alarm address %q", key, len(subs), cfg.Alarms.Email)
		}
		if cfg.Alarms.Email != "" {
			hasProps(t, tpl, "AWS::SNS::Subscription", map[string]any{"Protocol": "email", "Endpoint": cfg.Alarms.Email, "TopicArn": ref(st, st.AlarmTopic)})
		}
		for _, name := range Functions {
			if tr := props(functionResource(t, fx, key, name))["TracingConfig"]; fmt.Sprint(tr) != "map[Mode:Active]" {
				t.Errorf("%s/%s: tracing %v, want Active", key, name, tr)
			}
		}
		hasProps(t, tpl, "AWS::CloudWatch::Alarm", map[string]any{
			"Namespace": "AWS/Lambda", "MetricName": "Duration", "Statistic": "Maximum",
			"Threshold": WorkerDurationAlarmSeconds * 1000,
		})
		hasProps(t, tpl, "AWS::CloudWatch::Alarm", map[string]any{"Namespace": "AWS/ApiGateway", "MetricName": "5xx", "Threshold": cfg.Alarms.API5xx})
		hasProps(t, tpl, "AWS::CloudWatch::Alarm", map[string]any{"Namespace": "AWS/ApiGateway", "MetricName": "Latency", "ExtendedStatistic": "p99"})
		hasProps(t, tpl, "AWS::CloudWatch::Alarm", map[string]any{
			"Namespace": "AWS/SQS", "MetricName": "ApproximateAgeOfOldestMessage", "Threshold": cfg.Alarms.QueueAgeSeconds,
			"Dimensions": arrEq(map[string]any{"Name": "QueueName", "Value": getAtt(st, st.TraceQueue, "QueueName")}),
		})
		for _, table := range []string{"movies", "frames", "audit"} {
			hasProps(t, tpl, "AWS::CloudWatch::Alarm", map[string]any{"Metrics": arr(obj(map[string]any{"Expression": "FILL(r" + table + ", 0) + FILL(w" + table + ", 0)"}))})
		}
		dash := props(resources(fx.json[key], "AWS::CloudWatch::Dashboard")[logicalID(st, st.Dashboard)])
		body, _ := json.Marshal(dash["DashboardBody"])
		for _, m := range []string{"TracesStarted", "TracesCompleted", "TracesFailed", "TracesAbandoned", "ClaimRefusals", "LeaseConflicts", "PoisonRecords", "FramesTracedPerSecond"} {
			if !strings.Contains(string(body), m) {
				t.Errorf("%s: the dashboard lacks %s", key, m)
			}
		}
		// Queues are kept with the data outside dev.
		for id, q := range resources(fx.json[key], "AWS::SQS::Queue") {
			want := map[bool]string{true: "Retain", false: "Delete"}[cfg.Retain()]
			if q["DeletionPolicy"] != want {
				t.Errorf("%s: queue %s DeletionPolicy %v, want %s", key, id, q["DeletionPolicy"], want)
			}
		}
		if got := st.TerminationProtection(); got == nil || *got != cfg.Retain() {
			t.Errorf("%s: termination protection %v, want %v", key, got, cfg.Retain())
		}
	}
}

func TestProductionGuards(t *testing.T) {
	good := Config{Alarms: AlarmConfig{Email: "oncall@movietrace.org"}}
	if err := ProductionGuards("prod", good); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Config{
		"no alarm address":    {},
		"placeholder address": {Alarms: AlarmConfig{Email: "ops@example.com"}},
		"placeholder origin":  {Alarms: good.Alarms, CORSOrigin: "https://tracing.example.com"},
		"placeholder issuer":  {Alarms: good.Alarms, JWT: &JWTConfig{Issuer: "https://login.example.com/x", Audience: []string{"a"}}},
		"test TLD address":    {Alarms: AlarmConfig{Email: "ops@corp.test"}},
		"localhost origin":    {Alarms: good.Alarms, CORSOrigin: "https://localhost"},
	} {
		if err := ProductionGuards("prod", c); err == nil {
			t.Errorf("%s: accepted for prod", name)
		}
		if err := ProductionGuards("dev", c); err != nil {
			t.Errorf("%s: refused for dev: %v", name, err)
		}
	}
	c := good
	c.SignIn.MFA = "optional"
	c.RemovalPolicy, c.LogRetentionDays, c.LogLevel, c.WorkerMaxConcurrency = "retain", 30, "info", 2
	c.Throttle = ThrottleConfig{RateLimit: 1, BurstLimit: 1}
	c.Alarms.IteratorAgeSeconds, c.Alarms.FunctionErrors, c.Alarms.FunctionThrottles = 1, 1, 1
	if err := c.Validate("prod"); err == nil || !strings.Contains(err.Error(), "signIn.mfa") {
		t.Errorf("optional MFA in prod: %v", err)
	}
	if err := c.Validate("staging"); err != nil {
		t.Errorf("optional MFA in staging: %v", err)
	}
	for _, p := range []string{"Upper", "-lead", "trail-", "my-aws-login", "cognito-x", "a_b"} {
		d := c
		d.SignIn = SignInConfig{DomainPrefix: p}
		if err := d.Validate("staging"); err == nil {
			t.Errorf("domain prefix %q accepted", p)
		}
	}
}

// The app refuses to synthesize prod without an alarm address.
func TestAppRefusesProdWithoutAlarmAddress(t *testing.T) {
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := LoadContext(root)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ConfigFor(ctx["environments"], "prod")
	if err != nil {
		t.Fatal(err)
	}
	if err := ProductionGuards("prod", c); err == nil || !strings.Contains(err.Error(), "alarms.email") {
		t.Errorf("cdk.json's prod without ALARM_EMAIL: %v, want a refusal naming alarms.email", err)
	}
}
