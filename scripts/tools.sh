#!/usr/bin/env bash
# scripts/tools.sh: build the external tools ferry's tests run for real into
# bin/tools, from the module proxy with `go install` (both are Go modules):
#
#   bin/tools/cosign-v2   github.com/sigstore/cosign/v2/cmd/cosign@COSIGN_V2
#   bin/tools/cosign-v3   github.com/sigstore/cosign/v3/cmd/cosign@COSIGN_V3
#   bin/tools/helm-v3     helm.sh/helm/v3/cmd/helm@HELM_V3 (the hand-off test
#                         runs helm v3's own `dependency build`; helm v4 is
#                         tested through its Go packages)
#
# make interop (scripts/interop.sh) runs it first; with FERRY_INTEROP=1,
# internal/cosigntest and internal/tooltest run it when a test needs a tool
# that is not built yet. A tool already in bin/tools is kept. Arguments name the tools to
# build (cosign-v2, cosign-v3); none builds all. The versions here are the
# ones internal/cosigntest expects (it checks `cosign version`).
set -euo pipefail
cd "$(dirname "$0")/.."

COSIGN_V2=v2.6.5
COSIGN_V3=v3.1.3
HELM_V3=v3.22.0

tools="$PWD/bin/tools"
mkdir -p "$tools"

# While this script builds, bin/tools/.building holds its pid: a test that
# needs a tool waits for this build (internal/cosigntest) instead of
# starting a second one. `make test` never builds them: its tests use the
# in-process cosign (internal/cosigntest).
echo $$ >"$tools/.building"
trap 'rm -f "$tools/.building"' EXIT

# install NAME MODULE/cmd/BIN VERSION: go install into a scratch GOBIN,
# then rename, so a failed build never leaves a half-installed tool.
install() {
  local name=$1 pkg=$2 version=$3 bin=${2##*/}
  if [ -x "$tools/$name" ]; then
    return 0
  fi
  local tmp
  tmp=$(mktemp -d "$tools/.build-$name.XXXXXX")
  trap 'rm -rf "$tmp"' RETURN
  echo "tools: go install $pkg@$version" >&2
  local start=$SECONDS
  GOBIN="$tmp" GOFLAGS=-buildvcs=false go install "$pkg@$version"
  mv "$tmp/$bin" "$tools/$name"
  echo "tools: $name built in $((SECONDS - start))s" >&2
}

want=("$@")
[ ${#want[@]} -eq 0 ] && want=(cosign-v2 cosign-v3 helm-v3)
for t in "${want[@]}"; do
  case $t in
  cosign-v2) install cosign-v2 github.com/sigstore/cosign/v2/cmd/cosign "$COSIGN_V2" ;;
  cosign-v3) install cosign-v3 github.com/sigstore/cosign/v3/cmd/cosign "$COSIGN_V3" ;;
  helm-v3) install helm-v3 helm.sh/helm/v3/cmd/helm "$HELM_V3" ;;
  *)
    echo "tools: unknown tool $t (want cosign-v2, cosign-v3, helm-v3)" >&2
    exit 2
    ;;
  esac
done
