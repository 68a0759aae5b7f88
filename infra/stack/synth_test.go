package stack

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/movietrace/tracinglocks/functions/envvar"
)

// The stacks every assertion looks at, synthesized once, in one app, by the
// first test that needs them (synthesis dominates the package's run time).
const (
	devStack    = "dev"    // cdk.json's dev: Cognito, DESTROY
	prodStack   = "prod"   // cdk.json's prod: Cognito, RETAIN
	extJWTStack = "extjwt" // cdk.json's staging plus an external issuer and an alarm topic
)

// External issuer settings of the extjwt stack.
const (
	extIssuer   = "https://login.example.com/realms/movietrace"
	extAudience = "movietrace-api"
	alarmTopic  = "arn:aws:sns:eu-west-1:123456789012:tracing-alarms"
	alarmEmail  = "oncall@movietrace.invalid"
)

type synthesized struct {
	stacks    map[string]*Stack
	configs   map[string]Config
	templates map[string]assertions.Template
	json      map[string]map[string]any
	// canary is a stack with a deliberate cdk-nag violation, proving the
	// rule pack really runs over the app.
	canary awscdk.Stack
	// outdir is the cloud assembly's directory.
	outdir string
}

var (
	synthOnce sync.Once
	synthFx   *synthesized
	synthErr  error
	assetDir  string
)

func TestMain(m *testing.M) {
	// Node 20 banners from the jsii runtime, which starts on first use.
	os.Setenv("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
	os.Setenv("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
	code := m.Run()
	if assetDir != "" {
		os.RemoveAll(assetDir)
	}
	jsii.Close()
	os.Exit(code)
}

// synth returns the synthesized stacks, synthesizing them on first use.
func synth(tb testing.TB) *synthesized {
	tb.Helper()
	synthOnce.Do(func() { synthFx, synthErr = build() })
	if synthErr != nil {
		tb.Fatalf("synthesis: %v", synthErr)
	}
	return synthFx
}

func build() (fx *synthesized, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	// Placeholder binaries: the tests need no `make build`.
	assetDir, err = os.MkdirTemp("", "tracinglocks-assets-")
	if err != nil {
		return nil, err
	}
	for _, name := range Functions {
		if err := os.MkdirAll(filepath.Join(assetDir, name), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(assetDir, name, "bootstrap"), []byte("placeholder "+name), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(assetDir, FFmpegLayerDir, "bin"), 0o755); err != nil {
		return nil, err
	}
	for _, bin := range []string{"ffmpeg", "ffprobe"} {
		if err := os.WriteFile(filepath.Join(assetDir, FFmpegLayerDir, "bin", bin), []byte("placeholder "+bin), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(assetDir, WebDir), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(assetDir, WebDir, "index.html"), []byte("placeholder page"), 0o644); err != nil {
		return nil, err
	}
	root, err := FindRoot(".")
	if err != nil {
		return nil, err
	}
	ctx, err := LoadContext(root)
	if err != nil {
		return nil, err
	}
	fx = &synthesized{stacks: map[string]*Stack{}, configs: map[string]Config{},
		templates: map[string]assertions.Template{}, json: map[string]map[string]any{}}
	for key, env := range map[string]string{devStack: "dev", prodStack: "prod", extJWTStack: "staging"} {
		c, err := ConfigFor(ctx["environments"], env)
		if err != nil {
			return nil, err
		}
		if !IsDevName(env) {
			c.Alarms.Email = alarmEmail
		}
		if key == extJWTStack {
			c.JWT = &JWTConfig{Issuer: extIssuer, Audience: []string{extAudience}}
			c.Alarms.TopicArn = alarmTopic
		}
		fx.configs[key] = c
	}

	app := awscdk.NewApp(nil)
	for _, key := range []string{devStack, prodStack, extJWTStack} {
		env := map[string]string{devStack: "dev", prodStack: "prod", extJWTStack: "staging"}[key]
		fx.stacks[key] = NewStack(app, "TracingLocks-"+key, &Props{EnvName: env, Config: fx.configs[key], AssetRoot: assetDir})
	}
	fx.canary = awscdk.NewStack(app, jsii.String("NagCanary"), nil)
	awssqs.NewQueue(fx.canary, jsii.String("PlainQueue"), &awssqs.QueueProps{}) // no DLQ, no enforced TLS
	ApplyNag(app)
	app.Synth(nil)
	fx.outdir = *app.Outdir()
	for key, st := range fx.stacks {
		tpl := assertions.Template_FromStack(st.Stack, nil)
		fx.templates[key] = tpl
		fx.json[key] = *tpl.ToJSON()
	}
	return fx, nil
}

// --- helpers ----------------------------------------------------------------

// check runs an assertions call, turning its panic (how jsii reports a
// failed match) into a test error so that the other checks still run.
func check(tb testing.TB, what string, f func()) {
	tb.Helper()
	defer func() {
		if r := recover(); r != nil {
			tb.Errorf("%s: %v", what, r)
		}
	}()
	f()
}

func hasProps(tb testing.TB, tpl assertions.Template, typ string, props map[string]any) {
	tb.Helper()
	check(tb, typ, func() { tpl.HasResourceProperties(jsii.String(typ), props) })
}

func obj(m map[string]any) assertions.Matcher { return assertions.Match_ObjectLike(&m) }
func arr(v ...any) assertions.Matcher         { return assertions.Match_ArrayWith(&v) }
func arrEq(v ...any) assertions.Matcher       { return assertions.Match_ArrayEquals(&v) }
func absent() assertions.Matcher              { return assertions.Match_Absent() }

// logicalID is the template ID of a construct's CloudFormation resource.
func logicalID(st *Stack, c constructs.IConstruct) string {
	return *st.GetLogicalId(c.Node().DefaultChild().(awscdk.CfnElement))
}

func getAtt(st *Stack, c constructs.IConstruct, attr string) map[string]any {
	return map[string]any{"Fn::GetAtt": []any{logicalID(st, c), attr}}
}

func ref(st *Stack, c constructs.IConstruct) map[string]any {
	return map[string]any{"Ref": logicalID(st, c)}
}

// resources returns the template's resources of one type by logical ID.
func resources(tpl map[string]any, typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range tpl["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["Type"] == typ {
			out[id] = r
		}
	}
	return out
}

func props(r map[string]any) map[string]any {
	p, _ := r["Properties"].(map[string]any)
	return p
}

// functionResource returns the template resource of function name.
func functionResource(tb testing.TB, fx *synthesized, key, name string) map[string]any {
	tb.Helper()
	st := fx.stacks[key]
	r, ok := fx.json[key]["Resources"].(map[string]any)[logicalID(st, st.Functions[name])].(map[string]any)
	if !ok {
		tb.Fatalf("%s: no function %s", key, name)
	}
	return r
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func allStacks() []string { return []string{devStack, prodStack, extJWTStack} }

// --- tables -----------------------------------------------------------------

func TestTables(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		tpl := fx.templates[key]
		common := map[string]any{
			"BillingMode":                      "PAY_PER_REQUEST",
			"SSESpecification":                 obj(map[string]any{"SSEEnabled": true}),
			"PointInTimeRecoverySpecification": obj(map[string]any{"PointInTimeRecoveryEnabled": true}),
			"TimeToLiveSpecification":          absent(),
		}
		with := func(m map[string]any) map[string]any {
			for k, v := range common {
				m[k] = v
			}
			return m
		}
		hasProps(t, tpl, "AWS::DynamoDB::Table", with(map[string]any{
			"KeySchema":            arrEq(map[string]any{"AttributeName": "movieId", "KeyType": "HASH"}),
			"AttributeDefinitions": arrEq(map[string]any{"AttributeName": "movieId", "AttributeType": "S"}),
			"StreamSpecification":  map[string]any{"StreamViewType": "NEW_AND_OLD_IMAGES"},
		}))
		hasProps(t, tpl, "AWS::DynamoDB::Table", with(map[string]any{
			"KeySchema": arrEq(
				map[string]any{"AttributeName": "movieId", "KeyType": "HASH"},
				map[string]any{"AttributeName": "frame", "KeyType": "RANGE"}),
			"AttributeDefinitions": arrEq(
				map[string]any{"AttributeName": "movieId", "AttributeType": "S"},
				map[string]any{"AttributeName": "frame", "AttributeType": "N"}),
			"StreamSpecification": absent(),
		}))
		hasProps(t, tpl, "AWS::DynamoDB::Table", with(map[string]any{
			"KeySchema": arrEq(
				map[string]any{"AttributeName": "movieId", "KeyType": "HASH"},
				map[string]any{"AttributeName": "eventKey", "KeyType": "RANGE"}),
			"AttributeDefinitions": arrEq(
				map[string]any{"AttributeName": "movieId", "AttributeType": "S"},
				map[string]any{"AttributeName": "eventKey", "AttributeType": "S"},
				map[string]any{"AttributeName": "historyKey", "AttributeType": "S"}),
			// The history's time order (dynamo.AuditReader.History Queries it).
			"GlobalSecondaryIndexes": arrEq(map[string]any{
				"IndexName": "history",
				"KeySchema": arrEq(
					map[string]any{"AttributeName": "movieId", "KeyType": "HASH"},
					map[string]any{"AttributeName": "historyKey", "KeyType": "RANGE"}),
				"Projection": map[string]any{"ProjectionType": "ALL"},
			}),
			"LocalSecondaryIndexes": absent(),
			"StreamSpecification":   absent(),
		}))
		check(t, "three tables", func() { tpl.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), jsii.Number(3)) })
		// No table is named in the template (CloudFormation names them).
		for id, r := range resources(fx.json[key], "AWS::DynamoDB::Table") {
			if _, named := props(r)["TableName"]; named {
				t.Errorf("%s: table %s has a hard-coded name", key, id)
			}
		}
	}
}

func TestRemovalPolicies(t *testing.T) {
	fx := synth(t)
	for _, tc := range []struct {
		key      string
		policy   string
		protect  bool
		poolProt string
	}{
		{devStack, "Delete", false, "INACTIVE"},
		{prodStack, "Retain", true, "ACTIVE"},
		{extJWTStack, "Retain", true, ""},
	} {
		st, tpl := fx.stacks[tc.key], fx.json[tc.key]
		for _, table := range []constructs.IConstruct{st.Movies, st.Frames, st.Audit} {
			r := tpl["Resources"].(map[string]any)[logicalID(st, table)].(map[string]any)
			if r["DeletionPolicy"] != tc.policy || r["UpdateReplacePolicy"] != tc.policy {
				t.Errorf("%s: table %s DeletionPolicy %v / UpdateReplacePolicy %v, want %s",
					tc.key, logicalID(st, table), r["DeletionPolicy"], r["UpdateReplacePolicy"], tc.policy)
			}
			if got, _ := props(r)["DeletionProtectionEnabled"].(bool); got != tc.protect {
				t.Errorf("%s: table %s DeletionProtectionEnabled %v, want %v", tc.key, logicalID(st, table), got, tc.protect)
			}
		}
		for id, r := range resources(tpl, "AWS::Logs::LogGroup") {
			if r["DeletionPolicy"] != tc.policy {
				t.Errorf("%s: log group %s DeletionPolicy %v, want %s", tc.key, id, r["DeletionPolicy"], tc.policy)
			}
		}
		pools := resources(tpl, "AWS::Cognito::UserPool")
		if tc.poolProt == "" {
			if len(pools) != 0 {
				t.Errorf("%s: %d user pools with an external issuer, want none", tc.key, len(pools))
			}
			continue
		}
		if len(pools) != 1 {
			t.Fatalf("%s: %d user pools, want 1", tc.key, len(pools))
		}
		for id, r := range pools {
			if r["DeletionPolicy"] != tc.policy {
				t.Errorf("%s: user pool %s DeletionPolicy %v, want %s", tc.key, id, r["DeletionPolicy"], tc.policy)
			}
			if got := props(r)["DeletionProtection"]; got != tc.poolProt {
				t.Errorf("%s: user pool DeletionProtection %v, want %s", tc.key, got, tc.poolProt)
			}
		}
	}
}

// --- queues -----------------------------------------------------------------

func TestTraceQueue(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st, tpl := fx.stacks[key], fx.templates[key]
		workerTimeout, _ := props(functionResource(t, fx, key, Worker))["Timeout"].(float64)
		if workerTimeout <= 0 {
			t.Fatalf("%s: worker has no timeout", key)
		}
		q := props(fx.json[key]["Resources"].(map[string]any)[logicalID(st, st.TraceQueue)].(map[string]any))
		vis, _ := q["VisibilityTimeout"].(float64)
		if vis < 6*workerTimeout {
			t.Errorf("%s: queue visibility %vs < 6 x worker timeout %vs", key, vis, workerTimeout)
		}
		redrive, _ := q["RedrivePolicy"].(map[string]any)
		if n, _ := redrive["maxReceiveCount"].(float64); n < 5 {
			t.Errorf("%s: maxReceiveCount %v, want >= 5", key, redrive["maxReceiveCount"])
		}
		hasProps(t, tpl, "AWS::SQS::Queue", map[string]any{
			"RedrivePolicy": obj(map[string]any{"deadLetterTargetArn": getAtt(st, st.TraceDLQ, "Arn")}),
		})
		for id, r := range resources(fx.json[key], "AWS::SQS::Queue") {
			if props(r)["SqsManagedSseEnabled"] != true && props(r)["KmsMasterKeyId"] == nil {
				t.Errorf("%s: queue %s is not encrypted at rest", key, id)
			}
			if _, named := props(r)["QueueName"]; named {
				t.Errorf("%s: queue %s has a hard-coded name", key, id)
			}
		}
		// Every queue refuses plain HTTP.
		for _, q := range []awssqs.Queue{st.TraceQueue, st.TraceDLQ, st.StreamFailures, st.StreamPoison} {
			hasProps(t, tpl, "AWS::SQS::QueuePolicy", map[string]any{
				"Queues": arrEq(ref(st, q)),
				"PolicyDocument": obj(map[string]any{"Statement": arr(obj(map[string]any{
					"Effect": "Deny", "Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
				}))}),
			})
		}
	}
}

// --- functions --------------------------------------------------------------

var wantEnv = map[string][]string{
	API:             {envvar.AuditTable, envvar.CORSOrigin, envvar.FFmpeg, envvar.FFprobe, envvar.FramesTable, envvar.LeaseSeconds, envvar.LogLevel, envvar.MoviesBucket, envvar.MoviesTable, envvar.MaxUploadBytes},
	StreamProcessor: {envvar.AuditTable, envvar.LeaseSeconds, envvar.LogLevel, envvar.PoisonQueueURL, envvar.TraceQueueURL},
	Worker:          {envvar.FFmpeg, envvar.FFprobe, envvar.FramesTable, envvar.LeaseSeconds, envvar.LogLevel, envvar.MoviesBucket, envvar.MoviesTable, envvar.TraceQueueURL},
	Ingest:          {envvar.FFmpeg, envvar.FFprobe, envvar.LeaseSeconds, envvar.LogLevel, envvar.MoviesBucket, envvar.MoviesTable, envvar.UploadQueueURL},
	Sweeper:         {envvar.FramesTable, envvar.LeaseSeconds, envvar.LogLevel, envvar.MoviesBucket, envvar.MoviesTable},
}

func TestFunctions(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st, tpl, cfg := fx.stacks[key], fx.templates[key], fx.configs[key]
		// Ours, plus CDK's own bucket-notifications custom resource handler
		// and BucketDeployment handler (web.go), and in a destroy
		// environment its handler emptying the buckets on delete.
		cdks := 2
		if !cfg.Retain() {
			cdks = 3
		}
		check(t, "our functions and CDK's", func() {
			tpl.ResourceCountIs(jsii.String("AWS::Lambda::Function"), jsii.Number(float64(len(Functions)+cdks)))
		})
		for _, name := range Functions {
			fn := st.Functions[name]
			p := props(functionResource(t, fx, key, name))
			if p["Runtime"] != "provided.al2023" || p["Handler"] != "bootstrap" {
				t.Errorf("%s/%s: runtime %v handler %v", key, name, p["Runtime"], p["Handler"])
			}
			if a, _ := p["Architectures"].([]any); len(a) != 1 || a[0] != "arm64" {
				t.Errorf("%s/%s: architectures %v, want [arm64]", key, name, p["Architectures"])
			}
			if _, named := p["FunctionName"]; named {
				t.Errorf("%s/%s: hard-coded function name", key, name)
			}
			vars, _ := p["Environment"].(map[string]any)["Variables"].(map[string]any)
			wantVars := wantEnv[name]
			if name == API && cfg.CORSOrigin == "" {
				wantVars = slices.DeleteFunc(slices.Clone(wantVars), func(v string) bool { return v == envvar.CORSOrigin })
			}
			if got, want := strings.Join(sortedKeys(vars), ","), strings.Join(wantVars, ","); got != want {
				t.Errorf("%s/%s: environment %s, want %s", key, name, got, want)
			}
			if vars[envvar.LeaseSeconds] != "900" || vars[envvar.LogLevel] != cfg.LogLevel {
				t.Errorf("%s/%s: LEASE_SECONDS %v LOG_LEVEL %v", key, name, vars[envvar.LeaseSeconds], vars[envvar.LogLevel])
			}
			hasProps(t, tpl, "AWS::Lambda::Function", map[string]any{
				"Role":          getAtt(st, st.Roles[name], "Arn"),
				"LoggingConfig": map[string]any{"LogFormat": "JSON", "LogGroup": ref(st, fn.LogGroup())},
			})
			hasProps(t, tpl, "AWS::Logs::LogGroup", map[string]any{"RetentionInDays": cfg.LogRetentionDays})
		}
		api := props(functionResource(t, fx, key, API))["Environment"].(map[string]any)["Variables"].(map[string]any)
		if cfg.CORSOrigin != "" && api[envvar.CORSOrigin] != cfg.CORSOrigin {
			t.Errorf("%s: CORS_ORIGIN %v, want %s", key, api[envvar.CORSOrigin], cfg.CORSOrigin)
		}
		// MOVIE_MAX_BYTES: 16 GiB, above the one-hour simulation's 3.64 GB
		// (functions/tools/simhour checks it against the API's parts).
		if api[envvar.MaxUploadBytes] != "17179869184" || MovieMaxBytes != 16<<30 {
			t.Errorf("%s: MOVIE_MAX_BYTES %v, want 17179869184 (16 GiB)", key, api[envvar.MaxUploadBytes])
		}
		for name, want := range map[string]float64{API: APITimeoutSeconds, StreamProcessor: StreamProcessorTimeoutSeconds, Worker: WorkerTimeoutSeconds} {
			if got := props(functionResource(t, fx, key, name))["Timeout"]; got != want {
				t.Errorf("%s/%s: timeout %v, want %v", key, name, got, want)
			}
		}
		// The API decodes frame images: a whole vCPU (Lambda's 1,769 MB),
		// not the 1/7 of one that 256 MB gets (a 1080p jump took ~2 s).
		if got := props(functionResource(t, fx, key, API))["MemorySize"]; got != float64(APIMemoryMB) {
			t.Errorf("%s/%s: memory %v MB, want %d", key, API, got, APIMemoryMB)
		}
	}
}

// The development identity (DEV_AUTH and anything else DEV_*) must never be
// configured in AWS.
func TestNoDevEnvironmentVariables(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		for id, r := range resources(fx.json[key], "AWS::Lambda::Function") {
			env, _ := props(r)["Environment"].(map[string]any)
			vars, _ := env["Variables"].(map[string]any)
			for k := range vars {
				if strings.HasPrefix(strings.ToUpper(k), "DEV_") {
					t.Errorf("%s: function %s sets %s", key, id, k)
				}
			}
		}
	}
}

// --- IAM --------------------------------------------------------------------

// grants returns "action on resource" for every statement of every policy
// attached to the role, with resources named by label (or "*").
func grants(tb testing.TB, fx *synthesized, key, fn string) map[string]bool {
	tb.Helper()
	st, tpl := fx.stacks[key], fx.json[key]
	labels := map[string]string{
		logicalID(st, st.Movies): "movies", logicalID(st, st.Frames): "frames", logicalID(st, st.Audit): "audit",
		logicalID(st, st.TraceQueue): "traceQueue", logicalID(st, st.TraceDLQ): "traceDLQ",
		logicalID(st, st.StreamFailures): "streamFailures", logicalID(st, st.StreamPoison): "streamPoison",
		logicalID(st, st.MoviesBucket): "moviesBucket", logicalID(st, st.UploadQueue): "uploadQueue",
	}
	for _, name := range Functions {
		labels[logicalID(st, st.Functions[name].LogGroup())] = name + "Logs"
	}
	var label func(res any) string
	label = func(res any) string {
		switch r := res.(type) {
		case string:
			return r
		case map[string]any:
			// {"Fn::Join": ["", [{"Fn::GetAtt": [bucket, "Arn"]}, "/uploads/*"]]}
			if j, ok := r["Fn::Join"].([]any); ok && len(j) == 2 && j[0] == "" {
				var b strings.Builder
				for _, part := range j[1].([]any) {
					b.WriteString(label(part))
				}
				return b.String()
			}
			if ga, ok := r["Fn::GetAtt"].([]any); ok {
				l, ok := labels[ga[0].(string)]
				if !ok {
					l = ga[0].(string)
				}
				return l + "." + ga[1].(string)
			}
		}
		return fmt.Sprint(res)
	}
	list := func(v any) []any {
		if l, ok := v.([]any); ok {
			return l
		}
		return []any{v}
	}
	roleID := logicalID(st, st.Roles[fn])
	out := map[string]bool{}
	for _, typ := range []string{"AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"} {
		for _, pol := range resources(tpl, typ) {
			attached := false
			for _, r := range list(props(pol)["Roles"]) {
				if m, ok := r.(map[string]any); ok && m["Ref"] == roleID {
					attached = true
				}
			}
			if !attached {
				continue
			}
			for _, s := range list(props(pol)["PolicyDocument"].(map[string]any)["Statement"]) {
				s := s.(map[string]any)
				if s["Effect"] != "Allow" {
					continue
				}
				for _, a := range list(s["Action"]) {
					for _, r := range list(s["Resource"]) {
						out[fmt.Sprintf("%s on %s", a, label(r))] = true
					}
				}
			}
		}
	}
	role := props(tpl["Resources"].(map[string]any)[roleID].(map[string]any))
	if m, ok := role["ManagedPolicyArns"]; ok {
		tb.Errorf("%s: %s role has managed policies %v", key, fn, m)
	}
	if _, ok := role["Policies"]; ok {
		tb.Errorf("%s: %s role has inline policies outside its default policy", key, fn)
	}
	return out
}

func grantSet(resource string, actions ...string) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = a + " on " + resource
	}
	return out
}

func TestLeastPrivilege(t *testing.T) {
	fx := synth(t)
	logs := func(fn string) []string {
		return grantSet(fn+"Logs.Arn", "logs:CreateLogStream", "logs:PutLogEvents")
	}
	want := map[string][]string{
		API: concat(logs(API),
			grantSet("movies.Arn", "dynamodb:GetItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:UpdateItem", "dynamodb:PutItem"),
			grantSet("frames.Arn", "dynamodb:Query"),
			grantSet("audit.Arn/index/history", "dynamodb:Query"),
			grantSet("moviesBucket.Arn/uploads/*", "s3:PutObject", "s3:PutObjectTagging"),
			grantSet("moviesBucket.Arn/frames/*", "s3:GetObject"),
			grantSet("moviesBucket.Arn", "s3:ListBucket")),
		Ingest: concat(logs(Ingest),
			grantSet("movies.Arn", "dynamodb:GetItem", "dynamodb:UpdateItem"),
			grantSet("moviesBucket.Arn/uploads/*", "s3:GetObject", "s3:DeleteObject", "s3:DeleteObjectTagging"),
			grantSet("moviesBucket.Arn/frames/*", "s3:PutObject", "s3:DeleteObject", "s3:GetObject"),
			grantSet("moviesBucket.Arn", "s3:ListBucket"),
			grantSet("uploadQueue.Arn", "sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage",
				"sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage")),
		StreamProcessor: concat(logs(StreamProcessor),
			grantSet("movies.StreamArn", "dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"),
			grantSet("*", "dynamodb:ListStreams"),
			grantSet("traceQueue.Arn", "sqs:SendMessage"),
			grantSet("streamFailures.Arn", "sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"),
			grantSet("streamPoison.Arn", "sqs:SendMessage"),
			grantSet("audit.Arn", "dynamodb:PutItem")),
		Worker: concat(logs(Worker),
			grantSet("movies.Arn", "dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem"),
			grantSet("frames.Arn", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:DeleteItem"),
			grantSet("traceQueue.Arn", "sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage",
				"sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage"),
			grantSet("moviesBucket.Arn/frames/*", "s3:GetObject"),
			grantSet("moviesBucket.Arn/tracker/*", "s3:GetObject", "s3:PutObject"),
			grantSet("moviesBucket.Arn", "s3:ListBucket")),
		Sweeper: concat(logs(Sweeper),
			grantSet("movies.Arn", "dynamodb:Scan", "dynamodb:UpdateItem", "dynamodb:DeleteItem"),
			grantSet("frames.Arn", "dynamodb:Query", "dynamodb:BatchWriteItem"),
			grantSet("moviesBucket.Arn/uploads/*", "s3:DeleteObject"),
			grantSet("moviesBucket.Arn/*", "s3:DeleteObject"),
			grantSet("moviesBucket.Arn", "s3:ListBucket")),
	}
	// Active X-Ray tracing: CDK grants these on * (no resource-level
	// permissions exist for them).
	xray := map[string]bool{"xray:PutTraceSegments on *": true, "xray:PutTelemetryRecords on *": true}
	for fn := range want {
		want[fn] = append(want[fn], "xray:PutTraceSegments on *", "xray:PutTelemetryRecords on *")
	}
	for _, key := range allStacks() {
		for _, fn := range Functions {
			got := grants(t, fx, key, fn)
			wantSet := map[string]bool{}
			for _, g := range want[fn] {
				wantSet[g] = true
				if !got[g] {
					t.Errorf("%s: %s lacks %s", key, fn, g)
				}
			}
			for g := range got {
				if !wantSet[g] {
					t.Errorf("%s: %s has %s, which it does not need", key, fn, g)
				}
			}
			// The rules of the issue, stated on their own.
			for g := range got {
				switch {
				case fn == API && strings.HasPrefix(g, "sqs:"):
					t.Errorf("%s: the API may not use SQS: %s", key, g)
				case fn == StreamProcessor && strings.HasSuffix(g, " on movies.Arn"):
					t.Errorf("%s: the stream processor may not touch movie items: %s", key, g)
				case fn == Worker && strings.Contains(g, " on audit."):
					t.Errorf("%s: the worker may not touch the audit table: %s", key, g)
				case strings.HasSuffix(g, " on *") && g != "dynamodb:ListStreams on *" && !xray[g]:
					t.Errorf("%s: %s has a wildcard grant: %s", key, fn, g)
				}
			}
		}
	}
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// --- event sources ----------------------------------------------------------

func TestStreamEventSource(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st, tpl := fx.stacks[key], fx.templates[key]
		hasProps(t, tpl, "AWS::Lambda::EventSourceMapping", map[string]any{
			"EventSourceArn":                 getAtt(st, st.Movies, "StreamArn"),
			"FunctionName":                   ref(st, st.Functions[StreamProcessor]),
			"StartingPosition":               "TRIM_HORIZON",
			"BatchSize":                      StreamBatchSize,
			"FunctionResponseTypes":          arrEq("ReportBatchItemFailures"),
			"BisectBatchOnFunctionError":     true,
			"MaximumRetryAttempts":           StreamRetryAttempts,
			"MaximumRecordAgeInSeconds":      StreamMaxRecordAgeHours * 3600,
			"ParallelizationFactor":          1,
			"MaximumBatchingWindowInSeconds": 1,
			"DestinationConfig": map[string]any{
				"OnFailure": map[string]any{"Destination": getAtt(st, st.StreamFailures, "Arn")},
			},
			"FilterCriteria": map[string]any{"Filters": arrEq(
				map[string]any{"Pattern": `{"dynamodb":{"NewImage":{"status":{"S":["tracing"]}}},"eventName":["INSERT","MODIFY"]}`},
				map[string]any{"Pattern": `{"dynamodb":{"OldImage":{"status":{"S":["tracing"]}}},"eventName":["MODIFY"]}`},
				map[string]any{"Pattern": `{"dynamodb":{"NewImage":{"status":{"S":["traced","tracing_failed"]}}},"eventName":["INSERT"]}`},
				map[string]any{"Pattern": `{"dynamodb":{"NewImage":{"calibration":{"M":{"unit":{"S":["um","mm","cm","m","km","in","ft"]}}}}},"eventName":["INSERT","MODIFY"]}`},
				map[string]any{"Pattern": `{"dynamodb":{"OldImage":{"calibration":{"M":{"unit":{"S":["um","mm","cm","m","km","in","ft"]}}}}},"eventName":["MODIFY"]}`},
			)},
		})
		if StreamRetryAttempts < 0 || StreamRetryAttempts > 10000 || StreamMaxRecordAgeHours*3600 > 604800 {
			t.Errorf("stream retries must be bounded")
		}
	}
}

func TestWorkerEventSource(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st, tpl := fx.stacks[key], fx.templates[key]
		hasProps(t, tpl, "AWS::Lambda::EventSourceMapping", map[string]any{
			"EventSourceArn":        getAtt(st, st.TraceQueue, "Arn"),
			"FunctionName":          ref(st, st.Functions[Worker]),
			"BatchSize":             WorkerBatchSize,
			"FunctionResponseTypes": arrEq("ReportBatchItemFailures"),
			"ScalingConfig":         map[string]any{"MaximumConcurrency": fx.configs[key].WorkerMaxConcurrency},
		})
		check(t, "three event sources (stream, trace queue, upload queue)", func() {
			tpl.ResourceCountIs(jsii.String("AWS::Lambda::EventSourceMapping"), jsii.Number(3))
		})
	}
}

// --- HTTP API ---------------------------------------------------------------

// TestSweeperSchedule: an EventBridge rule runs the sweeper every
// SweepEveryMinutes, without retries (the next sweep makes up for a missed
// one), and EventBridge may invoke the sweeper.
func TestSweeperSchedule(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st, tpl := fx.stacks[key], fx.templates[key]
		hasProps(t, tpl, "AWS::Events::Rule", map[string]any{
			"ScheduleExpression": "rate(5 minutes)",
			"State":              "ENABLED",
			"Targets": arr(obj(map[string]any{
				"Arn":         map[string]any{"Fn::GetAtt": []any{logicalID(st, st.Functions[Sweeper]), "Arn"}},
				"RetryPolicy": map[string]any{"MaximumRetryAttempts": 0},
			})),
		})
		hasProps(t, tpl, "AWS::Lambda::Permission", map[string]any{
			"Action": "lambda:InvokeFunction", "Principal": "events.amazonaws.com",
			"FunctionName": map[string]any{"Fn::GetAtt": []any{logicalID(st, st.Functions[Sweeper]), "Arn"}},
		})
	}
}

func TestHTTPAPI(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st, tpl, cfg := fx.stacks[key], fx.templates[key], fx.configs[key]
		// CORS only for an extra origin (dev's localhost page); the deployed
		// page shares the distribution's origin with the API.
		var cors any = absent()
		if cfg.CORSOrigin != "" {
			cors = obj(map[string]any{
				"AllowOrigins": arrEq(cfg.CORSOrigin),
				"AllowHeaders": arr("authorization", "content-type", "lease-id", "idempotency-key"),
				"AllowMethods": arr("GET", "POST", "PUT", "DELETE", "OPTIONS"),
			})
		}
		hasProps(t, tpl, "AWS::ApiGatewayV2::Api", map[string]any{"ProtocolType": "HTTP", "CorsConfiguration": cors})
		hasProps(t, tpl, "AWS::ApiGatewayV2::Stage", map[string]any{
			"StageName":  "$default",
			"AutoDeploy": true,
			"DefaultRouteSettings": obj(map[string]any{
				"ThrottlingRateLimit": cfg.Throttle.RateLimit, "ThrottlingBurstLimit": cfg.Throttle.BurstLimit,
			}),
			"AccessLogSettings": map[string]any{
				"DestinationArn": assertions.Match_AnyValue(),
				"Format":         assertions.Match_StringLikeRegexp(jsii.String(`\$context\.requestId`)),
			},
		})

		// Routes: every method through the JWT authorizer except the beacon
		// release; no ANY/OPTIONS/$default route, so API Gateway answers
		// preflight requests itself.
		routes := resources(fx.json[key], "AWS::ApiGatewayV2::Route")
		authorizers := resources(fx.json[key], "AWS::ApiGatewayV2::Authorizer")
		if len(authorizers) != 1 {
			t.Fatalf("%s: %d authorizers, want 1", key, len(authorizers))
		}
		var authorizerID string
		for id := range authorizers {
			authorizerID = id
		}
		gotRoutes := map[string]string{}
		for _, r := range routes {
			p := props(r)
			auth, _ := p["AuthorizationType"].(string)
			if auth == "JWT" {
				if a, _ := p["AuthorizerId"].(map[string]any); a["Ref"] != authorizerID {
					t.Errorf("%s: route %v uses authorizer %v", key, p["RouteKey"], p["AuthorizerId"])
				}
			}
			gotRoutes[p["RouteKey"].(string)] = auth
		}
		wantRoutes := map[string]string{
			"GET /{proxy+}": "JWT", "POST /{proxy+}": "JWT", "PUT /{proxy+}": "JWT", "PATCH /{proxy+}": "JWT",
			"DELETE /{proxy+}": "JWT", "POST " + BeaconReleasePath: "NONE",
		}
		if fmt.Sprint(gotRoutes) != fmt.Sprint(wantRoutes) {
			t.Errorf("%s: routes %v, want %v", key, gotRoutes, wantRoutes)
		}

		// The authorizer: the stack's user pool and its browser client, or
		// the configured external issuer.
		jwt := map[string]any{"Issuer": extIssuer, "Audience": arrEq(extAudience)}
		if cfg.JWT == nil {
			pool := st.UserPool
			client := pool.Node().FindChild(jsii.String("BrowserClient"))
			// Cognito's issuer (the iss of its tokens), written once in issuer().
			issuer := map[string]any{"Fn::Join": []any{"", []any{"https://cognito-idp.", map[string]any{"Ref": "AWS::Region"}, ".amazonaws.com/", ref(st, pool)}}}
			jwt = map[string]any{"Issuer": issuer, "Audience": arrEq(ref(st, client))}
		}
		hasProps(t, tpl, "AWS::ApiGatewayV2::Authorizer", map[string]any{
			"AuthorizerType":   "JWT",
			"IdentitySource":   arrEq("$request.header.Authorization"),
			"JwtConfiguration": jwt,
		})
	}
	// The default user pool and client.
	// MFA per environment: optional in dev (cdk.json), required in prod.
	for key, mfa := range map[string]string{devStack: "OPTIONAL", prodStack: "ON"} {
		hasProps(t, fx.templates[key], "AWS::Cognito::UserPool", map[string]any{
			"AdminCreateUserConfig": obj(map[string]any{"AllowAdminCreateUserOnly": true}),
			"MfaConfiguration":      mfa,
			"EnabledMfas":           arrEq("SOFTWARE_TOKEN_MFA"),
		})
		hasProps(t, fx.templates[key], "AWS::Cognito::UserPoolClient", map[string]any{
			"GenerateSecret":    false,
			"ExplicitAuthFlows": arrEq("ALLOW_REFRESH_TOKEN_AUTH"),
		})
	}
}

// --- alarms and outputs -----------------------------------------------------

func TestAlarms(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st, tpl, cfg := fx.stacks[key], fx.templates[key], fx.configs[key]
		check(t, "alarm count", func() {
			// Queues, iterator age, per-function errors and throttles, then
			// (ops) trace queue age, worker duration, API 5xx and latency,
			// two worker business metrics and one throttle alarm per table.
			tpl.ResourceCountIs(jsii.String("AWS::CloudWatch::Alarm"), jsii.Number(float64(5+2*len(Functions)+4+2+3)))
		})
		for q, threshold := range map[awssqs.Queue]int{st.TraceDLQ: cfg.Alarms.DLQDepth, st.UploadDLQ: cfg.Alarms.DLQDepth, st.StreamFailures: cfg.Alarms.DLQDepth, st.StreamPoison: 1} {
			hasProps(t, tpl, "AWS::CloudWatch::Alarm", map[string]any{
				"Namespace":  "AWS/SQS",
				"MetricName": "ApproximateNumberOfMessagesVisible",
				"Dimensions": arrEq(map[string]any{"Name": "QueueName", "Value": getAtt(st, q, "QueueName")}),
				"Threshold":  threshold,
			})
		}
		hasProps(t, tpl, "AWS::CloudWatch::Alarm", map[string]any{
			"Namespace":  "AWS/Lambda",
			"MetricName": "IteratorAge",
			"Statistic":  "Maximum",
			"Dimensions": arrEq(map[string]any{"Name": "FunctionName", "Value": ref(st, st.Functions[StreamProcessor])}),
			"Threshold":  cfg.Alarms.IteratorAgeSeconds * 1000,
		})
		for _, name := range Functions {
			for metric, threshold := range map[string]int{"Errors": cfg.Alarms.FunctionErrors, "Throttles": cfg.Alarms.FunctionThrottles} {
				hasProps(t, tpl, "AWS::CloudWatch::Alarm", map[string]any{
					"Namespace":          "AWS/Lambda",
					"MetricName":         metric,
					"Statistic":          "Sum",
					"Dimensions":         arrEq(map[string]any{"Name": "FunctionName", "Value": ref(st, st.Functions[name])}),
					"Threshold":          threshold,
					"ComparisonOperator": "GreaterThanOrEqualToThreshold",
					"TreatMissingData":   "notBreaching",
				})
			}
		}
		// Every alarm notifies the stack's topic (alarm and OK), and the
		// external topic too when one is configured.
		topic := ref(st, st.AlarmTopic)
		for id, r := range resources(fx.json[key], "AWS::CloudWatch::Alarm") {
			for _, kind := range []string{"AlarmActions", "OKActions"} {
				actions, _ := props(r)[kind].([]any)
				want := []any{topic}
				if cfg.Alarms.TopicArn != "" {
					want = append(want, cfg.Alarms.TopicArn)
				}
				if fmt.Sprint(actions) != fmt.Sprint(want) {
					t.Errorf("%s: alarm %s %s %v, want %v", key, id, kind, actions, want)
				}
			}
		}
	}
}

func TestOutputs(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		st, tpl := fx.stacks[key], fx.templates[key]
		for id, value := range map[string]any{
			"MoviesTableName":      ref(st, st.Movies),
			"FramesTableName":      ref(st, st.Frames),
			"AuditTableName":       ref(st, st.Audit),
			"TraceQueueUrl":        ref(st, st.TraceQueue),
			"StreamPoisonQueueUrl": ref(st, st.StreamPoison),
			"ApiUrl":               assertions.Match_AnyValue(),
		} {
			check(t, key+" output "+id, func() {
				tpl.HasOutput(jsii.String(id), map[string]any{"Value": value})
			})
		}
	}
}

// --- cdk-nag ----------------------------------------------------------------

func TestNagAwsSolutions(t *testing.T) {
	fx := synth(t)
	errs, err := Errors(fx.outdir)
	if err != nil {
		t.Fatal(err)
	}
	warnings, err := Annotations(fx.outdir, "aws:cdk:warning")
	if err != nil {
		t.Fatal(err)
	}
	canary := map[string]bool{}
	for _, e := range errs {
		rule := strings.SplitN(e.Message, ":", 2)[0]
		if e.Stack == *fx.canary.StackName() {
			canary[rule] = true
			continue
		}
		t.Errorf("%s: unsuppressed error at %s: %s", e.Stack, e.Path, e.Message)
	}
	for _, w := range warnings {
		t.Logf("%s: warning at %s: %s", w.Stack, w.Path, w.Message)
	}
	// The rule pack really ran: the canary's queue breaks two of its rules.
	if !canary["AwsSolutions-SQS3"] || !canary["AwsSolutions-SQS4"] {
		t.Errorf("cdk-nag did not flag the canary queue (want AwsSolutions-SQS3 and -SQS4): %v", canary)
	}
	// Every suppression says why.
	for _, key := range allStacks() {
		for _, id := range sortedKeys(fx.json[key]["Resources"].(map[string]any)) {
			r := fx.json[key]["Resources"].(map[string]any)[id]
			md, _ := r.(map[string]any)["Metadata"].(map[string]any)
			nag, _ := md["cdk_nag"].(map[string]any)
			rules, _ := nag["rules_to_suppress"].([]any)
			for _, s := range rules {
				s := s.(map[string]any)
				if reason, _ := s["reason"].(string); len(strings.Fields(reason)) < 8 {
					t.Errorf("%s: suppression of %v on %s has no real reason: %q", key, s["id"], id, reason)
				}
				t.Logf("%s: %s suppresses %v %v", key, id, s["id"], s["applies_to"])
			}
		}
	}
}

// The synthesized stacks name only the assets they were given.
func TestAssetsFromAssetRoot(t *testing.T) {
	fx := synth(t)
	for _, key := range allStacks() {
		for id, r := range resources(fx.json[key], "AWS::Lambda::Function") {
			if strings.HasPrefix(id, "BucketNotificationsHandler") {
				continue // CDK's own custom resource, inline code
			}
			code, _ := props(r)["Code"].(map[string]any)
			if _, ok := code["S3Key"]; !ok {
				t.Errorf("%s: function %s code %v is not an S3 asset", key, id, code)
			}
		}
	}
}
