#!/usr/bin/env bash
# Cross-compiles ferry's release binaries into dist/ (`make dist`):
#
#   dist/ferry-VERSION-OS-ARCH[.exe]  for linux, darwin, windows × amd64, arm64
#   dist/SHA256SUMS                   in sha256sum's format (sha256sum -c)
#
# Static (CGO_ENABLED=0), reproducible paths (-trimpath), no symbol table or
# DWARF (-s -w), and the version `ferry version` prints set with
# -X main.version. VERSION defaults to `git describe --tags --always
# --dirty`, or "dev" outside a git checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
PLATFORMS=${PLATFORMS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}

rm -rf dist
mkdir -p dist
names=()
for p in $PLATFORMS; do
  os=${p%/*} arch=${p#*/}
  name="ferry-$VERSION-$os-$arch"
  [ "$os" = windows ] && name="$name.exe"
  echo "dist: $name"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$GO" build -trimpath \
    -ldflags "-s -w -X main.version=$VERSION" -o "dist/$name" ./cmd/ferry
  names+=("$name")
done
(
  cd dist
  if command -v sha256sum >/dev/null; then
    sha256sum "${names[@]}" >SHA256SUMS
  else
    shasum -a 256 "${names[@]}" >SHA256SUMS
  fi
)
cat dist/SHA256SUMS
