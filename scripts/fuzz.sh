#!/usr/bin/env bash
# Runs every Go fuzz target of ferry's parsers for FUZZTIME each
# (default 30s): `make fuzz` runs them long, `make test` briefly.
#
# Each package's instrumented test binary is built once (go test -c -fuzz)
# and run for each of its targets, found by name in the package's
# fuzz_test.go, so a new FuzzXxx there is run without editing this script.
# The binary runs in the package's directory with go test's fuzz cache, as
# `go test -fuzz` would: a failure stops the run and leaves the failing
# input in PKG/testdata/fuzz/FuzzXxx/, where it stays as a regression seed
# once the bug is fixed.
#
# FUZZ_STEP=build builds the binaries into FUZZ_BIN and stops; FUZZ_STEP=run
# runs the binaries an earlier build left in FUZZ_BIN (make test builds them
# beside go test, scripts/test.sh). By default both, in a temporary FUZZ_BIN.
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
# Minimizing each new interesting input may take a minute by default, with
# no exec counted meanwhile: for a realworld bundle.json (20 KB) that is
# all of a short run. Bound it.
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-100x}
PKGS=(porter crossplane mixin mirrorset lock relocate ociref signature)

module=$("$GO" list -m)
cache=$("$GO" env GOCACHE)/fuzz
STEP=${FUZZ_STEP:-all}
case "$STEP" in
all | build | run) ;;
*)
	echo "fuzz: FUZZ_STEP=$STEP: want build, run or all" >&2
	exit 2
	;;
esac
if [ -n "${FUZZ_BIN:-}" ]; then
	bin=$FUZZ_BIN
	mkdir -p "$bin"
else
	[ "$STEP" = run ] && {
		echo "fuzz: FUZZ_STEP=run needs FUZZ_BIN, where FUZZ_STEP=build left the binaries" >&2
		exit 2
	}
	bin=$(mktemp -d)
	trap 'rm -rf "$bin"' EXIT
fi

start=$(date +%s)
n=0
for pkg in "${PKGS[@]}"; do
	if [ ! -f "$pkg/fuzz_test.go" ]; then
		echo "fuzz: $pkg/fuzz_test.go is missing" >&2
		exit 1
	fi
done
# go test -c -fuzz takes one package at a time. The first build compiles
# the instrumented dependencies the packages share (signature's are nearly
# all the others'), so it runs alone, then the rest, mostly one
# single-threaded link each, side by side, a job per core: run together
# from a cold cache, two builds would compile the same dependencies twice.
if [ "$STEP" != run ]; then
	"$GO" test -c -fuzz=. -o "$bin/signature.test" ./signature
	printf '%s\n' "${PKGS[@]}" | grep -vx signature | xargs -P "$(nproc 2>/dev/null || echo 2)" -I{} \
		"$GO" test -c -fuzz=. -o "$bin/{}.test" "./{}"
	if [ "$STEP" = build ]; then
		echo "fuzz: ${#PKGS[@]} instrumented test binaries built in $(($(date +%s) - start))s"
		exit 0
	fi
fi
for pkg in "${PKGS[@]}"; do
	file="$pkg/fuzz_test.go"
	for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing\.F).*/\1/p' "$file"); do
		echo "fuzz: ./$pkg $target for $FUZZTIME"
		if [ ! -x "$bin/$pkg.test" ]; then
			echo "fuzz: $bin/$pkg.test is missing: run FUZZ_STEP=build first" >&2
			exit 1
		fi
		if ! (cd "$pkg" && "$bin/$pkg.test" -test.run='^$' -test.fuzz="^${target}\$" \
			-test.fuzztime="$FUZZTIME" -test.fuzzminimizetime="$FUZZMINIMIZETIME" -test.fuzzcachedir="$cache/$module/$pkg") >"$bin/out" 2>&1; then
			# At the end of -fuzztime, Go's fuzz coordinator can report its
			# own deadline as a failure, "context deadline exceeded", with no
			# failing input (golang/go#75804, a race fixed in Go 1.27; ferry
			# builds with 1.26): not a bug found in ferry. A real failure
			# writes its input.
			if grep -q 'context deadline exceeded' "$bin/out" && ! grep -q 'Failing input written to' "$bin/out"; then
				echo "fuzz: ./$pkg $target: Go's fuzz deadline race (golang/go#75804), no failing input; not a failure" >&2
				n=$((n + 1))
				continue
			fi
			cat "$bin/out" >&2
			echo "fuzz: ./$pkg $target failed" >&2
			exit 1
		fi
		grep -E 'execs: [0-9]+' "$bin/out" | tail -1 || true
		n=$((n + 1))
	done
done
echo "fuzz: $n targets, ${FUZZTIME} each, in $(($(date +%s) - start))s"
