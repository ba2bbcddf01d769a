package crossplane

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/format"
)

// realworld is the folder of upstream crossplane.yaml files every reader
// must parse.
const realworld = "../testdata/realworld/crossplane"

func TestParseRealWorld(t *testing.T) {
	want := map[string]*Meta{
		"configuration-dependency.crossplane.yaml": {
			APIVersion: "meta.pkg.crossplane.io/v1", Kind: KindConfiguration, Name: "e2e-depends-on-provider-nop",
			DependsOn: []Dependency{{Package: "xpkg.upbound.io/crossplane-contrib/provider-nop", Kind: KindProvider, APIVersion: "pkg.crossplane.io/v1", Version: "=v0.3.1"}},
		},
		"configuration-digest.crossplane.yaml": {
			APIVersion: "meta.pkg.crossplane.io/v1", Kind: KindConfiguration, Name: "configuration-digest",
			DependsOn: []Dependency{{Package: "xpkg.upbound.io/crossplane-contrib/provider-nop", Kind: KindProvider, Version: "sha256:ecc25c121431dfc7058754427f97c034ecde26d4aafa0da16d258090e0443904"}},
		},
		"dependency-upgrade-downgrade.crossplane.yaml": {
			APIVersion: "meta.pkg.crossplane.io/v1", Kind: KindConfiguration, Name: "e2e-nested-configuration",
			DependsOn: []Dependency{
				{Package: "xpkg.upbound.io/crossplane-contrib/provider-nop", Kind: KindProvider, Version: "<=v0.4.0"},
				{Package: "xpkg.crossplane.io/crossplane/e2e-depends-on-provider-nop", Kind: KindConfiguration, Version: "v0.3.1"},
			},
		},
		"dependency-upgrade-transitive-packages-config1-v0.0.3.crossplane.yaml": {
			APIVersion: "meta.pkg.crossplane.io/v1", Kind: KindConfiguration, Name: "config-1",
			DependsOn: []Dependency{{Package: "xpkg.crossplane.io/crossplane/e2e-transitive-dep1", Kind: KindConfiguration, APIVersion: "pkg.crossplane.io/v1", Version: "v0.0.3"}},
		},
		"dependency-upgrade-transitive-packages-transitive-v0.0.2.crossplane.yaml": {
			APIVersion: "meta.pkg.crossplane.io/v1", Kind: KindConfiguration, Name: "transitive-dependency",
		},
		"image-config-rewrite.crossplane.yaml": {
			APIVersion: "meta.pkg.crossplane.io/v1alpha1", Kind: KindConfiguration, Name: "e2e-rewrite",
			DependsOn: []Dependency{{Package: "registry.example.com/crossplane-contrib/provider-nop", Kind: KindProvider, Version: "v0.4.0"}},
		},
	}
	files, err := filepath.Glob(filepath.Join(realworld, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no files in %s: the realworld folder did not resolve", realworld)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParsePackageYAML(data)
			if err != nil {
				t.Fatalf("ParsePackageYAML: %v", err)
			}
			w, ok := want[name]
			if !ok {
				t.Fatalf("new realworld file %s: add its expected values to this test (parsed: %+v)", name, got)
			}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("got  %+v\nwant %+v", got, w)
			}
			deps := got.Dependencies()
			if len(deps) != len(w.DependsOn) {
				t.Fatalf("Dependencies() = %d entries, want %d", len(deps), len(w.DependsOn))
			}
			for i, d := range deps {
				wd := format.Dependency{Name: w.DependsOn[i].Package, Ref: w.DependsOn[i].Package, Constraint: w.DependsOn[i].Version}
				if !reflect.DeepEqual(d, wd) {
					t.Errorf("Dependencies()[%d] = %+v, want %+v", i, d, wd)
				}
			}
		})
	}
	if len(files) != len(want) {
		t.Errorf("parsed %d realworld files, expected values for %d", len(files), len(want))
	}
}

func TestParsePackageYAML(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *Meta
	}{
		{
			name: "provider v1beta1 with crossplane, replaces and CRDs after",
			in: `# leading comment
---
apiVersion: meta.pkg.crossplane.io/v1beta1
kind: Provider
metadata:
  name: provider-x
  annotations:
    meta.crossplane.io/maintainer: someone
spec:
  controller:
    image: example.com/provider-x-controller:v1
  crossplane:
    version: ">=v1.14.0-0"
  replaces:
    - xpkg.upbound.io/old-org/provider-x
  dependsOn:
    - function: function-patch
      version: ">=v0.1.0"
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
---
apiVersion: apiextensions.crossplane.io/v1
kind: Composition
metadata: {name: c}
`,
			want: &Meta{
				APIVersion: "meta.pkg.crossplane.io/v1beta1", Kind: KindProvider, Name: "provider-x",
				DependsOn:  []Dependency{{Package: "function-patch", Kind: KindFunction, Version: ">=v0.1.0"}},
				Replaces:   []string{"xpkg.upbound.io/old-org/provider-x"},
				Crossplane: ">=v1.14.0-0",
			},
		},
		{
			name: "function v1 with partial references and no version",
			in: `apiVersion: meta.pkg.crossplane.io/v1
kind: Function
metadata:
  name: fn
spec:
  dependsOn:
    - package: crossplane-contrib/provider-a
      apiVersion: pkg.crossplane.io/v1
      kind: Provider
    - configuration: configuration-b:v1.0.0
`,
			want: &Meta{
				APIVersion: "meta.pkg.crossplane.io/v1", Kind: KindFunction, Name: "fn",
				DependsOn: []Dependency{
					{Package: "crossplane-contrib/provider-a", Kind: KindProvider, APIVersion: "pkg.crossplane.io/v1"},
					{Package: "configuration-b:v1.0.0", Kind: KindConfiguration},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePackageYAML([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if got.FormatKind() == "" {
				t.Errorf("FormatKind() empty for %s", got.Kind)
			}
		})
	}
}

func TestParsePackageYAMLErrors(t *testing.T) {
	const head = "apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: cfg\n"
	tests := []struct {
		name    string
		in      string
		wantErr error
		wantMsg []string
	}{
		{"empty stream", "", ErrNoMeta, []string{"no YAML document"}},
		{"only comments and separators", "# nothing\n---\n---\n", ErrNoMeta, []string{"no YAML document"}},
		{"CRD first", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: x\n---\n" + head, ErrNoMeta, []string{"CustomResourceDefinition", "apiextensions.k8s.io/v1"}},
		{"no apiVersion", "kind: Configuration\nmetadata:\n  name: x\n", ErrNoMeta, []string{`apiVersion ""`}},
		{"no name", "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\n", ErrNoMeta, []string{"metadata.name"}},
		{"unknown apiVersion", "apiVersion: meta.pkg.crossplane.io/v2\nkind: Configuration\nmetadata:\n  name: x\n", ErrUnknownAPIVersion, []string{`"meta.pkg.crossplane.io/v2"`}},
		{"unknown kind", "apiVersion: meta.pkg.crossplane.io/v1\nkind: Composition\nmetadata:\n  name: x\n", ErrUnknownKind, []string{`"Composition"`}},
		{"malformed first document", "apiVersion: [meta\n", ErrMalformed, []string{"document 1"}},
		{"malformed later document", head + "---\nkind: {\n", ErrMalformed, []string{"document 2"}},
		{"wrong shape", "apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata: [a]\n", ErrMalformed, []string{"first document"}},
		{"package and provider", head + "spec:\n  dependsOn:\n  - package: a/b\n    provider: a/b\n    version: v1\n", ErrInvalidDependency, []string{"dependsOn[0]", "package and provider", `Configuration "cfg"`}},
		{"provider and configuration", head + "spec:\n  dependsOn:\n  - provider: a/b\n  - provider: a/c\n    configuration: a/c\n", ErrInvalidDependency, []string{"dependsOn[1]", "provider and configuration"}},
		{"configuration and function", head + "spec:\n  dependsOn:\n  - configuration: a/b\n    function: a/c\n", ErrInvalidDependency, []string{"configuration and function"}},
		{"no package", head + "spec:\n  dependsOn:\n  - version: v1.0.0\n", ErrInvalidDependency, []string{"names no package"}},
		{"empty package", head + "spec:\n  dependsOn:\n  - package: \"\"\n", ErrInvalidDependency, []string{"package is empty"}},
		{"unknown dependency kind", head + "spec:\n  dependsOn:\n  - package: a/b\n    kind: Composition\n", ErrInvalidDependency, []string{`kind "Composition"`}},
		{"kind contradicts field", head + "spec:\n  dependsOn:\n  - provider: a/b\n    kind: Function\n", ErrInvalidDependency, []string{"contradicts"}},
		{"bad constraint", head + "spec:\n  dependsOn:\n  - provider: a/b\n    version: \">>1\"\n", ErrInvalidDependency, []string{`">>1"`, "a/b"}},
		{"bad digest", head + "spec:\n  dependsOn:\n  - provider: a/b\n    version: sha256:abc\n", ErrInvalidDependency, []string{"not a valid digest"}},
		{"replaces with tag", head + "spec:\n  replaces: [example.com/a/b:v1]\n", ErrInvalidReplaces, []string{"has a tag"}},
		{"replaces with digest", head + "spec:\n  replaces: [\"example.com/a/b@sha256:ecc25c121431dfc7058754427f97c034ecde26d4aafa0da16d258090e0443904\"]\n", ErrInvalidReplaces, []string{"has a digest"}},
		{"empty replaces", head + "spec:\n  replaces: [\"\"]\n", ErrInvalidReplaces, []string{"empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParsePackageYAML([]byte(tt.in))
			if err == nil {
				t.Fatalf("no error; parsed %+v", m)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("error %q does not wrap %v", err, tt.wantErr)
			}
			for _, s := range tt.wantMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}
