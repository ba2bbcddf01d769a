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
		{
			name: "PEP003 short form, sharing and interfaces",
			yaml: `
name: app
version: 1.0.0
dependencies:
  requires:
    - name: dns
      bundle: example.com/dns-bundle:v1.2.3
    - name: otel
      bundle:
        reference: getporter/otel:v1.2.3
        version: 1.x
      sharing:
        mode: group
        group:
          name: myapp
    - name: keyvault
      bundle:
        reference: getporter/keyvault:v1.2.3
      sharing:
        mode: true
        group:
          name: vault
    - name: redis
      bundle: {reference: getporter/redis:v1.0.2}
      sharing:
        mode: none
    - name: mysql
      bundle:
        reference: getporter/mysql:v5.7.13
        interface:
          reference: getporter/mysql-interface:v1
    - name: sqlserver
      bundle:
        interface:
          document:
            outputs:
              - name: dbCon
                $id: azure-sql-server-connection-string
`,
			want: &Manifest{
				Name: "app", Version: "1.0.0",
				Dependencies: []format.Dependency{
					{Name: "dns", Ref: "example.com/dns-bundle:v1.2.3"},
					{Name: "otel", Ref: "getporter/otel:v1.2.3", Constraint: "1.x", SharingGroup: "myapp"},
					{Name: "keyvault", Ref: "getporter/keyvault:v1.2.3", SharingGroup: "vault"},
					{Name: "redis", Ref: "getporter/redis:v1.0.2"},
					{Name: "mysql", Ref: "getporter/mysql:v5.7.13", InterfaceRef: "getporter/mysql-interface:v1"},
					{Name: "sqlserver", Interface: true, InterfaceDocument: []byte(`{"outputs":[{"$id":"azure-sql-server-connection-string","name":"dbCon"}]}`)},
				},
			},
		},
		{
			// PEP003's own examples (getporter/proposals
			// pep/003-advanced-dependencies.md, "Use Case Solutions"):
			// `interface: {outputs: [...]}` without `document:` is the same
			// interface as with it.
			name: "PEP003 interface without document",
			yaml: `
name: app
dependencies:
  requires:
    - name: sqlserver
      bundle:
        reference: azure/sqlserver:v1.2.68
        interface:
          outputs:
            - name: dbCon
              $id: "azure-sql-server-connection-string"
    - name: mysql
      bundle:
        interface:
          outputs:
            - name: dbCon
              $id: "mysql-5.7-connection-string"
    - name: cluster
      bundle:
        interface:
          id: https://getporter.org/interfaces/#kubernetes
          credentials:
            - $id: "https://getporter.org/interfaces#kubernetes.config.cluster-admin"
          parameters:
            - {name: ns, type: string}
`,
			want: &Manifest{
				Name: "app",
				Dependencies: []format.Dependency{
					{Name: "sqlserver", Ref: "azure/sqlserver:v1.2.68", InterfaceDocument: []byte(`{"outputs":[{"$id":"azure-sql-server-connection-string","name":"dbCon"}]}`)},
					{Name: "mysql", Interface: true, InterfaceDocument: []byte(`{"outputs":[{"$id":"mysql-5.7-connection-string","name":"dbCon"}]}`)},
					{Name: "cluster", Interface: true, InterfaceDocument: []byte(`{"credentials":[{"$id":"https://getporter.org/interfaces#kubernetes.config.cluster-admin"}],"parameters":[{"name":"ns","type":"string"}]}`)},
				},
			},
		},
		{
			name: "Mixin Versioning proposal entries",
			yaml: `
name: app
mixins:
  - arm:
      mixin:
        version: v1.2.3
        source: https://example.com/feed.xml
      clientVersion: v1.2.3
  - terraform
  - helm3@1.x:
      mixin:
        version: 1.x
      repositories:
        bitnami:
          url: https://charts.bitnami.com/bitnami
  - az:
  - kubernetes:
      mixin: {source: https://example.com/k8s/}
`,
			want: &Manifest{Name: "app", Mixins: []MixinRef{
				{Name: "arm", Constraint: "v1.2.3", Feed: "https://example.com/feed.xml", ClientVersion: "v1.2.3"},
				{Name: "terraform"},
				{Name: "helm3", Constraint: "1.x"},
				{Name: "az"},
				{Name: "kubernetes", Feed: "https://example.com/k8s/"},
			}},
		},
		{name: "malformed", yaml: "name: [", wantErr: "porter.yaml: yaml:"},
		{name: "no name", yaml: "version: 1.0.0", wantErr: "porter.yaml: no name"},
		{name: "dependency without name", yaml: "name: a\ndependencies:\n  requires:\n    - bundle: {reference: x}\n", wantErr: "requires[0]: no name"},
		{name: "duplicate dependency", yaml: "name: a\ndependencies:\n  requires:\n    - {name: x, bundle: {reference: x}}\n    - {name: x, bundle: {reference: y}}\n", wantErr: `dependency "x" is declared twice`},
		{name: "dependency without reference", yaml: "name: a\ndependencies:\n  requires:\n    - name: x\n", wantErr: `dependency "x": no bundle.reference and no bundle.interface`},
		{name: "dependencies scalar", yaml: "name: a\ndependencies: yes\n", wantErr: "dependencies: want a mapping"},
		{name: "two mixins in one entry", yaml: "name: a\nmixins:\n  - {exec: {}, helm3: {}}\n", wantErr: "want one mixin per entry, got exec, helm3"},
		{name: "mixin list", yaml: "name: a\nmixins:\n  - [exec]\n", wantErr: "mixins[0] (line 3)"},
		{name: "mixin versions disagree", yaml: "name: a\nmixins:\n  - exec@1.x:\n      mixin: {version: 2.x}\n", wantErr: `mixins[0] (line 3): mixin "exec": mixin.version "2.x" disagrees with the version "1.x" after '@'`},
		{name: "mixin section unknown key", yaml: "name: a\nmixins:\n  - exec:\n      mixin: {version: 1.x, digest: abc}\n", wantErr: `mixin "exec": line 4: mixin.digest: unknown key`},
		{name: "mixin section not a mapping", yaml: "name: a\nmixins:\n  - exec:\n      mixin: v1\n", wantErr: `mixin "exec": line 4: mixin: want a mapping`},
		{name: "mixin version not a string", yaml: "name: a\nmixins:\n  - exec:\n      mixin: {version: [1]}\n", wantErr: `mixin.version: want a string`},
		{name: "mixin version invalid", yaml: "name: a\nmixins:\n  - exec:\n      mixin: {version: one}\n", wantErr: `mixin "exec": mixin.version: version "one"`},
		{name: "mixin version after @ invalid", yaml: "name: a\nmixins:\n  - exec@latest\n", wantErr: `mixins[0] (line 3): mixin "exec": version "latest"`},
		{name: "mixin empty version after @", yaml: "name: a\nmixins:\n  - exec@\n", wantErr: `mixin "exec": empty version`},
		{name: "mixin configuration a string", yaml: "name: a\nmixins:\n  - exec: fast\n", wantErr: `mixins[0] (line 3): mixin "exec": line 3: want its configuration as a mapping`},
		{name: "mixin clientVersion a list", yaml: "name: a\nmixins:\n  - helm3:\n      clientVersion: [1]\n", wantErr: `mixin "helm3": line 4: clientVersion: want a version`},
		{name: "empty mixin entry", yaml: "name: a\nmixins:\n  -\n", wantErr: "mixins[0] (line 3): empty mixin entry"},
		{name: "empty mixin mapping", yaml: "name: a\nmixins:\n  - {}\n", wantErr: "mixins[0] (line 3): empty mixin entry"},
		{name: "bundle a list", yaml: "name: a\ndependencies:\n  requires:\n    - name: x\n      bundle: [r.io/x]\n", wantErr: `dependency "x": line 5: bundle: want a reference or a mapping`},
		{name: "interface document and short form", yaml: "name: a\ndependencies:\n  requires:\n    - name: x\n      bundle:\n        interface:\n          outputs: [{name: p}]\n          document: {outputs: [{name: o}]}\n", wantErr: `dependency "x": bundle.interface: declares parameters, credentials or outputs both under document and beside it`},
		{name: "interface short form and reference", yaml: "name: a\ndependencies:\n  requires:\n    - name: x\n      bundle:\n        interface:\n          reference: r.io/i:v1\n          outputs: [{name: o}]\n", wantErr: `dependency "x": bundle.interface declares both a reference and a document`},
		{name: "interface short form malformed", yaml: "name: a\ndependencies:\n  requires:\n    - name: x\n      bundle:\n        interface:\n          outputs: 3\n", wantErr: `dependency "x": bundle.interface.document: interface document: outputs: want an object keyed by name or a list`},
		{name: "interface reference and document", yaml: "name: a\ndependencies:\n  requires:\n    - name: x\n      bundle:\n        interface:\n          reference: r.io/i:v1\n          document: {outputs: [{name: o}]}\n", wantErr: `dependency "x": bundle.interface declares both a reference and a document`},
		{name: "sharing mode without group", yaml: "name: a\ndependencies:\n  requires:\n    - name: x\n      bundle: r.io/x:v1\n      sharing: {mode: true}\n", wantErr: `dependency "x": sharing: mode is on but group.name is empty`},
		{name: "sharing mode unknown", yaml: "name: a\ndependencies:\n  requires:\n    - name: x\n      bundle: r.io/x:v1\n      sharing: {mode: always}\n", wantErr: `sharing.mode "always"`},
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
