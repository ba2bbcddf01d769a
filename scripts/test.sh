#!/usr/bin/env bash
# make test, after build, vet and fmt: every package's tests, then each
# fuzz target briefly (scripts/fuzz.sh), and the go install check
# (scripts/goinstall.sh).
#
# No external tool is built: the signature tests use the in-process cosign
# (internal/cosigntest, built from cosign v3's Go packages); the real
# cosign v2, cosign v3 and helm v3 CLIs run in `make interop`
# (scripts/interop.sh), which CI runs after make test.
#
# go test keeps the cores busy only in part: its end-to-end tests mostly
# wait on ferry processes and registries. So the fuzz binaries are built,
# and the go install check runs, beside it, under nice so that the tests
# keep the CPU they want; both are mostly single-threaded links. The fuzz
# targets run after go test, alone, for FUZZTIME each: they are timed, and
# must not share the cores.
#
# Environment: GO (default go), FUZZTIME (default 2s), TESTFLAGS (extra go
# test flags).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-2s}

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

start=$(date +%s)
GO=$GO FUZZ_STEP=build FUZZ_BIN="$work/fuzz" nice -n 10 bash scripts/fuzz.sh >"$work/fuzz-build.log" 2>&1 &
pids+=($!)
GO=$GO nice -n 10 bash scripts/goinstall.sh >"$work/goinstall.log" 2>&1 &
pids+=($!)

# The end-to-end tests mostly wait (on ferry processes, registries,
# retries), so more of them run at once than there are cores.
# shellcheck disable=SC2086
"$GO" test -count=1 -timeout 70m -parallel 8 ${TESTFLAGS:-} ./...
echo "test: go test passed in $(($(date +%s) - start))s"

# background LOG NAME PID: wait for a background step and show its log;
# a failure stops make test.
background() {
	if ! wait "$3"; then
		cat "$1" >&2
		echo "test: $2 failed" >&2
		exit 1
	fi
	cat "$1"
}
background "$work/fuzz-build.log" "building the fuzz binaries" "${pids[0]}"
background "$work/goinstall.log" "the go install check" "${pids[1]}"
pids=()

GO=$GO FUZZ_STEP=run FUZZ_BIN="$work/fuzz" FUZZTIME=$FUZZTIME bash scripts/fuzz.sh
echo "test: all passed in $(($(date +%s) - start))s"
