#!/usr/bin/env bash
# make bench: PRODUCT.md's benchmark workloads W1-W4, ferry against the peer
# copy tools in the same run, on loopback registries only. Installs the peers
# it can (bin/bench-tools), runs `go run ./internal/cmd/bench`, and rewrites
# BENCHMARKS.md. Not part of `make test` or CI.
#
# Environment:
#   BENCH_RUNS=N          runs per timed figure, median reported (default 3)
#   BENCH_SCALE=F         multiplies W1's 40 repositories and W2's 1,000 packages (default 1)
#   BENCH_FULL=1          W3 with PRODUCT.md's 2 GiB layer (default 512 MiB)
#   BENCH_WORKLOADS=LIST  comma-separated subset of w1,w1lat,w2,w3,helm,faults,scale,mounts,w6,lean (w1 includes W4 and
#                         the bound, w1lat is W1 with 20 ms per request on both sides
#                         (mirrors in /dev/shm, then on disk), helm is W5,
#                         scale is 40/200/1,000 repositories against crane, resolution of 1,000 and
#                         10,000 packages and bookkeeping up to 30,000, mounts is 200 repositories
#                         onto a registry refusing cross-repository mounts, w6 is image sync against
#                         skopeo sync and regsync, lean is ferry version, binary size, package count
#                         and cold build against crane)
#   BENCH_COLD_BUILD=0    lean without the cold builds (empty GOCACHE; many minutes on 2 cores)
#   BENCH_FAULT_SEEDS=N   seeds of the fault benchmark, one first run per tool each (default 10)
#   BENCH_OUT=FILE        report to write (default BENCHMARKS.md)
#   BENCH_WORK=DIR        keep registries and logs there instead of a removed temp dir
set -euo pipefail
cd "$(dirname "$0")/.."

tools="$PWD/bin/bench-tools"
mkdir -p "$tools"
reasons="$tools/unavailable.tsv"
: >"$reasons"

# ferry's go.mod has no go-containerregistry, so crane is pinned here to the
# release the bench was written against; regctl likewise.
CRANE_MODULE=github.com/google/go-containerregistry/cmd/crane@v0.22.1
REGCTL_MODULE=github.com/regclient/regclient/cmd/regctl@v0.11.7
REGSYNC_MODULE=github.com/regclient/regclient/cmd/regsync@v0.11.7
ORAS_MODULE=oras.land/oras/cmd/oras@latest

# install_go BIN MODULE@VERSION: go install into bin/bench-tools once. A
# refusal is remembered in BIN.refused and not retried; a later run reports
# it as the reason the tool is unavailable.
install_go() {
  local bin=$1 mod=$2
  [ -x "$tools/$bin" ] && return 0
  if [ -s "$tools/$bin.refused" ]; then
    printf '%s\t%s\n' "$bin" "$(cat "$tools/$bin.refused")" >>"$reasons"
    return 0
  fi
  echo "bench: go install $mod" >&2
  local out
  if ! out=$(GOBIN="$tools" go install "$mod" 2>&1); then
    # The reason goes into BENCHMARKS.md: keep the error, not the URL.
    printf 'go install %s refused: %s' "$mod" "$(printf '%s' "$out" | tail -n 3 | tr '\n\t' '  ' |
      sed -E 's#reading https?://[^ ]*: ##; s#https?://[^ ]*#the module proxy#g')" >"$tools/$bin.refused"
    printf '%s\t%s\n' "$bin" "$(cat "$tools/$bin.refused")" >>"$reasons"
  fi
}
install_go crane "$CRANE_MODULE"
install_go regctl "$REGCTL_MODULE"
install_go regsync "$REGSYNC_MODULE"
install_go oras "$ORAS_MODULE"

# skopeo and GNU time (peak RSS) come from Debian.
need=()
command -v skopeo >/dev/null || need+=(skopeo)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "bench: apt-get install ${need[*]}" >&2
    if ! out=$( (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") 2>&1); then
      echo "bench: apt-get failed: $(printf '%s' "$out" | tail -n 3)" >&2
    fi
  fi
  command -v skopeo >/dev/null || printf 'skopeo\tnot installed: apt-get install skopeo failed or is not possible here (needs root and apt)\n' >>"$reasons"
fi

[ -x bin/ferry ] || go build -o bin/ferry ./cmd/ferry

runs=${BENCH_RUNS:-3}
scale=${BENCH_SCALE:-1}
w3=512
[ "${BENCH_FULL:-}" = 1 ] && w3=2048
workloads=${BENCH_WORKLOADS:-w1,w1lat,w2,w3,helm,faults,scale,mounts,w6,lean}
fault_seeds=${BENCH_FAULT_SEEDS:-10}
desc="make bench"
cold_build=true
[ "${BENCH_COLD_BUILD:-}" = 0 ] && cold_build=false
# crane's source, for lean's package count and cold build: the module
# crane was installed from, from the module cache.
crane_src=$(go mod download -json "${CRANE_MODULE%%/cmd/crane@*}@${CRANE_MODULE##*@}" 2>/dev/null |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' || true)
for v in BENCH_RUNS BENCH_SCALE BENCH_FULL BENCH_WORKLOADS BENCH_FAULT_SEEDS BENCH_COLD_BUILD; do
  [ -n "${!v:-}" ] && desc="$v=${!v} $desc"
done

work_args=()
[ -n "${BENCH_WORK:-}" ] && work_args=(--work "$BENCH_WORK")

PATH="$tools:$PATH" go run ./internal/cmd/bench \
  --ferry bin/ferry \
  --out "${BENCH_OUT:-BENCHMARKS.md}" \
  --runs "$runs" --scale "$scale" --w3-mib "$w3" --workloads "$workloads" --fault-seeds "$fault_seeds" \
  --crane-src "$crane_src" --cold-build="$cold_build" \
  --unavailable "$reasons" --command "$desc" "${work_args[@]}"
