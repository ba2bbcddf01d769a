GO ?= go
BIN := bin/ferry
# Static, as the release binaries are (scripts/dist.sh): what the tests run
# is what users run, and no test binary waits on gcc to link.
export CGO_ENABLED ?= 0

.PHONY: build test demo bench interop vet fmt fuzz tools goinstall dist docs release conformance

# FUZZTIME is how long `make fuzz` runs each fuzz target; FUZZTIME_TEST how
# long `make test` does, after the unit tests.
FUZZTIME ?= 30s
FUZZTIME_TEST ?= 2s

build:
	$(GO) build -o $(BIN) ./cmd/ferry

vet:
	$(GO) vet ./...

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# tools builds the real cosign v2, cosign v3 and helm v3 that make interop
# runs (bin/tools; kept once built).
tools:
	bash scripts/tools.sh

# Every package's tests, with the fuzz binaries built and the go install
# check run beside them, then each fuzz target briefly (scripts/test.sh).
# No external tool is built: cosign runs in process (internal/cosigntest).
test: build vet fmt
	GO=$(GO) FUZZTIME=$(FUZZTIME_TEST) bash scripts/test.sh

# goinstall checks that `go install github.com/ferryhq/ferry/cmd/ferry@VERSION`
# works, from a file:// module proxy holding this tree at v0.0.0-test.
goinstall:
	GO=$(GO) bash scripts/goinstall.sh

# dist cross-compiles the release binaries (linux, darwin, windows; amd64,
# arm64) into dist/ with a SHA256SUMS file; VERSION defaults to git describe.
dist:
	GO=$(GO) bash scripts/dist.sh

fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

# release builds what a release publishes (scripts/release.sh): binaries,
# SBOMs, SHA256SUMS, the container image as an OCI layout, and with
# COSIGN_KEY, cosign signatures and a ferry archive of the signed image.
release:
	GO=$(GO) bash scripts/release.sh

demo: build
	bash scripts/demo.sh

bench: build
	bash scripts/bench.sh

# interop builds the real cosign v2, cosign v3 and helm v3 (make tools)
# and runs the tests that use them with FERRY_INTEROP=1, then the porter
# check when porter is on PATH (scripts/interop.sh). CI runs it after test.
interop: build
	GO=$(GO) bash scripts/interop.sh

# docs regenerates docs/reference (Markdown, a page per command) and
# docs/man (man pages) from the cobra tree; `make test` fails while they
# are stale (TestDocs in cmd/ferry).
docs:
	FERRY_UPDATE_DOCS=1 $(GO) test -count=1 -run '^TestDocs$$' ./cmd/ferry

# conformance runs the OCI distribution-spec conformance program against
# `ferry serve` (scripts/conformance.sh); not part of `make test`.
conformance: build
	bash scripts/conformance.sh
