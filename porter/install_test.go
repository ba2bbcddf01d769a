package porter

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/lock"
)

// TestWiringSource pins how plan.json reads a wiring template: Porter's
// ParseAllDependencySources and dependencySourceWiringRegex
// (getporter/porter pkg/cnab/extensions/dependencies/v2/types.go), whose
// own tests (types_test.go TestDependencySource and TestParseAllDependencySources) give the rows.
func TestWiringSource(t *testing.T) {
	tests := []struct {
		template string
		want     []install.WiringRef
	}{
		{"${bundle.parameters.color}", []install.WiringRef{{Parameter: "color"}}},
		{"bundle.parameters.color", []install.WiringRef{{Parameter: "color"}}},
		{"${bundle.credentials.kubeconfig}", []install.WiringRef{{Credential: "kubeconfig"}}},
		{"${ bundle.dependencies.mysql.outputs.connstr }", []install.WiringRef{{Dependency: "mysql", Output: "connstr"}}},
		{"${bundle.dependencies.mysql.parameters.port}", []install.WiringRef{{Dependency: "mysql", Parameter: "port"}}},
		{"https://${bundle.dependencies.infra.outputs.ip}:${bundle.parameters.port}/app", []install.WiringRef{{Dependency: "infra", Output: "ip"}, {Parameter: "port"}}},
		{"${bundle.outputs.mine}", nil}, // Porter: "cannot pass the root bundle output to a dependency"
		{"a literal", nil},
	}
	for _, tt := range tests {
		t.Run(tt.template, func(t *testing.T) {
			got := wiringSource(tt.template)
			if got.Template != tt.template || !reflect.DeepEqual(got.Sources, tt.want) {
				t.Errorf("= %+v, want sources %+v", got, tt.want)
			}
		})
	}
}

// TestBundleWiring reads the wiring of a bundle.json's v2 dependencies as
// Porter's config adapter writes them (pkg/cnab/config-adapter/adapter.go
// generateDependenciesV2: the maps of porter.yaml's parameters,
// credentials and outputs, copied), sorted by dependency, leaving out one
// that wires nothing.
func TestBundleWiring(t *testing.T) {
	b, err := ParseBundle([]byte(`{"name":"app","version":"1.0.0","custom":{"org.getporter.dependencies@v2":{"requires":{
		"myapp":{"bundle":"getporter/myapp:v1.0.0","parameters":{"connstr":"${ bundle.dependencies.mysql.outputs.connection-string }"},"credentials":{"kubeconfig":"${ bundle.credentials.kubeconfig }"},"outputs":{"url":"${ bundle.dependencies.myapp.outputs.url }"}},
		"mysql":{"bundle":"getporter/mysql:v5.7.13"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Wiring()
	if err != nil {
		t.Fatal(err)
	}
	want := []install.Wiring{{
		Dependency:  "myapp",
		Parameters:  map[string]install.WiringSource{"connstr": {Template: "${ bundle.dependencies.mysql.outputs.connection-string }", Sources: []install.WiringRef{{Dependency: "mysql", Output: "connection-string"}}}},
		Credentials: map[string]install.WiringSource{"kubeconfig": {Template: "${ bundle.credentials.kubeconfig }", Sources: []install.WiringRef{{Credential: "kubeconfig"}}}},
		Outputs:     map[string]install.WiringSource{"url": {Template: "${ bundle.dependencies.myapp.outputs.url }", Sources: []install.WiringRef{{Dependency: "myapp", Output: "url"}}}},
	}}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("wiring:\n%s\nwant:\n%s", g, w)
	}
}

// TestMirrorBundle pins the bundle.json copy `porter install --cnab-file`
// reads: each dependency the lock resolved at MIRROR:TAG@DIGEST without a
// range, so that every strategy of getporter/porter
// pkg/cnab/extended_bundle.go takes it as written (ResolveVersion: no
// ranges and a tag; ResolveVersionv2: no version and a tag or digest),
// and each image the lock records at the bundle's mirror repository.
func TestMirrorBundle(t *testing.T) {
	const dg = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	const img = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	l := &lock.Lock{Packages: []lock.Package{
		{Source: "src.io/db", Version: "v5.7.3", Digest: dg},
		{Source: "src.io/cache", Digest: dg},
	}}
	p := &lock.Package{Source: "src.io/app", Digest: img,
		Images:       []lock.Image{{Name: "invocation", Ref: "src.io/app-inv:v1", Digest: img}},
		Dependencies: []lock.Dependency{{Name: "db", Resolved: "src.io/db@" + dg}, {Name: "cache", Resolved: "src.io/cache@" + dg}, {Name: "iface", Resolved: "src.io/iface@" + dg, Role: "interface"}}}
	mirrorOf := map[string]string{"src.io/app@" + img: "m.io/x/app", "src.io/db@" + dg: "m.io/x/db", "src.io/cache@" + dg: "m.io/x/cache", "src.io/iface@" + dg: "m.io/x/iface"}
	tests := []struct {
		name, in string
		want     []string // substrings of the copy
		absent   []string
	}{
		{"v1 with a range", `{"name":"app","version":"1.0.0","invocationImages":[{"image":"src.io/app-inv:v1","imageType":"docker"}],"custom":{"io.cnab.dependencies":{"requires":{"db":{"bundle":"src.io/db:v5.7.0","version":{"ranges":["5.7.x"]}}}}}}`,
			[]string{`"bundle": "m.io/x/db:v5.7.3@` + dg, `"image": "m.io/x/app@` + img}, []string{"ranges", "src.io/"}},
		{"v2, a digest-only pin, wiring kept", `{"name":"app","version":"1.0.0","custom":{"org.getporter.dependencies@v2":{"requires":{"cache":{"bundle":"src.io/cache@` + dg + `","version":"1.x","parameters":{"p":"${ bundle.parameters.p }"}},"other":{"bundle":"src.io/other:v1"}}}}}`,
			[]string{`"bundle": "m.io/x/cache@` + dg, `"p": "${ bundle.parameters.p }"`, `"bundle": "src.io/other:v1"`}, []string{`"version": "1.x"`}},
		{"numbers kept as written", `{"name":"app","version":"1.0.0","definitions":{"n":{"type":"integer","default":12345678901234567890}}}`,
			[]string{"12345678901234567890"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := mirrorBundle([]byte(tt.in), l, p, mirrorOf)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("copy lacks %s:\n%s", w, out)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(string(out), a) {
					t.Errorf("copy still has %s:\n%s", a, out)
				}
			}
		})
	}
}
