#!/usr/bin/env bash
# `make release`: everything a ferry release publishes, in dist/.
#
#   dist/ferry-VERSION-OS-ARCH[.exe]        static binaries (scripts/dist.sh)
#   dist/ferry-VERSION-OS-ARCH.spdx.json    an SPDX 2.3 SBOM of each, from its Go build info
#   dist/SHA256SUMS                          over the binaries and the SBOMs
#   dist/image/                              the container image, an OCI layout tagged VERSION:
#                                            linux/amd64 and linux/arm64, the static binary on an
#                                            empty base (CA bundle, non-root user, /tmp, /work)
# and, when COSIGN_KEY names a cosign private key (COSIGN_PASSWORD as cosign reads it):
#   dist/SHA256SUMS.sig                      cosign sign-blob over SHA256SUMS
#   dist/ferry-image-VERSION.tar             a ferry archive of the image and its cosign
#                                            signature, made by ferry itself: import it with
#                                            ferry mirror --from-archive F --to REGISTRY/tools
#
# VERSION defaults to `git describe --tags --always --dirty`; tag first
# (git tag v0.1.0) for a version `go install …@VERSION` also finds.
# PLATFORMS as for scripts/dist.sh. COSIGN defaults to bin/tools/cosign-v2
# (make tools), else cosign on the PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
export VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

GO="$GO" bash scripts/dist.sh
"$GO" build -o bin/release ./internal/cmd/release

sboms=()
for b in dist/ferry-"$VERSION"-*; do
  case "$b" in *.spdx.json) continue ;; esac
  bin/release sbom "$b"
  sboms+=("$(basename "$b").spdx.json")
done

images=()
for b in dist/ferry-"$VERSION"-linux-*; do
  case "$b" in *.spdx.json) continue ;; esac
  arch=${b##*-linux-}
  images+=("linux/$arch=$b")
done
if [ ${#images[@]} -gt 0 ]; then
  rm -rf dist/image
  bin/release image -out dist/image -version "$VERSION" "${images[@]}"
fi

(
  cd dist
  files=(ferry-"$VERSION"-* )
  if command -v sha256sum >/dev/null; then sha256sum "${files[@]}" >SHA256SUMS; else shasum -a 256 "${files[@]}" >SHA256SUMS; fi
)

if [ -z "${COSIGN_KEY:-}" ]; then
  echo "release: COSIGN_KEY not set: nothing signed"
  exit 0
fi
COSIGN=${COSIGN:-}
if [ -z "$COSIGN" ]; then
  if [ -x bin/tools/cosign-v2 ]; then COSIGN=bin/tools/cosign-v2; else COSIGN=$(command -v cosign); fi
fi
"$COSIGN" sign-blob --yes --tlog-upload=false --key "$COSIGN_KEY" --output-signature dist/SHA256SUMS.sig dist/SHA256SUMS

# The image is signed where cosign signs images, a registry: ferry serve on
# loopback; ferry itself then carries the image and its signature into an
# archive, the way a user carries anything across an air gap.
host_bin=dist/ferry-"$VERSION"-$("$GO" env GOOS)-$("$GO" env GOARCH)
work=$(mktemp -d)
trap 'kill "${serve_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$host_bin" serve --root "$work/registry" --addr 127.0.0.1:0 --addr-file "$work/addr" &
serve_pid=$!
for _ in $(seq 100); do [ -s "$work/addr" ] && break; sleep 0.1; done
addr=$(cat "$work/addr")
digest=$(bin/release push dist/image "$VERSION" "$addr/tools/ferry:$VERSION")
"$COSIGN" sign --yes --tlog-upload=false --allow-insecure-registry --key "$COSIGN_KEY" "$addr/tools/ferry@$digest"
(cd "$work" && "$OLDPWD/$host_bin" mirror "$addr/tools/ferry:$VERSION" --to-archive "$OLDPWD/dist/ferry-image-$VERSION.tar")
echo "release: dist/ferry-image-$VERSION.tar holds $addr/tools/ferry@$digest and its signature"
