package porter

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRealworldPorterYAML parses the vendored porter.yaml files
// (getporter/examples and getporter/porter, testdata/realworld/README.md)
// and compares their dependencies and mixins with what Porter's config
// adapter makes of them (pkg/cnab/config-adapter/adapter.go
// generateDependencies: each `requires` entry's bundle reference and
// version range, v2's interface reference; pkg/manifest/manifest.go
// MixinDeclaration: the mixin names, a version after '@').
func TestRealworldPorterYAMLCorpus(t *testing.T) {
	tests := []struct {
		file   string
		deps   []string // NAME=REF|RANGE|INTERFACE
		mixins []string // NAME@RANGE
	}{
		{"examples-hello", nil, []string{"exec@"}},
		{"examples-aks-spring-music", nil, []string{"exec@", "helm3@", "arm@", "kubernetes@"}},
		{"examples-azure-terraform", nil, []string{"arm@", "exec@", "terraform@"}},
		{"examples-helm-multiarch", nil, []string{"exec@", "helm3@"}},
		{"examples-otel-jaeger", nil, []string{"docker@", "docker-compose@", "exec@"}},
		{"build-wordpress", []string{"mysql=localhost:5000/mysql:v0.1.4||"}, []string{"exec@", "helm3@"}},
		{"build-wordpressv2-interface-reference", []string{"mysql=localhost:5000/mysql:v0.1.4||localhost:5000/mysql-interface:v0.1.0"}, []string{"exec@", "helm3@"}},
		{"build-diamond-top", []string{"diamond-app-a=localhost:5000/diamond-app-a:v0.1.0||", "diamond-app-b=localhost:5000/diamond-app-b:v0.1.0||"}, []string{"exec@"}},
		{"build-wiring-top", []string{"infra=localhost:5000/wiring-infra:v0.1.0||", "app=localhost:5000/wiring-app:v0.1.0||"}, []string{"exec@"}},
		{"config-adapter", []string{"mysql=getporter/azure-mysql:5.7||", "ad=getporter/azure-active-directory|1.0.0-0|", "storage=getporter/azure-blob-storage|1.x - 2,2.1 - 3.x|"}, []string{"exec@"}},
		{"manifest", []string{"mysql=getporter/azure-mysql:5.7|5.7.x|"}, []string{"exec@"}},
		{"mybuns", []string{"db=localhost:5000/mydb:v0.1.0||"}, []string{"exec@", "testmixin@"}},
		{"myenv", []string{"infra=localhost:5000/myinfra:v0.1.0||", "app=localhost:5000/myapp:v1.2.3||"}, []string{"exec@"}},
	}
	dir := "../testdata/realworld/porter/yaml"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != len(tests) {
		t.Errorf("%d files, %d cases", len(ents), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, tt.file+".porter.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			m, err := ParsePorterYAML(data)
			if err != nil {
				t.Fatal(err)
			}
			var deps, mixins []string
			for _, d := range m.Dependencies {
				deps = append(deps, d.Name+"="+d.Ref+"|"+d.Constraint+"|"+d.InterfaceRef)
			}
			for _, mx := range m.Mixins {
				mixins = append(mixins, mx.Name+"@"+mx.Constraint)
			}
			if !reflect.DeepEqual(deps, tt.deps) {
				t.Errorf("dependencies = %q\nwant %q", deps, tt.deps)
			}
			if !reflect.DeepEqual(mixins, tt.mixins) {
				t.Errorf("mixins = %q\nwant %q", mixins, tt.mixins)
			}
			in, ok, err := Reader{}.ReadInput("porter.yaml", data, nil)
			if !ok || err != nil {
				t.Fatalf("ReadInput: %v %v", ok, err)
			}
			roots := len(tt.deps)
			for _, d := range tt.deps {
				if !strings.HasSuffix(d, "|") {
					roots++ // the interface's bundle
				}
			}
			if len(in.Packages) != roots {
				t.Errorf("roots = %+v, want %d", in.Packages, roots)
			}
		})
	}
}

// TestRealworldPorterYAMLPrereleases: a porter.yaml dependency whose
// version is itself a prerelease version admits prerelease tags, as
// Porter's config adapter sets AllowPrereleases
// (pkg/cnab/config-adapter/adapter.go generateDependencies); a range or
// a release version does not.
func TestRealworldPorterYAMLPrereleases(t *testing.T) {
	data, err := os.ReadFile("../testdata/realworld/porter/yaml/config-adapter.porter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in, _, err := Reader{}.ReadInput("porter.yaml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"docker.io/getporter/azure-mysql:5.7":        false, // no version
		"docker.io/getporter/azure-active-directory": true,  // 1.0.0-0
		"docker.io/getporter/azure-blob-storage":     false, // 1.x - 2,2.1 - 3.x
	}
	if len(in.Packages) != len(want) {
		t.Fatalf("roots = %+v", in.Packages)
	}
	for _, p := range in.Packages {
		if pre, ok := want[p.Ref]; !ok || p.Prereleases != pre {
			t.Errorf("%s: prereleases %v, want %v", p.Ref, p.Prereleases, pre)
		}
		for _, r := range in.Roots() {
			if r.Ref == p.Ref && r.Prereleases != p.Prereleases {
				t.Errorf("%s: the root loses prereleases", p.Ref)
			}
		}
	}
}
