package stack

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The defects a deployability review found in templates that passed every
// other test (issue 23), each checked on the synthesized template.

// The page fetches the issuer's discovery document (Cognito: on
// cognito-idp.<region>.amazonaws.com, not the login domain), so connect-src
// must allow the issuer's origin, and the issuer must be the one the API's
// authorizer trusts and the page's auth-config.json names.
func TestCSPAllowsTheIssuer(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st := fx.stacks[key]
		tpl := fx.json[key]
		sec := props(resources(tpl, "AWS::CloudFront::ResponseHeadersPolicy")[logicalID(st, st.HeadersPolicy)])["ResponseHeadersPolicyConfig"].(map[string]any)["SecurityHeadersConfig"].(map[string]any)
		csp := render(sec["ContentSecurityPolicy"].(map[string]any)["ContentSecurityPolicy"])
		var authorizer map[string]any
		for _, r := range resources(tpl, "AWS::ApiGatewayV2::Authorizer") {
			authorizer = props(r)
		}
		issuer := render(authorizer["JwtConfiguration"].(map[string]any)["Issuer"])
		origin := issuer
		if i := strings.Index(issuer[len("https://"):], "/"); i >= 0 {
			origin = issuer[:len("https://")+i]
		}
		var connect []string
		for _, d := range strings.Split(csp, ";") {
			if f := strings.Fields(d); len(f) > 0 && f[0] == "connect-src" {
				connect = f[1:]
			}
		}
		if !slices.Contains(connect, origin) {
			t.Errorf("%s: connect-src %v lacks the issuer's origin %s (issuer %s)", key, connect, origin, issuer)
		}
		if key != extJWTStack && origin != "https://cognito-idp.{AWS::Region}.amazonaws.com" {
			t.Errorf("%s: issuer %s is not Cognito's", key, issuer)
		}
		// auth-config.json's authority is the same issuer.
		for _, d := range resources(tpl, "Custom::CDKBucketDeployment") {
			markers := fmt.Sprint(props(d)["SourceMarkers"])
			if key != extJWTStack && !strings.Contains(markers, fmt.Sprint(getAtt(st, st.UserPool, "ProviderURL"))) &&
				!strings.Contains(markers, logicalID(st, st.UserPool)) {
				t.Errorf("%s: auth-config.json does not name the user pool: %s", key, markers)
			}
		}
	}
}

// render writes a template value with Fn::Join flattened, Refs as
// {Name} and GetAtts as {Name.Attr}.
func render(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if j, ok := x["Fn::Join"].([]any); ok {
			var parts []string
			for _, p := range j[1].([]any) {
				parts = append(parts, render(p))
			}
			return strings.Join(parts, j[0].(string))
		}
		if r, ok := x["Ref"].(string); ok {
			return "{" + r + "}"
		}
		if g, ok := x["Fn::GetAtt"].([]any); ok {
			return fmt.Sprintf("{%v.%v}", g[0], g[1])
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// A topic policy replaces SNS's default policy: CloudWatch may publish
// only if a statement allows it.
func TestAlarmTopicLetsCloudWatchPublish(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st := fx.stacks[key]
		found := false
		for _, r := range resources(fx.json[key], "AWS::SNS::TopicPolicy") {
			p := props(r)
			if !strings.Contains(fmt.Sprint(p["Topics"]), logicalID(st, st.AlarmTopic)) {
				continue
			}
			for _, s := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
				s := s.(map[string]any)
				if s["Effect"] == "Allow" && fmt.Sprint(s["Principal"]) == "map[Service:cloudwatch.amazonaws.com]" && s["Action"] == "sns:Publish" {
					found = true
					if !strings.Contains(render(s["Condition"].(map[string]any)["ArnLike"].(map[string]any)["aws:SourceArn"]), ":cloudwatch:{AWS::Region}:{AWS::AccountId}:alarm:*") {
						t.Errorf("%s: CloudWatch may publish for alarms of any account: %v", key, s["Condition"])
					}
				}
			}
		}
		if !found {
			t.Errorf("%s: the alarm topic's policy does not allow cloudwatch.amazonaws.com to publish", key)
		}
	}
}

// Presigned uploads sign If-None-Match (and the pending tag, the content
// type); a multipart upload reads each part's ETag.
func TestMovieBucketCORSAllowsWhatUploadsSign(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st := fx.stacks[key]
		b := props(resources(fx.json[key], "AWS::S3::Bucket")[logicalID(st, st.MoviesBucket)])
		rules := b["CorsConfiguration"].(map[string]any)["CorsRules"].([]any)
		if len(rules) == 0 {
			t.Fatalf("%s: no CORS rule", key)
		}
		for _, r := range rules {
			r := r.(map[string]any)
			for _, h := range []string{"if-none-match", "x-amz-tagging", "content-type"} {
				if !strings.Contains(fmt.Sprint(r["AllowedHeaders"]), h) {
					t.Errorf("%s: CORS rule %v does not allow %s", key, r["AllowedOrigins"], h)
				}
			}
			if !strings.Contains(strings.ToLower(fmt.Sprint(r["ExposedHeaders"])), "etag") || !strings.Contains(fmt.Sprint(r["AllowedMethods"]), "PUT") {
				t.Errorf("%s: CORS rule %v: exposed %v, methods %v", key, r["AllowedOrigins"], r["ExposedHeaders"], r["AllowedMethods"])
			}
		}
	}
}

// A destroy environment's buckets are emptied on delete (cdk destroy of dev
// fails on a non-empty bucket otherwise); a retain environment's never are.
func TestDestroyEnvironmentEmptiesItsBuckets(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st := fx.stacks[key]
		n := len(resources(fx.json[key], "Custom::S3AutoDeleteObjects"))
		want := 3 // movies, their access logs, the site
		if fx.configs[key].Retain() {
			want = 0
		}
		if n != want {
			t.Errorf("%s (retain %v): %d buckets emptied on delete, want %d", key, fx.configs[key].Retain(), n, want)
		}
		_ = st
	}
}

// A segment of a long trace runs, by design, to its stop margin: the
// duration alarm must stay above that.
func TestWorkerDurationAlarmSparesSegmentedTraces(t *testing.T) {
	if WorkerDurationAlarmSeconds <= WorkerTimeoutSeconds-WorkerStopMarginSeconds || WorkerDurationAlarmSeconds >= WorkerTimeoutSeconds {
		t.Errorf("threshold %d s: a healthy segment runs to %d s, the timeout is %d s", WorkerDurationAlarmSeconds,
			WorkerTimeoutSeconds-WorkerStopMarginSeconds, WorkerTimeoutSeconds)
	}
}
