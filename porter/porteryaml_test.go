package porter

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/format"
)

func TestParsePorterYAML(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    *Manifest
		ref     string
		wantErr string
	}{
		{
			name: "requires with versions and all mixin forms",
			yaml: `
schemaVersion: 1.0.1
name: myapp
version: 1.2.0
registry: ghcr.io/acme
mixins:
  - exec
  - helm3@1.x
  - az:
      clientVersion: 2.0.0
  - kubernetes@v1.0.0:
      clientVersion: 1.30
dependencies:
  requires:
    - name: db
      bundle:
        reference: ghcr.io/acme/mysql:v5.7.0
        version: 5.7.x
    - name: cache
      bundle:
        reference: redis:v1
`,
			want: &Manifest{
				Name: "myapp", Version: "1.2.0", Registry: "ghcr.io/acme",
				Dependencies: []format.Dependency{
					{Name: "db", Ref: "ghcr.io/acme/mysql:v5.7.0", Constraint: "5.7.x"},
					{Name: "cache", Ref: "redis:v1"},
				},
				Mixins: []MixinRef{{Name: "exec"}, {Name: "helm3", Constraint: "1.x"}, {Name: "az", ClientVersion: "2.0.0"}, {Name: "kubernetes", Constraint: "v1.0.0", ClientVersion: "1.30"}},
			},
			ref: "ghcr.io/acme/myapp:v1.2.0",
		},
		{
			name: "v2 interface and wiring, explicit reference",
			yaml: `
name: myenv
version: v0.1.0
reference: localhost:5000/myenv:v0.1.0
dependencies:
  requires:
    - name: infra
      bundle:
        interface:
          id: porter.sh/interfaces/infra
    - name: app
      bundle:
        reference: localhost:5000/myapp:v1.2.3
      credentials:
        db-connstr: ${bundle.dependencies.infra.outputs.mysql-connstr}
`,
			want: &Manifest{
				Name: "myenv", Version: "v0.1.0", Reference: "localhost:5000/myenv:v0.1.0",
				Dependencies: []format.Dependency{
					{Name: "infra", Interface: true},
					{Name: "app", Ref: "localhost:5000/myapp:v1.2.3", After: []string{"infra"}},
				},
			},
			ref: "localhost:5000/myenv:v0.1.0",
		},
		{
			name: "oldest dependency list",
			yaml: `
name: wordpress
version: 0.1.4
dependencies:
  - name: mysql
    reference: localhost:5000/mysql:v0.1.4
`,
			want: &Manifest{Name: "wordpress", Version: "0.1.4", Dependencies: []format.Dependency{{Name: "mysql", Ref: "localhost:5000/mysql:v0.1.4"}}},
		},
		{name: "malformed", yaml: "name: [", wantErr: "porter.yaml: yaml:"},
		{name: "no name", yaml: "version: 1.0.0", wantErr: "porter.yaml: no name"},
		{name: "dependency without name", yaml: "name: a\ndependencies:\n  requires:\n    - bundle: {reference: x}\n", wantErr: "requires[0]: no name"},
		{name: "duplicate dependency", yaml: "name: a\ndependencies:\n  requires:\n    - {name: x, bundle: {reference: x}}\n    - {name: x, bundle: {reference: y}}\n", wantErr: `dependency "x" is declared twice`},
		{name: "dependency without reference", yaml: "name: a\ndependencies:\n  requires:\n    - name: x\n", wantErr: `dependency "x": no bundle.reference and no bundle.interface`},
		{name: "dependencies scalar", yaml: "name: a\ndependencies: yes\n", wantErr: "dependencies: want a mapping"},
		{name: "two mixins in one entry", yaml: "name: a\nmixins:\n  - {exec: {}, helm3: {}}\n", wantErr: "want one mixin per entry, got exec, helm3"},
		{name: "mixin list", yaml: "name: a\nmixins:\n  - [exec]\n", wantErr: "mixins[0] (line 3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePorterYAML([]byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, tt.want)
			}
			if got.Ref() != tt.ref {
				t.Errorf("Ref() = %q, want %q", got.Ref(), tt.ref)
			}
		})
	}
}

// TestRealworldPorterYAML parses the porter.yaml files embedded (base64) in
// the realworld bundles' custom."sh.porter".manifest and checks their
// dependencies agree with bundle.json's.
func TestRealworldPorterYAML(t *testing.T) {
	tests := []struct {
		file   string
		deps   []format.Dependency
		mixins []MixinRef
	}{
		{"mybuns-depsv1.bundle.json", []format.Dependency{{Name: "db", Ref: "localhost:5000/mydb:v0.1.0"}}, []MixinRef{{Name: "exec"}, {Name: "testmixin", ClientVersion: "1.2.3"}}},
		{"mybuns-depsv2.bundle.json", []format.Dependency{{Name: "db", Ref: "localhost:5000/mydb:v0.1.0"}}, []MixinRef{{Name: "exec"}, {Name: "testmixin", ClientVersion: "1.2.3"}}},
		{"myenv-depsv2.bundle.json", []format.Dependency{
			{Name: "infra", Ref: "localhost:5000/myinfra:v0.1.0"},
			{Name: "app", Ref: "localhost:5000/myapp:v1.2.3", After: []string{"infra"}},
		}, []MixinRef{{Name: "exec"}}},
		{"wordpress.bundle.json", []format.Dependency{{Name: "mysql", Ref: "localhost:5000/mysql:v0.1.4"}}, []MixinRef{{Name: "exec"}, {Name: "helm3"}}},
		{"mysql.bundle.json", nil, []MixinRef{{Name: "exec"}, {Name: "helm3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b := readRealworld(t, tt.file)
			var pc struct {
				Manifest string `json:"manifest"`
			}
			if err := json.Unmarshal(b.Custom[CustomPorter], &pc); err != nil {
				t.Fatal(err)
			}
			data, err := base64.StdEncoding.DecodeString(pc.Manifest)
			if err != nil {
				t.Fatal(err)
			}
			m, err := ParsePorterYAML(data)
			if err != nil {
				t.Fatal(err)
			}
			if m.Name != b.Name {
				t.Errorf("name = %q, bundle.json says %q", m.Name, b.Name)
			}
			if !reflect.DeepEqual(m.Dependencies, tt.deps) {
				t.Errorf("deps =\n%+v\nwant\n%+v", m.Dependencies, tt.deps)
			}
			if !reflect.DeepEqual(m.Mixins, tt.mixins) {
				t.Errorf("mixins = %+v, want %+v", m.Mixins, tt.mixins)
			}
		})
	}
}
