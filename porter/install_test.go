package porter

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ferryhq/ferry/install"
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
