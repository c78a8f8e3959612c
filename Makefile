# hashline — common tasks. `make help` lists them.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

BUF      := go tool -modfile=tools/buf/go.mod buf
GRPCURL  := go tool -modfile=tools/grpcurl/go.mod grpcurl
# A count (Nx), not a duration: on Go 1.26 a duration can end a clean run with a
# spurious "context deadline exceeded" (golang/go#75804, fixed in Go 1.27).
FUZZTIME ?= 100000x
BENCHTIME ?= 1s

.PHONY: help
help: ## Show the targets
	@grep -E '^[a-z][a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-14s %s\n", $$1, $$2}'

.PHONY: run
run: ## Serve the current directory on 127.0.0.1:7420
	go run ./cmd/hashlined serve

.PHONY: build
build: ## Build bin/hashlined and bin/hashline
	go build -o bin/ ./cmd/hashlined ./cmd/hashline

.PHONY: test
test: checkgenerate lint crossbuild breaking unit smoke test-ts ## Everything CI runs: generated code current, lint, cross-builds, API compatibility, race tests, grpcurl smoke test, TypeScript client tests

.PHONY: unit
unit: ## go test -race ./... (fuzz seed corpora and examples included)
	go test -race -count=1 ./...

.PHONY: smoke
smoke: ## Start the real binary and drive it with grpcurl (list, read, edit, stale edit)
	scripts/smoke.sh

tools/ts/node_modules: tools/ts/package.json tools/ts/package-lock.json
	cd tools/ts && npm ci --no-audit --no-fund
	touch tools/ts/node_modules

client/ts/node_modules: client/ts/package.json client/ts/package-lock.json
	cd client/ts && npm ci --no-audit --no-fund
	touch client/ts/node_modules

.PHONY: test-ts
test-ts: client/ts/node_modules ## TypeScript client (client/ts): tsc build of the package, then node --test against the real hashlined
	cd client/ts && npm test

.PHONY: test-cli
test-cli: ## hashline CLI: golden transcripts against a real hashlined and --local, and the docs/agents.md examples
	go test -race -count=1 ./cmd/hashline/

.PHONY: generate
generate: tools/ts/node_modules ## Regenerate gen/go and gen/ts from proto/
	$(BUF) generate

.PHONY: checkgenerate
checkgenerate: generate ## Fail if the committed generated code is not current
	@if [ -n "$$(git status --porcelain -- gen)" ]; then \
		echo "generated code is stale; run 'make generate' and commit:"; git status --porcelain -- gen; git diff --stat -- gen; exit 1; fi

.PHONY: lint
lint: tools/ts/node_modules ## buf lint, buf format, go vet, gofmt, type-check gen/ts
	$(BUF) lint
	$(BUF) format -d --exit-code
	go vet ./...
	cd tools/ts && npm run --silent check-gen
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The binaries (hashline mcp in desktop clients above all) must build where
# the README says they run; Linux is built by every other target.
.PHONY: crossbuild
crossbuild: ## go build ./... for Windows and macOS
	GOOS=windows GOARCH=amd64 go build ./...
	GOOS=darwin GOARCH=arm64 go build ./...

# The API as first released: every later change must stay wire- and
# source-compatible with it (buf breaking, FILE rules).
API_BASELINE := 1cbbaff82334f02e067d7f835f3299f34560fb7c

.PHONY: breaking
breaking: ## buf breaking against the released v1 API
	$(BUF) breaking --against '.git#ref=$(API_BASELINE)'

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (default 100000x executions)
	@for pkg in $$(go list ./internal/... ./server/...); do \
		for f in $$(go test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$f"; go test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg; \
		done; \
	done

# The published peer MCP server and its runtime (bun), pinned; only the
# benchmarks and the re-recording of internal/mcp/testdata/peer use them.
tools/peer/node_modules: tools/peer/package.json tools/peer/package-lock.json
	cd tools/peer && npm ci --no-audit --no-fund
	touch tools/peer/node_modules

.PHONY: bench
bench: tools/peer/node_modules ## One run of every benchmark into BENCHMARKS.md: service, MCP bridge and the peer (internal/bench), then grep (bench-grep); medians and ratios to baselines of the same run
	go run ./internal/bench -out BENCHMARKS.md -peer tools/peer $(BENCH_FLAGS)
	scripts/bench-grep.sh -md BENCHMARKS.md $(BENCH_GREP_FLAGS)

.PHONY: bench-go
bench-go: ## Go micro-benchmarks of core, workspace, grep, server and MCP bridge
	go test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) ./internal/... ./server/...

.PHONY: peer-golden
peer-golden: tools/peer/node_modules ## Re-record internal/mcp/testdata/peer from the published peer (see its README); CI only compares
	go test ./internal/mcp -count=1 -run 'Peer' -update-peer=$(CURDIR)/tools/peer

.PHONY: bench-grep
bench-grep: ## Grep vs ripgrep on Go's source tree, alternating rounds; BENCH_GREP_FLAGS='-md BENCHMARKS.md' rewrites its section
	scripts/bench-grep.sh $(BENCH_GREP_FLAGS)
