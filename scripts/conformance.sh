#!/usr/bin/env bash
# scripts/conformance.sh (make conformance): run the OCI distribution-spec
# conformance program against `ferry serve`. Not part of `make test`.
#
# The program is the Go module github.com/opencontainers/distribution-spec/conformance
# (a main package; README.md there lists its OCI_* settings), built once into
# bin/tools/oci-conformance from the module proxy. It runs with the OCI 1.1
# defaults against a fresh `ferry serve` on 127.0.0.1 and writes its report
# (report.html, results.yaml, junit.xml) to $RESULTS (default
# bin/conformance). Extra OCI_* variables in the environment pass through,
# for example OCI_DATA_SHA512=false.
#
# Prints the program's summary; exits 1 when any test failed.
set -euo pipefail
cd "$(dirname "$0")/.."

CONFORMANCE_VERSION=v0.0.0-20260831232431-97274622c111

tools="$PWD/bin/tools"
mkdir -p "$tools"
if [ ! -x "$tools/oci-conformance" ]; then
  tmp=$(mktemp -d "$tools/.build-conformance.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  echo "conformance: go install github.com/opencontainers/distribution-spec/conformance@$CONFORMANCE_VERSION" >&2
  GOBIN="$tmp" GOFLAGS=-buildvcs=false go install "github.com/opencontainers/distribution-spec/conformance@$CONFORMANCE_VERSION"
  mv "$tmp/conformance" "$tools/oci-conformance"
  rm -rf "$tmp"
  trap - EXIT
fi

FERRY="${FERRY:-$PWD/bin/ferry}"
[ -x "$FERRY" ] || go build -o "$FERRY" ./cmd/ferry
RESULTS="${RESULTS:-$PWD/bin/conformance}"
mkdir -p "$RESULTS"

work=$(mktemp -d "${TMPDIR:-/tmp}/ferry-conformance.XXXXXX")
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$FERRY" serve --root "$work/reg" --addr 127.0.0.1:0 --addr-file "$work/addr" >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -s "$work/addr" ] && break; sleep 0.05; done
[ -s "$work/addr" ] || { echo "conformance: ferry serve did not start" >&2; cat "$work/serve.log" >&2; exit 1; }

export OCI_REGISTRY="$(cat "$work/addr")"
export OCI_TLS=disabled
export OCI_VERSION="${OCI_VERSION:-1.1}"
export OCI_REPO1="${OCI_REPO1:-conformance/repo1}"
export OCI_REPO2="${OCI_REPO2:-conformance/repo2}"
export OCI_RESULTS_DIR="$RESULTS"
export OCI_LOG="${OCI_LOG:-error}"
: >"$work/oci-conformance.yaml"
export OCI_CONFIGURATION="$work/oci-conformance.yaml"

rc=0
(cd "$work" && "$tools/oci-conformance") >"$RESULTS/summary.txt" 2>&1 || rc=$?
# The summary: the counts of each status, then the API and data tables.
sed -n '/^OCI Conformance Result/,$p' "$RESULTS/summary.txt"
echo "conformance: full output in $RESULTS/summary.txt, report in $RESULTS/report.html" >&2
exit "$rc"
