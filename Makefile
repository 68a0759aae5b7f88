# Movie tracing locks: build, test and lint entry points.
#
# Keep targets in the sections below, each with a `## description` after its
# name so `make help` lists it, and add every target to .PHONY unless it
# makes a file of that name.

SHELL       := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS   += --no-print-directory

GO    ?= go
TOOLS := $(CURDIR)/.tools

# Test flags for `make test`; override e.g. `make test TEST_FLAGS='-count=1 -run TestX' PKGS=./functions/...`.
# No -race by default: with a warm build cache it costs little, but from an
# empty one (a new machine, as CI may be) compiling the tree for -race took
# 868 s against 414 s without, on 2 cores (measured with
# `GOCACHE=$(mktemp -d) go test [-race] -count=1 -run '^$' ./...`); `make
# test-race` runs the same suite with it. -timeout 25m: the browser tests (functions/local/e2e)
# took over go test's default 10 minutes on a machine at load average 40.
TEST_FLAGS ?= -count=1 -timeout 25m
PKGS       ?= ./...

STATICCHECK_VERSION := v0.8.2

# Every package of the module (non-test imports): the product ones are those
# outside functions/testkit, functions/tools and functions/local (the Lambda
# mains, their adapters, domain/events/schema, infra, web) and the page's
# build command web/webauth/cmd/bundle (a tool kept beside what it builds). Override only to
# see the check fail, e.g. with a scratch package.
PRODUCT_IMPORTS_PKGS ?= ./...

WITHEMULATORS := $(TOOLS)/bin/withemulators

##@ Help

.PHONY: help
help: ## Show this list of targets
	@awk 'BEGIN { FS = ":.*## " } \
		/^##@/ { printf "\n%s\n", substr($$0, 5); next } \
		/^[a-zA-Z0-9_%-]+:.*## / { printf "  %-16s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

##@ Test

.PHONY: test
test: vet withemulators ## go vet, then every test against fresh DynamoDB Local + SQS emulators
	$(WITHEMULATORS) -- $(GO) test $(TEST_FLAGS) $(PKGS)

.PHONY: test-race
test-race: ## make test with the race detector
	@$(MAKE) test TEST_FLAGS='$(TEST_FLAGS) -race'

.PHONY: vet
vet: ## go vet ./...
	$(GO) vet ./...

# Built rather than `go run`: go run turns every non-zero exit into 1 and
# does not pass SIGTERM on.
.PHONY: withemulators
withemulators:
	@$(GO) build -o $(WITHEMULATORS) ./functions/local/withemulators

# Not part of `make test`: each mutant recompiles and reruns a package's tests.
.PHONY: mutate
mutate: withemulators ## Hand-mutation test: each mutant of functions/tools/mutate/mutants.txt applied, its package's tests run, reverted; fails below 95% killed per package (MUTATE_FLAGS='-only domain-')
	$(WITHEMULATORS) -- $(GO) run ./functions/tools/mutate $(MUTATE_FLAGS)

##@ Lint

.PHONY: lint
lint: fmt-check vet staticcheck tidy-check domain-imports product-imports js-imports ## All static checks

.PHONY: fmt-check
fmt-check: ## Fail if any Go file is not gofmt'ed
	@files=$$(git ls-files --cached --others --exclude-standard -- '*.go' | xargs -r gofmt -l); \
	if [ -n "$$files" ]; then echo "gofmt needed on:"; echo "$$files"; exit 1; fi

.PHONY: staticcheck
staticcheck: ## staticcheck ./... (from the Go module proxy, pinned)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

.PHONY: tidy-check
tidy-check: ## Fail if go.mod/go.sum are not what `go mod tidy` makes
	$(GO) mod tidy -diff

.PHONY: product-imports
product-imports: ## Fail if a product package (all but functions/testkit, functions/tools, functions/local and web's bundler) depends on one of those
	@kit='^github.com/movietrace/tracinglocks/functions/(testkit|tools|local)(/|$$)'; \
	tool='^github.com/movietrace/tracinglocks/web/webauth/cmd/'; \
	bad=$$($(GO) list -f '{{.ImportPath}} {{join .Deps " "}}' $(PRODUCT_IMPORTS_PKGS) \
		| awk -v kit="$$kit" -v tool="$$tool" '$$1 !~ kit && $$1 !~ tool { for (i = 2; i <= NF; i++) if ($$i ~ kit) print $$1 " -> " $$i }'); \
	if [ -n "$$bad" ]; then echo "product code must not import functions/testkit, functions/tools or functions/local:"; echo "$$bad"; exit 1; fi

.PHONY: js-imports
js-imports: ## Fail on an import cycle among the page's modules, a missing module, or an action importing a view or app.js
	$(GO) run ./functions/tools/jsimports -forbid actions/:views/ -forbid actions/:app.js -forbid views/:app.js \
		-forbid state.js:actions/ -forbid state.js:views/ web

.PHONY: domain-imports
domain-imports: ## Fail if domain/ imports anything outside the standard library
	@bad=$$($(GO) list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' ./domain/... \
		| grep -v '^github.com/movietrace/tracinglocks/domain\(/\|$$\)' || true); \
	if [ -n "$$bad" ]; then echo "domain/ must import only the standard library; it depends on:"; echo "$$bad"; exit 1; fi

##@ Local development

.PHONY: emulators
emulators: withemulators ## Run DynamoDB Local + SQS emulator in the foreground, printing their endpoints
	$(WITHEMULATORS)

.PHONY: run
run: ## The whole system on loopback: emulators, tables, sample movies, API + Analyze page, local OIDC provider, stream processor, worker
	$(GO) run ./functions/local/run

# The deployment-shaped local stack: the page with the response headers of
# the synthesized template's CloudFront policy (TEMPLATE: the dev stack's
# edge kept by infra/stack's tests, or cdk.out/TracingLocks-dev.template.json
# after make synth), the API through its path patterns, the OIDC provider's
# issuer and sign-in pages on two other origins, as Cognito's are.
TEMPLATE ?= infra/stack/testdata/dev-edge.template.json
.PHONY: run-deployed
run-deployed: ## make run in the deployed shape: the template's headers and path routing, the sign-in on other origins (TEMPLATE=...)
	$(GO) run ./functions/local/run -deployed-shape $(TEMPLATE)

.PHONY: web
web: ## Bundle the page's sign-in module (src/auth.js + npm oidc-client-ts, esbuild's Go API) into web/webauth/auth.bundle.js
	$(GO) run ./web/webauth/cmd/bundle

.PHONY: smoke
smoke: ## curl every route of a running `make run`, signed in as Alice and Bob through its OIDC provider (SMOKE_URL=http://127.0.0.1:PORT/ for another port)
	bash functions/local/run/smoke.sh $(SMOKE_URL)

# --- Lambda build and CDK ---
#
# build/<name>/bootstrap for each function (provided.al2023, arm64), the CDK
# app in infra/ (cdk.json), one stack per environment: TracingLocks-$(ENV).
# `synth` runs the Go app directly (Node is needed, the CDK CLI and AWS
# credentials are not); `deploy` and `diff` hand the synthesized cloud
# assembly to the CDK CLI. See docs/deploy.md.

##@ Lambda build and CDK

FUNCTIONS       := api streamprocessor worker ingest sweeper
ENV             ?= dev
CDK_OUT         ?= cdk.out
CDK_CLI_VERSION ?= 2.1148.1
# The CDK CLI: an installed `cdk`, else the pinned one through npx.
CDK             ?= $(if $(shell command -v cdk 2>/dev/null),cdk,npx --yes aws-cdk@$(CDK_CLI_VERSION))
CDK_FLAGS       ?=

build synth deploy diff: export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1
build synth deploy diff: export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20

.PHONY: build
build: $(addprefix build-,$(FUNCTIONS)) ## Build every function into build/<name>/bootstrap (linux/arm64)

build-%: ## Build one function, e.g. make build-worker
	@mkdir -p build/$*
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' -o build/$*/bootstrap ./functions/$*

.PHONY: bench-viewer
bench-viewer: withemulators ## Next-frame display latency of the Analyze page (headless Chromium, local stack): p50/p95 cold and warm
	$(WITHEMULATORS) -- $(GO) run ./functions/tools/benchviewer $(BENCH_VIEWER_FLAGS)

# The ingest's cost against plain decoding (issue 22's measures): real
# footage from Debian's opencv-doc (bench-tracer-deps installs it) and two
# generated 1080p30 H.264 clips of BENCH_INGEST_SECONDS: one as a camera or
# OBS writes it (a keyframe every 60 frames, closed GOPs, B-frames: the
# ingest remuxes it) and one with x264's default scene-cut keyframes (an
# irregular GOP: the ingest encodes it). BENCH_INGEST_BUDGET is each
# range's budget as INGEST_INVOCATION_SECONDS (default the ingest's 600: a
# range with a deadline sizes its remux windows by it; 0: no deadline);
# BENCH_INGEST_EXTRA adds files.
BENCH_INGEST_SECONDS ?= 20
BENCH_INGEST_BUDGET  ?= 600
BENCH_INGEST_EXTRA   ?=
BENCH_INGEST_CLIP    := $(TOOLS)/bench/testsrc2-1080p30-$(BENCH_INGEST_SECONDS)s.mp4
BENCH_INGEST_CAMERA  := $(TOOLS)/bench/testsrc2-1080p30-$(BENCH_INGEST_SECONDS)s-gop60.mp4
.PHONY: bench-ingest
bench-ingest: bench-tracer-deps ## Ingest CPU vs ffmpeg decoding, rendition bytes vs source, S3 writes vs frames (real footage + 1080p30)
	@mkdir -p $(dir $(BENCH_INGEST_CLIP))
	@[ -f $(BENCH_INGEST_CLIP) ] || ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=1920x1080:rate=30 -t $(BENCH_INGEST_SECONDS) \
		-c:v libx264 -preset veryfast -crf 20 -pix_fmt yuv420p $(BENCH_INGEST_CLIP)
	@[ -f $(BENCH_INGEST_CAMERA) ] || ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=1920x1080:rate=30 -t $(BENCH_INGEST_SECONDS) \
		-c:v libx264 -preset veryfast -crf 20 -pix_fmt yuv420p -bf 3 -g 60 -keyint_min 60 -sc_threshold 0 $(BENCH_INGEST_CAMERA)
	$(GO) run ./functions/tools/benchingest -budget $(BENCH_INGEST_BUDGET)s \
		/usr/share/doc/opencv-doc/examples/data/vtest.avi /usr/share/doc/opencv-doc/examples/data/Megamind.avi \
		$(BENCH_INGEST_CAMERA) $(BENCH_INGEST_CLIP) $(BENCH_INGEST_EXTRA)

# Issue 22's 1-hour 1080p30 measure, simulated on the local stack
# (functions/tools/simhour): a SIM_MINUTES-long 1080p30 clip (a 60-second
# unit repeated) uploaded through the API and the presigned PUT, ingested in
# ranges of SIM_BUDGET seconds (INGEST_INVOCATION_SECONDS), each measured
# (wall, CPU by getrusage, peak RSS and /tmp, S3 bytes read and PUTs), then
# extrapolated to 108,000 frames at the deployed function's memory and
# budget, with the arithmetic and a verdict per Lambda limit printed.
# SIM_RENDITION=copy: a camera-like H.264 with a closed GOP of 60 (remuxed);
# x264: H.264 with x264's default keyframes (encoded). Clips in .tools/sim.
SIM_MINUTES   ?= 10
SIM_BUDGET    ?= 60
SIM_RENDITION ?= copy
.PHONY: sim-hour
sim-hour: withemulators ## Issue 22's 1-hour 1080p30 ingest, simulated on the local stack and extrapolated (SIM_MINUTES, SIM_BUDGET, SIM_RENDITION=copy|x264)
	$(WITHEMULATORS) -- nice -n 10 $(GO) run ./functions/tools/simhour -minutes $(SIM_MINUTES) -budget $(SIM_BUDGET) -rendition $(SIM_RENDITION)

.PHONY: import
import: ## Upload FILE=... (TITLE=...) through the API of a running make run, or MOVIES_API_URL + MOVIES_API_TOKEN
	@test -n "$(FILE)" || { echo "usage: make import FILE=movie.mp4 [TITLE='A title']" >&2; exit 2; }
	$(GO) run ./functions/tools/importmovie -file "$(FILE)" -title "$(TITLE)"

.PHONY: layer
layer: ## Package the ffmpeg/ffprobe Lambda layer (linux-arm64, from npm) into build/ffmpeg-layer
	$(GO) run ./infra/ffmpeglayer -out build/ffmpeg-layer -cache $(TOOLS)/ffmpeg-layer-npm

# The deployed page: web/'s files plus the sign-in bundle as
# auth.js, into build/web (the stack's BucketDeployment uploads it).
.PHONY: web-dist
web-dist: ## Copy the page and its sign-in bundle into build/web for the stack
	rm -rf build/web && mkdir -p build/web/actions build/web/views
	cp web/index.html web/*.js web/style.css build/web/
	cp web/actions/*.js build/web/actions/
	cp web/views/*.js build/web/views/
	cp web/webauth/auth.bundle.js build/web/auth.js

# ALARM_EMAIL subscribes to the alarm topic (required outside dev unless
# cdk.json sets alarms.email): make synth ENV=prod ALARM_EMAIL=oncall@yourdomain
ALARM_EMAIL ?=
comma := ,
CDK_CONTEXT = {"env":"$(ENV)"$(if $(ALARM_EMAIL),$(comma)"alarmEmail":"$(ALARM_EMAIL)")}

.PHONY: synth
synth: build layer web-dist ## Synthesize TracingLocks-$(ENV) into cdk.out/, offline (make synth ENV=prod ALARM_EMAIL=...)
	rm -rf $(CDK_OUT)
	CDK_OUTDIR=$(CDK_OUT) CDK_CONTEXT_JSON='$(CDK_CONTEXT)' $(GO) run ./infra
	@echo "synthesized $(CDK_OUT)/TracingLocks-$(ENV).template.json"

# The commit before the layout change (issue 21) and what to compare it with.
SYNTH_BEFORE ?= 6865634^
SYNTH_AFTER  ?= HEAD

.PHONY: synth-diff
synth-diff: ## Synthesize SYNTH_BEFORE (default: before the layout change) and SYNTH_AFTER (default HEAD; comma-separated) offline; diff the templates, asset hashes aside
	$(GO) run ./functions/tools/synthdiff -before '$(SYNTH_BEFORE)' -after '$(SYNTH_AFTER)' -env $(ENV)

.PHONY: deploy
deploy: synth ## Deploy TracingLocks-$(ENV) (AWS credentials, bootstrapped account; make deploy ENV=prod)
	$(CDK) deploy --app $(CDK_OUT) $(CDK_FLAGS) TracingLocks-$(ENV)

.PHONY: diff
diff: synth ## Show what deploying TracingLocks-$(ENV) would change
	$(CDK) diff --app $(CDK_OUT) $(CDK_FLAGS) TracingLocks-$(ENV)

# make user ENV=dev EMAIL=a@b NAME='Ada L': an administrator-created user of
# the stack's user pool (Cognito mails a temporary password; the name is the
# display name the API trusts, which users cannot change themselves).
# USER_POOL_ID skips the stack lookup and COGNITO_ENDPOINT points the AWS CLI
# at another endpoint: the test runs the target against cognito-local
# (functions/local/cognitolocal).
USER_POOL_ID     ?=
COGNITO_ENDPOINT ?=
.PHONY: user
user: ## Create a sign-in user: make user ENV=dev EMAIL=you@yourdomain NAME='Your Name' (AWS CLI, credentials)
	@test -n "$(EMAIL)" -a -n "$(NAME)" || { echo "make user: EMAIL=... and NAME=... are required"; exit 1; }
	@pool="$(USER_POOL_ID)"; \
	if [ -z "$$pool" ]; then pool=$$(aws cloudformation describe-stacks --stack-name TracingLocks-$(ENV) \
		--query "Stacks[0].Outputs[?OutputKey=='UserPoolId'].OutputValue" --output text); fi; \
	test -n "$$pool" -a "$$pool" != None || { echo "make user: no UserPoolId output on TracingLocks-$(ENV)"; exit 1; }; \
	aws $(if $(COGNITO_ENDPOINT),--endpoint-url $(COGNITO_ENDPOINT)) cognito-idp admin-create-user --user-pool-id "$$pool" --username "$(EMAIL)" \
		--user-attributes Name=email,Value="$(EMAIL)" Name=email_verified,Value=true Name=name,Value="$(NAME)" \
		--desired-delivery-mediums EMAIL --query 'User.Username' --output text

# make smoke-deployed ENV=dev SMOKE_USER=smoke@yourdomain SMOKE_PASSWORD=...:
# headless Chromium signs in on Cognito's managed login as the smoke user
# (create it with make user; no MFA, so dev, where MFA is optional) and
# walks the page: add a movie, list, Analyze, marker, trace, results, release,
# rename, delete, sign out.
# SMOKE_URL=http://127.0.0.1:8080/ SMOKE_LOGIN=alice runs the same walk
# against make run's (or make run-deployed's) local OIDC provider (the e2e
# tests do it in-process). The walk adds its own movie from the page's file
# picker: a generated clip of SMOKE_CLIP_MB MB (default 100, uploaded in
# parts; 0: a 2 s clip in one PUT), traces it, renames and deletes it.
SMOKE_USER    ?=
SMOKE_LOGIN   ?=
SMOKE_CLIP_MB ?= 100
.PHONY: smoke-deployed
smoke-deployed: ## Browser smoke walk against the deployed page: make smoke-deployed ENV=dev SMOKE_USER=... SMOKE_PASSWORD=...
	@url="$(SMOKE_URL)"; \
	if [ -z "$$url" ]; then url=$$(aws cloudformation describe-stacks --stack-name TracingLocks-$(ENV) \
		--query "Stacks[0].Outputs[?OutputKey=='PageUrl'].OutputValue" --output text); fi; \
	test -n "$(SMOKE_LOGIN)$(SMOKE_USER)" || { echo "make smoke-deployed: SMOKE_USER (with SMOKE_PASSWORD) or SMOKE_LOGIN is required"; exit 1; }; \
	$(GO) run ./functions/tools/smoke/cmd/smoke-browser -url "$$url" -out testoutput/smoke-deployed -clip-mb $(SMOKE_CLIP_MB) \
		$(if $(SMOKE_LOGIN),-login $(SMOKE_LOGIN),-username "$(SMOKE_USER)")

# The trace DLQ's handling (docs/operations.md, TraceDlqDepthAlarm): move
# every message back to the trace queue (functions/worker/redrive: receive,
# send, delete; the local SQS emulator has no StartMessageMoveTask, this
# runs on both). Safe: a job whose lease was replaced is refused by its
# claim and deleted. TRACE_DLQ_URL and TRACE_QUEUE_URL, when both set, skip
# the stack lookup (the emulator test sets them and SQS_ENDPOINT).
TRACE_DLQ_URL   ?=
TRACE_QUEUE_URL ?=
.PHONY: redrive-trace-dlq
redrive-trace-dlq: ## Move the trace DLQ's jobs back to the trace queue: make redrive-trace-dlq ENV=dev (AWS CLI, credentials)
	@dlq="$(TRACE_DLQ_URL)"; q="$(TRACE_QUEUE_URL)"; \
	if [ -z "$$dlq" ] || [ -z "$$q" ]; then \
		out() { aws cloudformation describe-stacks --stack-name TracingLocks-$(ENV) \
			--query "Stacks[0].Outputs[?OutputKey=='$$1'].OutputValue" --output text; }; \
		dlq=$$(out TraceDlqUrl); q=$$(out TraceQueueUrl); \
	fi; \
	test -n "$$dlq" -a "$$dlq" != None -a -n "$$q" -a "$$q" != None || { echo "make redrive-trace-dlq: no TraceDlqUrl/TraceQueueUrl output on TracingLocks-$(ENV)"; exit 1; }; \
	$(GO) run ./functions/worker/redrive -from "$$dlq" -to "$$q"

.PHONY: clean
clean: ## Remove build/ and cdk.out/
	rm -rf build $(CDK_OUT) infra/cdk.out

# --- Proof and benchmarks ---
#
# `make proof` is the nightly proof suite: PROOF_HISTORIES concurrent
# histories against DynamoDB Local, each checked for linearizability
# (porcupine) and for the protocol's invariants, the checker's own tests
# (functions/testkit/proof/...), then the dynamo differential test with
# RAPID_CHECKS checks per command kind (every kind). Every part appends `proof-count key=value ...` lines to
# $(PROOF_COUNTS); cmd/proofsum adds them up into the last line of the
# output, e.g. `proof: histories=1000 violations=0 ...`. A part added later
# (fault injection, fuzzing) goes into proof-suite and appends its own counts
# (faults=N, fuzz_execs=N) to the same file. Failing histories are written to
# testoutput/proof/ as porcupine's HTML visualization plus a text dump.
#
# `make bench` prints one Markdown table: DynamoDB requests and wall time per
# operation, this project next to the anchors' lock protocol, against the
# same DynamoDB Local in one process (BENCH_FLAGS, e.g. '-n 500 -takeovers 20').

##@ Proof and benchmarks

PROOF_HISTORIES ?= 1000
RAPID_CHECKS    ?= 500
PROOF_TIMEOUT   ?= 3h
PROOF_COUNTS    := $(CURDIR)/testoutput/proof/counts.txt
BENCH_FLAGS     ?=
FUZZTIME        ?= 10s
# End-to-end fault-injection runs (functions/testkit/proof/faults; make test runs 3).
FAULTS_RUNS     ?= 50
# Segmented traces under faults (backlogs, killed segments, many invocations,
# the sweeper; functions/testkit/proof/faults/segments_test.go; make test runs 1).
SEGMENT_RUNS    ?= 20

# `make chaos-run` is issue 20's "Done when" on its own: the local stack
# (make run's) on DynamoDB Local behind a proxy losing CHAOS_SHARE of the
# write answers after commit (and the S3 emulator behind one losing as many
# delete and untag answers), CHAOS_UPLOADS uploads, traces, deletes and a
# killed process (functions/testkit/proof/chaos), once with the SDK's retry
# quota as in AWS (none) and once with it drained; its last line counts
# ghost_movies, orphaned_objects, sources_at_risk, unsettled_movies and
# unended_traces, each of which must be 0. `make proof` runs it too.
CHAOS_SHARE   ?= 0.3
CHAOS_UPLOADS ?= 6
CHAOS_COUNTS  := $(CURDIR)/testoutput/chaos/counts.txt

.PHONY: chaos-run
chaos-run: withemulators ## The local stack behind a proxy losing CHAOS_SHARE (0.3) of DynamoDB write answers, killed half way; counts ghost movies, orphaned objects, sources at risk (each must be 0)
	@mkdir -p $(dir $(CHAOS_COUNTS)) && rm -f $(CHAOS_COUNTS)
	@status=0; \
	$(WITHEMULATORS) -- env PROOF_CHAOS=1 PROOF_COUNTS=$(CHAOS_COUNTS) CHAOS_SHARE=$(CHAOS_SHARE) CHAOS_UPLOADS=$(CHAOS_UPLOADS) \
		$(GO) test -count=1 -v -timeout 30m -run '^TestLossyDynamoDBRun' ./functions/testkit/proof/chaos || status=$$?; \
	$(GO) run ./functions/tools/proofsum $(CHAOS_COUNTS) || { [ $$status -ne 0 ] || status=1; }; \
	exit $$status

.PHONY: proof
proof: withemulators ## Nightly proof suite (PROOF_HISTORIES=1000, RAPID_CHECKS=500 per command kind); the last line sums the counts
	@mkdir -p $(dir $(PROOF_COUNTS)) && rm -f $(PROOF_COUNTS)
	@status=0; \
	$(WITHEMULATORS) -- $(MAKE) proof-suite || status=$$?; \
	$(GO) run ./functions/tools/proofsum $(PROOF_COUNTS) || { [ $$status -ne 0 ] || status=1; }; \
	exit $$status

# The parts of `make proof`, run under the emulators it starts.
.PHONY: proof-suite
proof-suite:
	PROOF_COUNTS=$(PROOF_COUNTS) PROOF_HISTORIES=$(PROOF_HISTORIES) FAULTS_RUNS=$(FAULTS_RUNS) SEGMENT_RUNS=$(SEGMENT_RUNS) \
		PROOF_CHAOS=1 CHAOS_SHARE=$(CHAOS_SHARE) CHAOS_UPLOADS=$(CHAOS_UPLOADS) \
		$(GO) test -count=1 -timeout $(PROOF_TIMEOUT) ./functions/testkit/proof/...
	PROOF_COUNTS=$(PROOF_COUNTS) $(GO) test -count=1 -timeout $(PROOF_TIMEOUT) -run '^(TestConditionsAgreeWithTheDomain|TestBoundaries)$$' \
		./functions/internal/dynamo -args -rapid.checks=$(RAPID_CHECKS)
	PROOF_COUNTS=$(PROOF_COUNTS) PROOF_BUDGET_TRACE=1 $(GO) test -count=1 -timeout $(PROOF_TIMEOUT) \
		-run '^TestTwoSecondInvocationsCompleteAThirtySecondTrace$$' ./functions/local/stack
	PROOF_LONG_INGEST=1 $(GO) test -count=1 -timeout $(PROOF_TIMEOUT) \
		-run '^TestFiveMinuteClipIngestsInFiveSecondRanges$$' ./functions/local/stack
	$(MAKE) fuzz PROOF_COUNTS=$(PROOF_COUNTS)

# Every Fuzz* target of the module for FUZZTIME each (go test -fuzz takes one
# target per run). Packages are those whose test files declare a Fuzz
# function; `go test -list` names the targets. The executions are the last
# `fuzz: elapsed: ..., execs: N` line of each run, summed into
# `proof-count fuzz_execs=N`.
.PHONY: fuzz
fuzz: ## Run every Fuzz* target for FUZZTIME (10s) each; appends fuzz_execs=N to PROOF_COUNTS
	@total=0; targets=0; \
	for dir in $$($(GO) list -f '{{.Dir}}' ./...); do \
		grep -qs '^func Fuzz' $$dir/*_test.go || continue; \
		pkg=$$($(GO) list $$dir); \
		for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$t ($(FUZZTIME))"; \
			out=$$($(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -v $$pkg 2>&1) || { echo "$$out"; exit 1; }; \
			n=$$(echo "$$out" | sed -n 's/.*fuzz: elapsed: .*, execs: \([0-9]*\).*/\1/p' | tail -1); \
			echo "  execs=$${n:-0}"; \
			total=$$((total + $${n:-0})); targets=$$((targets + 1)); \
		done; \
	done; \
	echo "fuzz: $$targets targets, $$total execs"; \
	if [ -n "$(PROOF_COUNTS)" ]; then mkdir -p $(dir $(PROOF_COUNTS)); echo "proof-count fuzz_execs=$$total" >> $(PROOF_COUNTS); fi

# `make bench-tracer` tracks the same gray frames from the same start points
# with this tracker and with OpenCV 4.6 (Debian's python3-opencv, run by
# PYTHON_OPENCV: matchTemplate, PyrLK, CSRT, KCF) in one run: the
# ground-truth clips (error against the truth) and the real videos Debian's
# opencv-doc ships and two camera sequences of visp-images-data (forward-backward
# protocol, 50 and 150 frames). It prints
# Markdown tables with the parameters (BENCH_TRACER_FLAGS, e.g. '-frames 300
# -anchors template,lk -real-frames 150'). Clips go to testoutput/bench-tracer/.
# `make bench-tracer-deps` installs python3-opencv, opencv-doc and
# visp-images-data (apt).
PYTHON_OPENCV      ?= /usr/bin/python3
SUDO               ?= $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
BENCH_TRACER_FLAGS ?=

.PHONY: bench-tracer-deps
bench-tracer-deps: ## Install the benchmark's OpenCV and real videos (Debian packages python3-opencv, opencv-doc, visp-images-data)
	@$(PYTHON_OPENCV) -c 'import cv2' 2>/dev/null && [ -f /usr/share/doc/opencv-doc/examples/data/vtest.avi ] && \
		[ -f /usr/share/visp-images-data/ViSP-images/mire-2/image.0001.pgm ] || \
		{ $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-opencv opencv-doc visp-images-data; }

.PHONY: bench-tracer
bench-tracer: bench-tracer-deps ## Tracker accuracy, forward-backward on real footage and frames per CPU-second, side by side with OpenCV matchTemplate, PyrLK, CSRT, KCF
	$(GO) run ./functions/tools/benchtracer -python $(PYTHON_OPENCV) $(BENCH_TRACER_FLAGS)

.PHONY: bench
bench: withemulators rie ## Side-by-side table: DynamoDB requests and ms per operation, this project vs the anchors' lock protocol
	$(WITHEMULATORS) -- $(GO) run ./functions/tools/benchtable -rie $(RIE) $(BENCH_FLAGS)

# The Lambda Runtime Interface Emulator for the bench's api cold-start row
# (if it cannot be installed, that row says "unavailable: ..." instead).
RIE         := $(TOOLS)/bin/aws-lambda-rie
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d

.PHONY: rie
rie:
	@test -x $(RIE) || GOBIN=$(TOOLS)/bin $(GO) install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION) \
		|| echo "aws-lambda-rie could not be installed; the cold-start row will say why"
