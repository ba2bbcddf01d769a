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

step "seed the public registry with Porter bundles (cnab-to-oci layout)"
go run ./testdata/seed --registry "$PUBLIC"

cd "$work"
cat > ferry.yaml <<YAML
apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: $PUBLIC/fixtures/diamond/app:v1.0.0
  - ref: $PUBLIC/fixtures/v2/env
    version: "^1.0"
  - ref: $PUBLIC/fixtures/iface/app:v1.0.0
use:
  mysql: $PUBLIC/fixtures/iface/mysql:v5.7.1
mirror:
  to: $MIRROR/mirror
YAML
step "ferry.yaml"; cat ferry.yaml

step "ferry resolve"
"$FERRY" resolve
step "ferry resolve -o plan"
"$FERRY" resolve -o plan

step "ferry lock"
"$FERRY" lock
grep -c 'digest:' ferry.lock | xargs echo "digests locked:"

step "ferry mirror --to $MIRROR/mirror"
"$FERRY" mirror --to "$MIRROR/mirror"

step "ferry verify --deep"
"$FERRY" verify --deep

step "stop the public registry: install must read only from the mirror"
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true

step "ferry install --dest ./install"
"$FERRY" install --dest ./install
ls install
echo "relocation-mapping.json entries: $(grep -c '": "' install/relocation-mapping.json)"

step "ferry why db"
"$FERRY" why db

step "done"
