# hashline — common tasks. `make help` lists them.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

BUF      := go tool -modfile=tools/buf/go.mod buf
GRPCURL  := go tool -modfile=tools/grpcurl/go.mod grpcurl
STATICCHECK := go tool -modfile=tools/staticcheck/go.mod staticcheck
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

# The version stamped into binaries built from a checkout (internal/buildinfo);
# go install ...@vX.Y.Z needs none: Go records the module version itself.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo '(devel)')
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
LDFLAGS = -X github.com/hashline/hashline/internal/buildinfo.version=$(VERSION) -X github.com/hashline/hashline/internal/buildinfo.commit=$(COMMIT)

.PHONY: build
build: ## Build bin/hashlined and bin/hashline, stamped with git describe
	go build -tags grpcnotrace -ldflags '$(LDFLAGS)' -o bin/ ./cmd/hashlined ./cmd/hashline

# Archives for every platform the README names, with the version stamped,
# written by a Go program (no tar or zip binary needed).
.PHONY: release
release: ## dist/: hashlined and hashline for linux, darwin, windows x amd64, arm64 (tar.gz, zip for Windows) and SHA256SUMS
	go run ./scripts/release -version '$(VERSION)' -commit '$(COMMIT)' -time "$$(git log -1 --format=%ct)" -out dist

.PHONY: test
test: checkgenerate lint crossbuild breaking unit bench-check deploy-check smoke test-ts test-python ## Everything CI runs: generated code current, lint, cross-builds, API compatibility, race tests, the bench module built and vetted, the deploy module's tests (manifests, router, image), grpcurl smoke test, TypeScript and Python client tests

.PHONY: unit
unit: ## go test -race ./... (fuzz seed corpora and examples included)
	go test -race -count=1 ./...

# bench/ is a module of its own (the benchmarks stay out of the product's
# dependencies and internal/): CI builds and vets it and runs its unit
# tests, never its benchmarks.
.PHONY: bench-check
bench-check: ## Build, vet and unit-test the bench module (bench/); runs no benchmark
	cd bench && go vet ./... && go build ./... && go test -race -count=1 ./...

# deploy/ is a module of its own too (kustomize and go-containerregistry
# stay out of the product's go.mod): its tests render the Kubernetes
# manifests, run three hashlined behind nginx with deploy/nginx's router
# configuration (nginx from Debian, which .ci/run installs; outside CI a
# missing nginx skips those tests) and drive them with the Go, CLI, Python
# and TypeScript clients (the TypeScript one built here, and named to the
# test by HASHLINE_TS_CLIENT), and build and run the image.
.PHONY: deploy-check
deploy-check: client/ts/node_modules ## Vet and test the deploy module (deploy/): manifests rendered and checked, the nginx router for real with every client, the image built, unpacked and run
	cd client/ts && npm run --silent build
	cd deploy && go vet ./... && HASHLINE_TS_CLIENT=$(CURDIR)/client/ts/dist/index.js go test -race -count=1 ./...

# An OCI image from scratch with the static hashlined, built by a Go
# program (deploy/image): no Docker engine needed.
.PHONY: image
image: ## dist/hashlined-oci (OCI layout) and dist/hashlined-image.tar (docker/podman load, crane push): static hashlined on an empty base, uid 65532
	cd deploy && go run ./image -src $(CURDIR) -out $(CURDIR)/dist -version '$(VERSION)' -commit '$(COMMIT)' -created "$$(git log -1 --format=%ct)" -tag "hashlined:$$(printf %s '$(VERSION)' | tr -c 'A-Za-z0-9_.-' '-')"

.PHONY: smoke
smoke: ## Start the real binary and drive it with grpcurl (list, describe, read, edit, stale edit)
	scripts/smoke.sh

tools/ts/node_modules: tools/ts/package.json tools/ts/package-lock.json
	cd tools/ts && npm ci --no-audit --no-fund
	touch tools/ts/node_modules

client/ts/node_modules: client/ts/package.json client/ts/package-lock.json
	cd client/ts && npm ci --no-audit --no-fund
	touch client/ts/node_modules

# Each test file is a node process of its own, and would build hashlined
# (and the tracing test's OTLP receiver, otlpsink) itself without
# HASHLINED_BIN (OTLPSINK_BIN); go run -exec cp takes the binary from the
# build cache when it is there.
.PHONY: test-ts
test-ts: client/ts/node_modules ## TypeScript client (client/ts): tsc build of the package, then node --test against the real hashlined
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	go run -exec cp ./cmd/hashlined "$$tmp/hashlined"; \
	go run -exec cp ./internal/otlptest/otlpsink "$$tmp/otlpsink"; \
	cd client/ts && HASHLINED_BIN="$$tmp/hashlined" OTLPSINK_BIN="$$tmp/otlpsink" npm test

# The Python client needs grpcio and protobuf: Debian's python3-grpcio and
# python3-protobuf (what .ci/run installs) are importable only by Debian's
# own /usr/bin/python3, which need not be the first python3 on PATH (a
# pyenv one, say), so the first of the two that imports both is used.
# PYTHON=... overrides.
PYTHON ?= $(shell for p in python3 /usr/bin/python3; do $$p -c 'import grpc, google.protobuf' >/dev/null 2>&1 && { echo $$p; break; }; done)

.PHONY: test-python
test-python: ## Python client (client/python): unittest against the real hashlined, with the README's Python quickstart and the examples
	@if [ -z "$(PYTHON)" ]; then echo "test-python: no python3 imports grpc and google.protobuf; install python3-grpcio and python3-protobuf (Debian), or grpcio and protobuf, or set PYTHON"; exit 1; fi
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	go build -o "$$tmp/hashlined" ./cmd/hashlined; \
	go build -o "$$tmp/otlpsink" ./internal/otlptest/otlpsink; \
	cd client/python && HASHLINED_BIN="$$tmp/hashlined" OTLPSINK_BIN="$$tmp/otlpsink" PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m unittest discover -s tests -t . -v

.PHONY: test-cli
test-cli: ## hashline CLI: golden transcripts against a real hashlined and --local, and the docs/agents.md examples
	go test -race -count=1 ./cmd/hashline/

# The Python stubs live inside their package (client/python/src/hashline_client/_gen),
# and relimports.py makes their imports of each other relative (it says why).
PY_GEN := client/python/src/hashline_client/_gen
PY_RELIMPORTS := python3 client/python/scripts/relimports.py

# server/reflection/descriptors.binpb: proto/ with its comments, which the
# reflection service serves so that `grpcurl describe` shows the docs (the
# descriptors compiled into gen/go have none). Only our files: the imports
# (google/protobuf/descriptor.proto, for the grpc_code option) are served
# from the descriptors compiled into the binary, which may be another
# version of them than buf's.
REFLECTION_SET := server/reflection/descriptors.binpb

.PHONY: generate
generate: tools/ts/node_modules ## Regenerate gen/go, gen/ts and the Python client's stubs from proto/, the reflection descriptors and the Go client's sentinels
	$(BUF) generate
	$(PY_RELIMPORTS) $(PY_GEN)
	$(BUF) build --exclude-imports --as-file-descriptor-set -o $(REFLECTION_SET)
	go test ./client -count=1 -run '^TestSentinelsAreGenerated$$' -update

# Generates into a temporary directory (buf's -o prefixes every out: path,
# and clean: true then empties only the temporary copies), so that checking
# never rewrites the work tree.
.PHONY: checkgenerate
checkgenerate: tools/ts/node_modules ## Fail if gen/, the Python stubs or the reflection descriptors are not what proto/ generates (the work tree is left untouched)
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(BUF) generate -o "$$tmp"; \
	$(PY_RELIMPORTS) "$$tmp/$(PY_GEN)"; \
	if ! git diff --no-index --quiet -- gen "$$tmp/gen"; then \
		echo "generated code is stale; run 'make generate' and commit gen/ (left: gen/, right: what proto/ generates):"; \
		git diff --no-index --stat -- gen "$$tmp/gen" || true; exit 1; fi; \
	if ! diff -r -q -x __pycache__ $(PY_GEN) "$$tmp/$(PY_GEN)"; then \
		echo "$(PY_GEN) is stale; run 'make generate' and commit it"; exit 1; fi; \
	$(BUF) build --exclude-imports --as-file-descriptor-set -o "$$tmp/reflection.binpb"; \
	if ! cmp -s $(REFLECTION_SET) "$$tmp/reflection.binpb"; then \
		echo "$(REFLECTION_SET) is stale; run 'make generate' and commit it"; exit 1; fi

# staticcheck checks each platform the binaries ship for (-matrix) and merges
# the results: most findings count on any platform, but "unused" (U1000)
# only where the code is unused on every platform that compiles it, so a
# helper that only the Unix code calls is not reported for Windows.
.PHONY: lint
lint: tools/ts/node_modules ## buf lint, buf format, go vet, staticcheck (Linux, macOS, Windows), gofmt, type-check gen/ts
	$(BUF) lint
	$(BUF) format -d --exit-code
	go vet ./...
	printf 'linux: GOOS=linux\nwindows: GOOS=windows\ndarwin: GOOS=darwin GOARCH=arm64\n' | $(STATICCHECK) -matrix ./...
	cd tools/ts && npm run --silent check-gen
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The binaries (hashline mcp in desktop clients above all) must build where
# the README says they run; Linux is built by every other target.
.PHONY: crossbuild
crossbuild: ## go build ./... for Windows and macOS
	GOOS=windows GOARCH=amd64 go build ./...
	GOOS=darwin GOARCH=arm64 go build ./...

# The API as first released: every later change must stay wire- and
# source-compatible with it (buf breaking, FILE rules). The baseline is a
# committed image rather than a git ref so that a shallow clone, which lacks
# the release commit, can check it too; proto/baseline/README.md says how it
# was built.
API_BASELINE := proto/baseline/v1.binpb

.PHONY: breaking
breaking: ## buf breaking against the released v1 API (proto/baseline/v1.binpb)
	$(BUF) breaking --against $(API_BASELINE)

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
bench: tools/peer/node_modules ## One run of every benchmark into BENCHMARKS.md: service, MCP bridge and the peer (bench/), then grep (bench-grep), list (bench-list) and the Python client (bench-python); medians and ratios to floors of the same run
	cd bench && go run . -out $(CURDIR)/BENCHMARKS.md -peer $(CURDIR)/tools/peer $(BENCH_FLAGS)
	bench/bench-grep.sh -md $(CURDIR)/BENCHMARKS.md $(BENCH_GREP_FLAGS)
	cd bench && go run ./bench-list -md $(CURDIR)/BENCHMARKS.md $(BENCH_LIST_FLAGS)
	cd bench && go run ./bench-python -python "$(PYTHON)" -md $(CURDIR)/BENCHMARKS.md $(BENCH_PYTHON_FLAGS)

# Not part of make bench: it measures what the edit_file repairs accept,
# not speed, and the corpus needs both node_modules trees.
.PHONY: bench-mistakes
bench-mistakes: tools/peer/node_modules client/ts/node_modules ## Mistakes models make in edit_file, the same calls to hashline mcp and the peer: right / refused / corrupt per class, reply sizes; rewrites its section of BENCHMARKS.md (BENCH_MISTAKES_FLAGS='-out /tmp/m.md' writes elsewhere)
	cd bench && go run ./bench-mistakes -out $(CURDIR)/BENCHMARKS.md -peer $(CURDIR)/tools/peer -ts $(CURDIR)/tools/peer/node_modules,$(CURDIR)/client/ts/node_modules $(BENCH_MISTAKES_FLAGS)

.PHONY: bench-go
bench-go: ## Go micro-benchmarks of core, workspace, grep, server and MCP bridge
	go test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) ./internal/... ./server/...

.PHONY: peer-golden
peer-golden: tools/peer/node_modules ## Re-record internal/mcp/testdata/peer from the published peer (see its README); CI only compares
	go test ./internal/mcp -count=1 -run 'Peer' -update-peer=$(CURDIR)/tools/peer

.PHONY: bench-list
bench-list: ## List vs rg --files on a generated 10k-file tree: default pages, one request, include_versions (a row says so when rg is missing); BENCH_LIST_FLAGS='-rounds 15'
	cd bench && go run ./bench-list $(BENCH_LIST_FLAGS)

.PHONY: bench-python
bench-python: ## The Python client's Read of a 10k-line file against the Go client's, alternated on one hashlined; BENCH_PYTHON_FLAGS='-md BENCHMARKS.md' rewrites its section
	cd bench && go run ./bench-python -python "$(PYTHON)" $(BENCH_PYTHON_FLAGS)

.PHONY: bench-grep
bench-grep: ## Grep vs ripgrep on Go's source tree, alternating rounds; BENCH_GREP_FLAGS='-md BENCHMARKS.md' rewrites its section
	bench/bench-grep.sh $(BENCH_GREP_FLAGS)
