package mirrorset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFromCrossplaneYAMLRealWorld(t *testing.T) {
	files, err := filepath.Glob("../testdata/realworld/crossplane/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no real-world crossplane files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if got := fileKind("x.yaml", data); got != fileCrossplane {
				t.Fatalf("fileKind = %s, want %s", got, fileCrossplane)
			}
			m, err := FromCrossplaneYAML(data)
			if err != nil && strings.Contains(string(data), "dependsOn") {
				t.Fatal(err)
			}
			if err != nil {
				// A package with no dependencies has nothing to resolve.
				if !strings.Contains(err.Error(), "declares no dependencies") {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			for _, p := range m.Packages {
				if strings.Contains(p.Ref, "@sha256:") && p.Version != "" {
					t.Errorf("%s: digest pin kept a version %q", p.Ref, p.Version)
				}
			}
		})
	}
}

func TestFromCrossplaneYAML(t *testing.T) {
	m, err := FromCrossplaneYAML([]byte(`apiVersion: meta.pkg.crossplane.io/v1
kind: Configuration
metadata: {name: platform}
spec:
  dependsOn:
    - provider: xpkg.upbound.io/crossplane-contrib/provider-nop
      version: ">=v0.2.0"
    - function: crossplane-contrib/function-patch-and-transform
      version: "sha256:ecc25c121431dfc7058754427f97c034ecde26d4aafa0da16d258090e0443904"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Package{
		{Ref: "xpkg.upbound.io/crossplane-contrib/provider-nop", Version: ">=v0.2.0"},
		{Ref: "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform@sha256:ecc25c121431dfc7058754427f97c034ecde26d4aafa0da16d258090e0443904"},
	}
	if len(m.Packages) != len(want) {
		t.Fatalf("packages = %+v", m.Packages)
	}
	for i := range want {
		if m.Packages[i] != want[i] {
			t.Errorf("package %d = %+v, want %+v", i, m.Packages[i], want[i])
		}
	}
	if _, err := FromCrossplaneYAML([]byte("apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata: {name: x}\nspec: {}\n")); err == nil {
		t.Error("no dependencies: want an error")
	}
}
