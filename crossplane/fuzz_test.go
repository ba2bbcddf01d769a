package crossplane

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry/ociref"
)

// FuzzParsePackageYAML checks that a package.yaml ParsePackageYAML accepts
// is a meta object of a known version and kind with a name, whose
// dependencies each name a package with a constraint or digest version and
// whose spec.crossplane.version is a constraint; that ReadRoots turns it
// into fully qualified references that parse back to themselves; and that
// each dependency Qualify accepts qualifies to itself again. Seeds are the
// realworld crossplane.yaml files.
func FuzzParsePackageYAML(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(realworld, "*.yaml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no realworld files in %s: %v", realworld, err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata: {name: p}\nspec:\n  replaces: [xpkg.upbound.io/a/b]\n  dependsOn:\n  - function: f\n    version: sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n---\nkind: CustomResourceDefinition\n"))
	parent, err := ociref.Parse("xpkg.crossplane.io/acme/configuration-example:v1")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParsePackageYAML(data)
		if err != nil {
			return
		}
		if m.Name == "" || m.FormatKind() == "" || !strings.HasPrefix(m.APIVersion, MetaGroup+"/") {
			t.Fatalf("accepted a meta object without name, kind or group: %+v", m)
		}
		if m.Crossplane != "" {
			if _, err := semver.NewConstraint(m.Crossplane); err != nil {
				t.Fatalf("accepted spec.crossplane.version %q: %v", m.Crossplane, err)
			}
		}
		for _, d := range m.DependsOn {
			if strings.TrimSpace(d.Package) == "" {
				t.Fatalf("dependency without a package: %+v", d)
			}
			if d.Kind != "" && FormatKind(d.Kind) == "" {
				t.Fatalf("dependency of unknown kind: %+v", d)
			}
			if q, err := (Reader{}).Qualify(d.Package, parent); err == nil {
				if again, err := (Reader{}).Qualify(q.String(), parent); err != nil || again != q {
					t.Fatalf("Qualify(%q) = %s; qualified again: %+v, %v", d.Package, q, again, err)
				}
			}
		}
		for _, r := range m.Replaces {
			ref, err := ociref.Parse(r)
			if err != nil || ref.Tag != "" || ref.Digest != "" {
				t.Fatalf("accepted replaces %q: %+v, %v", r, ref, err)
			}
		}
		if len(m.Dependencies()) != len(m.DependsOn) {
			t.Fatalf("Dependencies() lost entries: %+v", m)
		}
		again, err := ParsePackageYAML(data)
		if err != nil || !reflect.DeepEqual(m, again) {
			t.Fatalf("parsing twice differs: %+v, %+v (%v)", m, again, err)
		}
		roots, err := ReadRoots(data, "")
		if err != nil {
			return
		}
		if len(roots) != len(m.DependsOn) {
			t.Fatalf("ReadRoots returned %d roots for %d dependencies", len(roots), len(m.DependsOn))
		}
		for _, r := range roots {
			ref, err := ociref.Parse(r.Ref)
			if err != nil || ref.String() != r.Ref {
				t.Fatalf("root %q does not parse back: %+v, %v", r.Ref, ref, err)
			}
		}
	})
}
