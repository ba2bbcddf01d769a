#!/usr/bin/env bash
# make interop: the checks against the real external tools, which
# `make test` leaves out (CI runs both: .ci/run).
#
#   1. build cosign v2, cosign v3 and helm v3 from source into bin/tools
#      (scripts/tools.sh; kept once built);
#   2. with FERRY_INTEROP=1, the tests that run them: internal/cosigntest
#      (the in-process cosign's verdicts against the real CLIs'), the
#      signature and trust tests of cosign's layouts, and the cmd/ferry
#      end-to-end tests that sign with cosign or hand charts to helm v3;
#   3. a real `porter` against `ferry serve`, when porter is on PATH (it
#      needs network access to the mixin feed, default
#      https://cdn.porter.sh/mixins/atom.xml; FEED=... to change it):
#      a. ferry lock + ferry mirror the exec mixin into an embedded registry;
#      b. porter mixins install exec --version V --mirror http://ADDR, with a
#         fresh PORTER_HOME, served by ferry serve from the mirror alone;
#      c. the installed client and runtime must have the digests in ferry.lock.
#
# Leaves no process and no file behind (but bin/tools).
#
# Environment: GO (default go), TESTFLAGS (extra go test flags).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

start=$(date +%s)
GO=$GO bash scripts/tools.sh
echo "interop: tools ready in $(($(date +%s) - start))s"

# The tests that run the real cosign or helm CLIs (internal/cosigntest,
# internal/tooltest users); the rest of these packages runs in make test.
e2e='^(TestE2EAttestations|TestE2ESignatureLayouts|TestE2ENestedPolicy|TestE2EClosureMatrix|TestTamperExitCodes|TestLockSignKeyCosign|TestHelmHandOff)$'
units='^(TestVerdicts|TestLayouts|TestRealCosignImage|TestRealCosignBlob|TestRealCosignAttest|TestCosignInterop|TestAttestations)$'
start=$(date +%s)
# shellcheck disable=SC2086
FERRY_INTEROP=1 "$GO" test -count=1 -timeout 30m ${TESTFLAGS:-} -run "$units" ./internal/cosigntest ./signature ./trust
# shellcheck disable=SC2086
FERRY_INTEROP=1 "$GO" test -count=1 -timeout 30m ${TESTFLAGS:-} -run "$e2e" ./cmd/ferry
echo "interop: real-CLI tests passed in $(($(date +%s) - start))s"

if ! command -v porter >/dev/null 2>&1; then
  echo "interop: porter is not on PATH; skipped (install it from https://porter.sh/install)"
  exit 0
fi
FERRY="$PWD/bin/ferry"
FEED="${FEED:-https://cdn.porter.sh/mixins/atom.xml}"
MIXIN="${MIXIN:-exec}"
VERSION="${VERSION:-latest}"
work=$(mktemp -d "${TMPDIR:-/tmp}/ferry-interop.XXXXXX")
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$FERRY" serve --root "$work/reg" --addr 127.0.0.1:0 --addr-file "$work/addr" --quiet >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -s "$work/addr" ] && break; sleep 0.05; done
[ -s "$work/addr" ] || { echo "interop: ferry serve did not start" >&2; cat "$work/serve.log" >&2; exit 1; }
ADDR=$(cat "$work/addr")

goos=$(go env GOOS); goarch=$(go env GOARCH)
cat >"$work/ferry.yaml" <<YAML
apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
mixins:
  - name: $MIXIN
    version: "$VERSION"
    feed: $FEED
platforms: [$goos/$goarch]
YAML
cd "$work"
"$FERRY" lock
"$FERRY" mirror --to "$ADDR/interop"
"$FERRY" verify --deep
locked_version=$(awk '/^ *version:/ {print $2; exit}' ferry.lock)
echo "interop: locked $MIXIN $locked_version, serving http://$ADDR/mixins/atom.xml"

export PORTER_HOME="$work/porter-home"
mkdir -p "$PORTER_HOME"
porter mixins install "$MIXIN" --version "$locked_version" --mirror "http://$ADDR"

client="$PORTER_HOME/mixins/$MIXIN/$MIXIN"; [ "$goos" = windows ] && client="$client.exe"
runtime="$PORTER_HOME/mixins/$MIXIN/runtimes/$MIXIN-runtime"
fail=0
for f in "$client" "$runtime"; do
  sum="sha256:$(sha256sum "$f" | cut -d' ' -f1)"
  if grep -q "digest: $sum" ferry.lock; then
    echo "interop: ok   $f $sum"
  else
    echo "interop: FAIL $f $sum is not in ferry.lock" >&2; fail=1
  fi
done
porter mixins list || true
exit $fail
