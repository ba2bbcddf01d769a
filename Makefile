GO ?= go
BIN := bin/ferry

.PHONY: build test demo bench interop vet

build:
	$(GO) build -o $(BIN) ./cmd/ferry

vet:
	$(GO) vet ./...

test: build vet
	$(GO) test -count=1 -timeout 30m ./...

demo: build
	bash scripts/demo.sh

bench: build
	bash scripts/bench.sh

interop: build
	bash scripts/interop.sh
