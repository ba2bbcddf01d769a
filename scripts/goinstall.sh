#!/usr/bin/env bash
# Checks that ferry installs the Go way, as a user would run it:
#
#   go install github.com/ferryhq/ferry/cmd/ferry@VERSION
#
# The module as git would commit it is published at a made-up version
# (GOINSTALL_VERSION, default v0.0.0-test) into a file:// module proxy by
# internal/cmd/modproxy (golang.org/x/mod/zip, the go command's own zip
# rules, so a file missing from the module zip breaks this test as it would
# break users). go install then reads ferry from that proxy and every
# dependency from the module cache or the usual GOPROXY; nothing else is
# contacted. The go command refuses a module installed by version whose
# go.mod has a replace or exclude directive; this fails if one comes back.
# The installed binary must print the version it was installed at.
# `make test` runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
VERSION=${GOINSTALL_VERSION:-v0.0.0-test}

module=$("$GO" list -m)
modcache=$("$GO" env GOMODCACHE)
# The go command would take the made-up version from the module cache, left
# there by the last run, instead of from the proxy: remove that one version
# (and only it) before and after. The go command also keeps an index of each
# module cache directory in GOCACHE, trusting it never changes
# (cmd/go/internal/modindex); GODEBUG=goindex=0 below keeps it from
# indexing, and from reading the last run's index of another tree.
forget() {
  local d="$modcache/$module@$VERSION"
  [ -d "$d" ] && chmod -R u+w "$d" && rm -rf "$d"
  rm -f "$modcache/cache/download/$module/@v/$VERSION".*
}
work=$(mktemp -d)
trap 'forget; chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
forget
"$GO" run ./internal/cmd/modproxy -dir . -version "$VERSION" -out "$work/proxy" >/dev/null

upstream=$("$GO" env GOPROXY)
mkdir -p "$work/bin" "$work/cwd"
start=$(date +%s)
# Outside any module, as a user's shell is; the fake version is not in the
# checksum database, so it alone is exempt from it.
(
  cd "$work/cwd"
  GOWORK=off GOFLAGS=-mod=mod GOBIN="$work/bin" \
  GODEBUG=goindex=0 \
  GOPROXY="file://$work/proxy,$upstream" \
  GONOSUMDB="$module" GONOPROXY= GOPRIVATE= \
    "$GO" install "$module/cmd/ferry@$VERSION"
)
# The first line names the version; the others the Go version and platform.
# The whole output is read first: `ferry version | head -n 1` under
# pipefail fails when head exits before ferry writes its last lines (ferry
# then dies of SIGPIPE), which a loaded machine makes likely.
out=$("$work/bin/ferry" version)
got=${out%%$'\n'*}
if [ "$got" != "ferry $VERSION" ]; then
  echo "goinstall: ferry version printed \"$got\", want \"ferry $VERSION\"" >&2
  exit 1
fi
size=$(wc -c <"$work/bin/ferry")
echo "goinstall: go install $module/cmd/ferry@$VERSION from a file:// proxy: ok ($(( $(date +%s) - start )) s, $(( size / 1000000 )) MB)"
