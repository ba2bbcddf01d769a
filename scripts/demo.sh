#!/usr/bin/env bash
# make demo: the main job end to end on two embedded registries, a "public"
# one seeded with fixture bundles and a private mirror. Leaves no process.
set -euo pipefail
cd "$(dirname "$0")/.."
FERRY="$PWD/bin/ferry"
work=$(mktemp -d "${TMPDIR:-/tmp}/ferry-demo.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

start_registry() { # name: starts a registry, its address lands in $work/NAME.addr
  "$FERRY" serve --root "$work/$1" --addr 127.0.0.1:0 --addr-file "$work/$1.addr" --quiet >"$work/$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 200); do [ -s "$work/$1.addr" ] && return 0; sleep 0.05; done
  echo "registry $1 did not start" >&2; cat "$work/$1.log" >&2; return 1
}
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

start_registry public; PUBLIC=$(cat "$work/public.addr")
start_registry mirror; MIRROR=$(cat "$work/mirror.addr")
echo "public registry: $PUBLIC   private mirror: $MIRROR"

step "seed the public registry with Porter bundles (cnab-to-oci layout) and Crossplane packages (xpkg); write a mixin feed"
go run ./internal/cmd/seed --registry "$PUBLIC" --feed-dir "$work/feed" | tee "$work/seed.txt"
# Bundles built with mixins name Porter's public feed; the demo's feed is local.
export FERRY_MIXIN_FEED=$(awk '$1=="mixin-feed"{print $2}' "$work/seed.txt")
XP_APP=$(awk '$1=="crossplane-transitive"{print $2}' "$work/seed.txt")
XP_MOVED=$(awk '$1=="crossplane-moved"{print $2}' "$work/seed.txt")

cd "$work"
cat > ferry.yaml <<YAML
apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: $PUBLIC/fixtures/diamond/app:v1.0.0
  - ref: $PUBLIC/fixtures/v2/env
    version: "^1.0"
  - ref: $PUBLIC/fixtures/iface/app:v1.0.0
  - ref: $XP_APP
  - ref: $XP_MOVED
mixins:
  - name: exec
    version: 1.x
platforms: [linux/amd64, darwin/arm64]
porter:
  versionStrategy: highest   # PEP003's highest in range; Porter's default is exact
use:
  mysql: $PUBLIC/fixtures/iface/mysql:v5.7.1
mirror:
  to: $MIRROR
YAML
step "ferry.yaml"; cat ferry.yaml

step "ferry resolve"
"$FERRY" resolve
step "ferry resolve -o plan"
"$FERRY" resolve -o plan

step "ferry lock"
"$FERRY" lock
grep -c 'digest:' ferry.lock | xargs echo "digests locked:"

step "ferry mirror --to $MIRROR/mirror: refused, the prefix would break partially qualified Crossplane references"
"$FERRY" mirror --to "$MIRROR/mirror" || echo "(exit $?, nothing copied)"

step "ferry mirror --to $MIRROR"
"$FERRY" mirror --to "$MIRROR"

step "ferry verify --deep"
"$FERRY" verify --deep

step "stop the public registry: install must read only from the mirror"
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true

step "ferry install --dest ./install --porter-home ./porter-home"
"$FERRY" install --dest ./install --porter-home ./porter-home
ls install install/crossplane
find porter-home -type f
echo "relocation-mapping.json entries: $(grep -c '": "' install/relocation-mapping.json)"

step "ferry why db"
"$FERRY" why db

step "ferry why old-org/provider-x (replaced)"
"$FERRY" why old-org/provider-x

step "done"
