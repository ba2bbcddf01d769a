package mirrorset_test

import (
	"strings"
	"testing"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/mixin"
)

const base = `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: ghcr.io/acme/wordpress:v1.2.0
  - ref: xpkg.upbound.io/acme/platform
    version: ">=v1.0.0 <v2"
mixins:
  - name: exec
    version: 1.x
    feed: https://cdn.porter.sh/mixins/atom.xml
platforms: [linux/amd64, darwin/arm64]
replace:
  - from: xpkg.upbound.io/upbound/provider-family-aws
    to: xpkg.upbound.io/crossplane-contrib/provider-family-aws
use:
  mysql: ghcr.io/acme/mysql-azure:v5.7.1
mirror:
  to: registry.internal.acme.com/mirror
`

func TestParseProductExample(t *testing.T) {
	m, err := mirrorset.Parse([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	roots := m.Roots()
	if len(roots) != 2 || roots[1].Ref != "xpkg.upbound.io/acme/platform" || roots[1].Constraint != ">=v1.0.0 <v2" {
		t.Errorf("roots = %+v", roots)
	}
	if m.ReplaceMap()["xpkg.upbound.io/upbound/provider-family-aws"] != "xpkg.upbound.io/crossplane-contrib/provider-family-aws" {
		t.Errorf("replace = %v", m.ReplaceMap())
	}
	if m.Mirror.To != "registry.internal.acme.com/mirror" || m.Use["mysql"].Ref == "" || len(m.Sections["platforms"].Content) != 2 {
		t.Errorf("parsed %+v", m)
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"kind", strings.Replace(base, "kind: MirrorSet", "kind: Lock", 1), "kind"},
		{"unknown field", base + "extra: 1\n", "extra"},
		{"no packages", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n", "no packages"},
		{"bad root", strings.Replace(base, "ghcr.io/acme/wordpress", "Acme/Wordpress", 1), "packages[0]"},
		{"credentials in root", strings.Replace(base, "ghcr.io/acme/wordpress", "u:pw@ghcr.io/acme/wordpress", 1), "credentials"},
		{"replace with tag", strings.Replace(base, "provider-family-aws\n    to", "provider-family-aws:v1\n    to", 1), "replace[0]"},
		{"mixin path", strings.Replace(base, "name: exec", "name: ../exec", 1), "mixins[0]"},
		{"platform", strings.Replace(base, "darwin/arm64", "darwin", 1), "platforms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := mirrorset.Parse([]byte(tt.yaml))
			if err == nil {
				err = m.CheckSections([]format.Format{mixin.Format{}})
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v, want an error about %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "pw@") {
				t.Errorf("error echoes the password: %v", err)
			}
		})
	}
}

// TestDigest: the inputs digest ignores order and the mirror target, and
// changes with every input.
func TestDigest(t *testing.T) {
	digestOf := func(yaml string) string {
		t.Helper()
		m, err := mirrorset.Parse([]byte(yaml))
		if err != nil {
			t.Fatalf("%v\n%s", err, yaml)
		}
		return m.Digest()
	}
	want := digestOf(base)
	same := map[string]string{
		"mirror target":  strings.Replace(base, "registry.internal.acme.com/mirror", "other.example.com/m", 1),
		"platform order": strings.Replace(base, "[linux/amd64, darwin/arm64]", "[darwin/arm64, linux/amd64]", 1),
		"package order": strings.Replace(base, `  - ref: ghcr.io/acme/wordpress:v1.2.0
  - ref: xpkg.upbound.io/acme/platform
    version: ">=v1.0.0 <v2"`, `  - ref: xpkg.upbound.io/acme/platform
    version: ">=v1.0.0 <v2"
  - ref: ghcr.io/acme/wordpress:v1.2.0`, 1),
	}
	for name, y := range same {
		if y == base {
			t.Fatalf("%s: case changed nothing", name)
		}
		if got := digestOf(y); got != want {
			t.Errorf("%s changes the inputs digest", name)
		}
	}
	differ := map[string]string{
		"constraint": strings.Replace(base, ">=v1.0.0 <v2", ">=v1.1.0 <v2", 1),
		"root tag":   strings.Replace(base, "wordpress:v1.2.0", "wordpress:v1.2.1", 1),
		"use":        strings.Replace(base, "mysql-azure:v5.7.1", "mysql-azure:v5.7.2", 1),
		"replace":    strings.Replace(base, "crossplane-contrib/provider-family-aws", "acme/provider-family-aws", 1),
		"mixin":      strings.Replace(base, "version: 1.x", "version: 2.x", 1),
		"platforms":  strings.Replace(base, ", darwin/arm64]", "]", 1),
	}
	for name, y := range differ {
		if got := digestOf(y); got == want {
			t.Errorf("changing the %s keeps the inputs digest", name)
		}
	}
	if !strings.HasPrefix(want, "sha256:") || len(want) != 71 {
		t.Errorf("digest %q", want)
	}
}
