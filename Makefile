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
TEST_FLAGS ?= -count=1 -race
PKGS       ?= ./...

STATICCHECK_VERSION := v0.8.2

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

.PHONY: vet
vet: ## go vet ./...
	$(GO) vet ./...

# Built rather than `go run`: go run turns every non-zero exit into 1 and
# does not pass SIGTERM on.
.PHONY: withemulators
withemulators:
	@$(GO) build -o $(WITHEMULATORS) ./functions/local/withemulators

##@ Lint

.PHONY: lint
lint: fmt-check vet staticcheck tidy-check domain-imports ## All static checks

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
run: ## The local stack (placeholder)
	@echo "make run: not written yet. For now: make emulators"
