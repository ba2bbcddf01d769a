package crossplane

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/errkind"
)

func TestReadRootsRealWorld(t *testing.T) {
	// Every upstream file names its registries, so the default registry
	// changes nothing.
	want := map[string][]Root{
		"configuration-dependency.crossplane.yaml": {
			{Ref: "xpkg.upbound.io/crossplane-contrib/provider-nop", Constraint: "=v0.3.1", Kind: KindProvider},
		},
		"configuration-digest.crossplane.yaml": {
			{Ref: "xpkg.upbound.io/crossplane-contrib/provider-nop@sha256:ecc25c121431dfc7058754427f97c034ecde26d4aafa0da16d258090e0443904", Kind: KindProvider},
		},
		"dependency-upgrade-downgrade.crossplane.yaml": {
			{Ref: "xpkg.upbound.io/crossplane-contrib/provider-nop", Constraint: "<=v0.4.0", Kind: KindProvider},
			{Ref: "xpkg.crossplane.io/crossplane/e2e-depends-on-provider-nop", Constraint: "v0.3.1", Kind: KindConfiguration},
		},
		"dependency-upgrade-transitive-packages-config1-v0.0.3.crossplane.yaml": {
			{Ref: "xpkg.crossplane.io/crossplane/e2e-transitive-dep1", Constraint: "v0.0.3", Kind: KindConfiguration},
		},
		// spec: {} — nothing to resolve.
		"dependency-upgrade-transitive-packages-transitive-v0.0.2.crossplane.yaml": nil,
		"image-config-rewrite.crossplane.yaml": {
			{Ref: "registry.example.com/crossplane-contrib/provider-nop", Constraint: "v0.4.0", Kind: KindProvider},
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
		for _, reg := range []string{"", DefaultRegistry, "registry.internal:5000"} {
			t.Run(name+"/"+reg, func(t *testing.T) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				w, ok := want[name]
				if !ok {
					t.Fatalf("new realworld file %s: add its expected roots to this test", name)
				}
				got, err := ReadRoots(data, reg)
				if w == nil {
					if !errors.Is(err, ErrNoDependencies) {
						t.Fatalf("ReadRoots = %v, %v; want ErrNoDependencies", got, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, w) {
					t.Errorf("ReadRoots =\n%+v\nwant\n%+v", got, w)
				}
			})
		}
	}
}

func TestReadRoots(t *testing.T) {
	const partial = `apiVersion: meta.pkg.crossplane.io/v1
kind: Configuration
metadata:
  name: platform
spec:
  dependsOn:
    - provider: crossplane-contrib/provider-nop
      version: ">=v0.2.0"
    - function: function-auto-ready:v0.2.1
    - apiVersion: pkg.crossplane.io/v1
      kind: Configuration
      package: acme/base
      version: "sha256:ecc25c121431dfc7058754427f97c034ecde26d4aafa0da16d258090e0443904"
    - provider: ghcr.io/acme/provider-x
      version: v1.0.0
`
	const dg = "@sha256:ecc25c121431dfc7058754427f97c034ecde26d4aafa0da16d258090e0443904"
	tests := []struct {
		name     string
		registry string
		want     []Root
	}{
		{
			// Crossplane v2's default: go-containerregistry's, Docker Hub.
			name: "default registry",
			want: []Root{
				{Ref: "docker.io/crossplane-contrib/provider-nop", Constraint: ">=v0.2.0", Kind: KindProvider},
				{Ref: "docker.io/library/function-auto-ready:v0.2.1", Kind: KindFunction},
				{Ref: "docker.io/acme/base" + dg, Kind: KindConfiguration},
				{Ref: "ghcr.io/acme/provider-x", Constraint: "v1.0.0", Kind: KindProvider},
			},
		},
		{
			// Crossplane v1.20's default.
			name:     "Crossplane v1 registry",
			registry: "xpkg.crossplane.io",
			want: []Root{
				{Ref: "xpkg.crossplane.io/crossplane-contrib/provider-nop", Constraint: ">=v0.2.0", Kind: KindProvider},
				{Ref: "xpkg.crossplane.io/function-auto-ready:v0.2.1", Kind: KindFunction},
				{Ref: "xpkg.crossplane.io/acme/base" + dg, Kind: KindConfiguration},
				{Ref: "ghcr.io/acme/provider-x", Constraint: "v1.0.0", Kind: KindProvider},
			},
		},
		{
			name:     "custom registry",
			registry: "registry.internal:5000",
			want: []Root{
				{Ref: "registry.internal:5000/crossplane-contrib/provider-nop", Constraint: ">=v0.2.0", Kind: KindProvider},
				{Ref: "registry.internal:5000/function-auto-ready:v0.2.1", Kind: KindFunction},
				{Ref: "registry.internal:5000/acme/base" + dg, Kind: KindConfiguration},
				{Ref: "ghcr.io/acme/provider-x", Constraint: "v1.0.0", Kind: KindProvider},
			},
		},
		{
			// Docker Hub normalises the Docker way: "library/" for a name
			// without organisation.
			name:     "docker hub",
			registry: "docker.io",
			want: []Root{
				{Ref: "docker.io/crossplane-contrib/provider-nop", Constraint: ">=v0.2.0", Kind: KindProvider},
				{Ref: "docker.io/library/function-auto-ready:v0.2.1", Kind: KindFunction},
				{Ref: "docker.io/acme/base" + dg, Kind: KindConfiguration},
				{Ref: "ghcr.io/acme/provider-x", Constraint: "v1.0.0", Kind: KindProvider},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadRoots([]byte(partial), tt.registry)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ReadRoots =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestReadRootsErrors(t *testing.T) {
	meta := func(deps string) []byte {
		return []byte("apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: c\nspec:\n  dependsOn:\n" + deps)
	}
	tests := []struct {
		name string
		data []byte
		is   error
		want string
	}{
		{"not a meta object", []byte("apiVersion: v1\nkind: ConfigMap\n"), ErrNoMeta, "must be a"},
		{"malformed", []byte("a: [\n"), ErrMalformed, "reading crossplane.yaml"},
		{"no dependencies", []byte("apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\n"), ErrNoDependencies, `Provider "p" declares no dependencies`},
		{"upper-case reference", meta("    - provider: Acme/Provider\n"), nil, "spec.dependsOn[0]"},
		{"credentials", meta("    - provider: user:pw@ghcr.io/acme/p\n"), nil, "credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadRoots(tt.data, "")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ReadRoots error %v, want one containing %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
		})
	}
}

// TestRegistriesFor pins the default registry each Crossplane release
// gives a reference without one (crossplane/crossplane
// internal/xpkg/name.go DefaultRegistry: "xpkg.upbound.io" at v1.19.0,
// "xpkg.crossplane.io" from v1.20.0, commit 939ff655e; v2.0.0 dropped it,
// commit 2ac9036a2, and internal/controller/pkg/resolver/reconciler.go
// parses with go-containerregistry's Docker Hub default).
func TestRegistriesFor(t *testing.T) {
	const (
		upbound = "xpkg.upbound.io"
		xp      = "xpkg.crossplane.io"
		hub     = "docker.io"
	)
	tests := []struct {
		constraint string
		want       []string
	}{
		{"", []string{upbound, xp, hub}},
		{"<v1.20.0", []string{upbound}},
		{">=v1.14.1-0 <v1.20", []string{upbound}},
		{"~v1.19.0", []string{upbound}},
		{"=v1.20.0", []string{xp}},
		{">=v1.20.0 <v2.0.0", []string{xp}},
		{"^1.20", []string{xp}},
		{">=v2.0.0", []string{hub}},
		{">=v2.0.0-0", []string{xp, hub}}, // v2.0.0-rc.0 still had xpkg.crossplane.io
		{"v2.1.0", []string{hub}},
		{">=v1.14.0", []string{upbound, xp, hub}},
		{">=v1.19.0 <v2.0.0", []string{upbound, xp}},
		{"<v1.12 || >=v2", []string{upbound, hub}},
		{"=v1.20.0-rc.0", []string{upbound}},
		{">v99", nil},
	}
	for _, tt := range tests {
		t.Run(tt.constraint, func(t *testing.T) {
			got, err := RegistriesFor(tt.constraint)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("RegistriesFor(%q) = %v, want %v", tt.constraint, got, tt.want)
			}
		})
	}
	if _, err := RegistriesFor("not a version"); err == nil {
		t.Error("RegistriesFor accepted a bad constraint")
	}
}

// TestReadRootsCrossplaneVersion: with no default registry configured, a
// local crossplane.yaml's spec.crossplane.version selects how a
// dependency written without a registry is qualified (RegistryEras); a
// configured default registry wins; a version range spanning eras with
// different registries is bad input naming the dependency and the
// registries, unless every dependency names its registry.
func TestReadRootsCrossplaneVersion(t *testing.T) {
	doc := func(version, dep string) []byte {
		s := "apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata:\n  name: platform\nspec:\n"
		if version != "" {
			s += "  crossplane:\n    version: \"" + version + "\"\n"
		}
		return []byte(s + "  dependsOn:\n    - provider: " + dep + "\n      version: \">=v0.1.0\"\n")
	}
	tests := []struct {
		version, dep, registry string
		want, err              string
	}{
		{"", "crossplane-contrib/provider-nop", "", "docker.io/crossplane-contrib/provider-nop", ""},
		{">=v1.14.1-0 <v1.20.0", "crossplane-contrib/provider-nop", "", "xpkg.upbound.io/crossplane-contrib/provider-nop", ""},
		{"^v1.20.0", "crossplane-contrib/provider-nop", "", "xpkg.crossplane.io/crossplane-contrib/provider-nop", ""},
		{">=v2.0.0", "crossplane-contrib/provider-nop", "", "docker.io/crossplane-contrib/provider-nop", ""},
		{">=v2.0.0", "provider-nop", "", "docker.io/library/provider-nop", ""},
		{"<v1.20", "provider-nop", "", "xpkg.upbound.io/provider-nop", ""},
		// A configured registry wins over the version.
		{">=v1.14.0 <v1.20.0", "crossplane-contrib/provider-nop", "registry.internal:5000", "registry.internal:5000/crossplane-contrib/provider-nop", ""},
		{">=v1.14.0", "crossplane-contrib/provider-nop", "xpkg.crossplane.io", "xpkg.crossplane.io/crossplane-contrib/provider-nop", ""},
		// Fully qualified: the version range does not matter.
		{">=v1.14.0", "xpkg.upbound.io/crossplane-contrib/provider-nop", "", "xpkg.upbound.io/crossplane-contrib/provider-nop", ""},
		// Ambiguous.
		{">=v1.14.0", "crossplane-contrib/provider-nop", "", "", `"crossplane-contrib/provider-nop" names no registry`},
		{">=v1.19.0 <v2", "provider-nop", "", "", "xpkg.upbound.io before v1.20.0, xpkg.crossplane.io from v1.20.0 to v2.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.version+"/"+tt.dep+"/"+tt.registry, func(t *testing.T) {
			roots, err := ReadRoots(doc(tt.version, tt.dep), tt.registry)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, errkind.BadInput) {
					t.Fatalf("ReadRoots = %v, %v; want bad input containing %q", roots, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(roots) != 1 || roots[0].Ref != tt.want {
				t.Errorf("ReadRoots = %+v, want %s", roots, tt.want)
			}
		})
	}
}
