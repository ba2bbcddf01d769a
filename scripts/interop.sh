#!/usr/bin/env bash
# make interop: run a real `porter` against `ferry serve`. Not part of CI: it
# needs porter on PATH and network access to the mixin feed (default
# https://cdn.porter.sh/mixins/atom.xml; FEED=... to change it).
#
#   1. ferry lock + ferry mirror the exec mixin into an embedded registry;
#   2. porter mixins install exec --version V --mirror http://ADDR, with a
#      fresh PORTER_HOME, served by ferry serve from the mirror alone;
#   3. the installed client and runtime must have the digests in ferry.lock.
#
# Leaves no process and no file behind.
set -euo pipefail
cd "$(dirname "$0")/.."
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
