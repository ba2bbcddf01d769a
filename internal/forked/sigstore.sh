#!/bin/sh
# sigstore.sh: the pruned copies ferry links instead of sigstore-go's
# verifier and what it imports (issue 29): sigstore-go, rekor-tiles, rekor,
# go-openapi-runtime, go-openapi-validate, go-openapi-swag,
# certificate-transparency-go, govalidator, in-toto-golang. Each folder's
# UPSTREAM.md says what was copied and why; this script re-creates the
# copies from the module cache at the versions in go.mod. Run from the
# repository root.
#
#   sh internal/forked/sigstore.sh copy NAME DEST   verbatim copy into DEST/NAME
#   sh internal/forked/sigstore.sh patch NAME       rewrite NAME/ferry.patch (verbatim -> tree)
#   sh internal/forked/sigstore.sh check NAME       verbatim + ferry.patch == tree
#
# Upgrading: bump the module in go.mod, `copy` into a scratch folder, apply
# the old ferry.patch there (cd DEST && patch -E -p1 < .../NAME/ferry.patch),
# resolve what no longer applies, copy the result over the folder, run the
# parity tests (go test ./internal/forked/...), then `patch` again.
set -e
forks="sigstore-go rekor-tiles rekor go-openapi-runtime go-openapi-validate go-openapi-swag certificate-transparency-go govalidator in-toto-golang"

copy() { # copy NAME DEST
name=$1; dest=$2
F=github.com/ferryhq/ferry/internal/forked
dir() { go list -m -f '{{.Dir}}' "$1"; }
pkgs() { # pkgs MODDIR PKG...: the non-test .go files of each package
  src=$1; shift
  for p in "$@"; do
    mkdir -p "$dest/$name/$p"
    for f in "$src/$p"/*.go; do
      case "$f" in *_test.go) ;; *) cp "$f" "$dest/$name/$p/" ;; esac
    done
  done
}
files() { # files MODDIR FILE...
  src=$1; shift
  for f in "$@"; do mkdir -p "$dest/$name/$(dirname "$f")"; cp "$src/$f" "$dest/$name/$f"; done
}
own() { # own MODPATH PKG...: imports of the copied packages move to the fork
  mod=$1; shift
  for p in "$@"; do
    find "$dest/$name" -name '*.go' | xargs sed -i "s#\"$mod/$p\"#\"$F/$name/$p\"#"
  done
  gofmt -w "$dest/$name"
}
case $name in
sigstore-go)
  set -- internal/certificate internal/limits pkg/bundle pkg/root pkg/tlog pkg/verify
  pkgs "$(dir github.com/sigstore/sigstore-go)" "$@"; files "$(dir github.com/sigstore/sigstore-go)" LICENSE COPYRIGHT.txt
  own github.com/sigstore/sigstore-go "$@" ;;
rekor-tiles)
  set -- pkg/generated/protobuf pkg/types/verifier pkg/types/hashedrekord internal/algorithmregistry
  pkgs "$(dir github.com/sigstore/rekor-tiles/v2)" "$@"; files "$(dir github.com/sigstore/rekor-tiles/v2)" LICENSE COPYRIGHT.txt
  own github.com/sigstore/rekor-tiles/v2 "$@" ;;
rekor)
  set -- pkg/generated/models pkg/internal/log pkg/pki/x509 pkg/types pkg/types/dsse pkg/types/dsse/v0.0.1 \
    pkg/types/hashedrekord pkg/types/hashedrekord/v0.0.1 pkg/types/intoto pkg/types/intoto/v0.0.2 pkg/verify
  pkgs "$(dir github.com/sigstore/rekor)" "$@"; files "$(dir github.com/sigstore/rekor)" LICENSE COPYRIGHT.txt
  own github.com/sigstore/rekor "$@" ;;
go-openapi-runtime)
  files "$(dir github.com/go-openapi/runtime)" interfaces.go json.go LICENSE NOTICE ;;
go-openapi-validate)
  files "$(dir github.com/go-openapi/validate)" values.go context.go rexp.go doc.go LICENSE ;;
go-openapi-swag)
  files "$(dir github.com/go-openapi/swag)" jsonutils_iface.go typeutils_iface.go doc.go LICENSE ;;
certificate-transparency-go)
  files "$(dir github.com/google/certificate-transparency-go)" ctutil/ctutil.go LICENSE AUTHORS ;;
govalidator)
  files "$(dir github.com/asaskevich/govalidator)" patterns.go validator.go LICENSE ;;
in-toto-golang)
  files "$(dir github.com/in-toto/in-toto-golang)" in_toto/attestations.go in_toto/envelope.go LICENSE ;;
*) echo "unknown fork $name" >&2; exit 2 ;;
esac
chmod -R u+w "$dest/$name"
}

genpatch() { # genpatch NAME
  name=$1; root=$(pwd); tmp=$(mktemp -d)
  copy "$name" "$tmp/a"
  mkdir -p "$tmp/b"
  (cd internal/forked && find "$name" -type f ! -name '*_test.go' ! -name UPSTREAM.md ! -name ferry.patch | LC_ALL=C sort | tar -cf - -T -) | tar -xf - -C "$tmp/b"
  (cd "$tmp" && diff -ruN "a/$name" "b/$name" | sed 's/^\(---\|+++\) \([^	]*\)	.*/\1 \2/' > "$root/internal/forked/$name/ferry.patch") || true
  rm -rf "$tmp"
}

check() { # check NAME
  name=$1; root=$(pwd); tmp=$(mktemp -d)
  copy "$name" "$tmp"
  (cd "$tmp" && patch -s -E -p1 < "$root/internal/forked/$name/ferry.patch")
  bad=0
  (cd internal/forked && find "$name" -type f ! -name '*_test.go' ! -name UPSTREAM.md ! -name ferry.patch) | while read -r f; do
    cmp -s "internal/forked/$f" "$tmp/$f" || { echo "$f differs from the copy with ferry.patch" >&2; exit 1; }
  done || bad=1
  (cd "$tmp" && find "$name" -type f) | while read -r f; do
    [ -f "internal/forked/$f" ] || { echo "$f: in the copy with ferry.patch, not in the tree" >&2; exit 1; }
  done || bad=1
  rm -rf "$tmp"
  return $bad
}

case $1 in
copy) copy "$2" "$3" ;;
patch) if [ -n "$2" ]; then genpatch "$2"; else for n in $forks; do genpatch "$n"; done; fi ;;
check) if [ -n "$2" ]; then check "$2"; else for n in $forks; do check "$n" && echo "$n: ok"; done; fi ;;
*) echo "usage: sigstore.sh copy NAME DEST | patch [NAME] | check [NAME]" >&2; exit 2 ;;
esac
