package porter

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/format"
)

const realworld = "../testdata/realworld/porter"

func readRealworld(t *testing.T, name string) *Bundle {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(realworld, name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseBundle(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

func TestRealworldBundlesParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(realworld, "*.bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 6 {
		t.Fatalf("found %d realworld bundles in %s, want at least 6", len(files), realworld)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b := readRealworld(t, filepath.Base(f))
			if _, err := b.Dependencies(); err != nil {
				t.Errorf("Dependencies: %v", err)
			}
			b.Mixins()
		})
	}
}

func TestRealworldBundles(t *testing.T) {
	tests := []struct {
		file     string
		name     string
		version  string
		deps     []format.Dependency
		mixins   []format.Mixin
		warnings int
		images   map[string]string
	}{
		{
			file: "mybuns-depsv1.bundle.json", name: "mybuns", version: "0.1.2",
			deps:   []format.Dependency{{Name: "db", Ref: "localhost:5000/mydb:v0.1.0"}},
			mixins: []format.Mixin{{Name: "exec", Version: "v1.2.3"}},
			images: map[string]string{"whalesayd": "carolynvs/whalesayd:latest"},
		},
		{
			file: "mybuns-depsv2.bundle.json", name: "mybuns", version: "0.1.2",
			deps:   []format.Dependency{{Name: "db", Ref: "localhost:5000/mydb:v0.1.0"}},
			mixins: []format.Mixin{{Name: "exec", Version: "v1.2.3"}},
			images: map[string]string{"whalesayd": "carolynvs/whalesayd:latest"},
		},
		{
			file: "myenv-depsv2.bundle.json", name: "myenv", version: "0.1.0",
			deps: []format.Dependency{
				{Name: "app", Ref: "localhost:5000/myapp:v1.2.3", After: []string{"infra"}},
				{Name: "infra", Ref: "localhost:5000/myinfra:v0.1.0"},
			},
			mixins: []format.Mixin{{Name: "exec", Version: "v1.2.3"}},
		},
		{
			file: "explain-dependencies.bundle.json", name: "porter-hello", version: "0.1.0",
			deps: []format.Dependency{
				{Name: "nginx", Ref: "localhost:5000/nginx:1.19"},
				{Name: "mysql", Ref: "getporter/mysql:v0.1.3"},
			},
		},
		{
			file: "wordpress.bundle.json", name: "wordpress", version: "0.1.4",
			deps:     []format.Dependency{{Name: "mysql", Ref: "localhost:5000/mysql:v0.1.4"}},
			mixins:   []format.Mixin{{Name: "exec"}, {Name: "helm3"}},
			warnings: 2,
		},
		{
			file: "mysql.bundle.json", name: "mysql", version: "0.1.4",
			mixins:   []format.Mixin{{Name: "exec"}, {Name: "helm3"}},
			warnings: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b := readRealworld(t, tt.file)
			if b.Name != tt.name || b.Version != tt.version {
				t.Errorf("name, version = %q, %q; want %q, %q", b.Name, b.Version, tt.name, tt.version)
			}
			deps, err := b.Dependencies()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(deps, tt.deps) && !(len(deps) == 0 && len(tt.deps) == 0) {
				t.Errorf("deps =\n%+v\nwant\n%+v", deps, tt.deps)
			}
			mixins, warnings := b.Mixins()
			if !reflect.DeepEqual(mixins, tt.mixins) {
				t.Errorf("mixins = %+v, want %+v", mixins, tt.mixins)
			}
			if len(warnings) != tt.warnings {
				t.Errorf("warnings = %q, want %d", warnings, tt.warnings)
			}
			for _, w := range warnings {
				if !strings.Contains(w, "latest") {
					t.Errorf("warning %q does not say the latest version is used", w)
				}
			}
			for name, ref := range tt.images {
				if got := b.Images[name].Image; got != ref {
					t.Errorf("images[%s] = %q, want %q", name, got, ref)
				}
			}
			if len(b.InvocationImages) != 1 || b.InvocationImages[0].Image == "" {
				t.Errorf("invocation images = %+v", b.InvocationImages)
			}
		})
	}
}

func TestParseBundleErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"malformed", `{"name":`, "bundle.json: unexpected end of JSON input"},
		{"not an object", `[]`, "bundle.json: json: cannot unmarshal array"},
		{"no name", `{"version":"1.0.0"}`, "bundle.json: no name"},
		{"no version", `{"name":"a"}`, `bundle.json: bundle "a": no version`},
		{"wrong type", `{"name":"a","version":1}`, "bundle.json: json: cannot unmarshal number"},
		{"invocation without image", `{"name":"a","version":"1.0.0","invocationImages":[{"imageType":"docker"}]}`, "invocationImages[0] has no image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseBundle([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// bundleWith returns a bundle.json with custom set to the given JSON.
func bundleWith(custom string) []byte {
	return []byte(`{"schemaVersion":"v1.2.0","name":"b","version":"1.0.0","invocationImages":[{"image":"r.io/b:v1"}],"custom":` + custom + `}`)
}

func TestDependencies(t *testing.T) {
	tests := []struct {
		name    string
		custom  string
		want    []format.Dependency
		wantErr string
	}{
		{
			name:   "none",
			custom: `{"sh.porter":{}}`,
		},
		{
			name:   "v1 null",
			custom: `{"io.cnab.dependencies":null}`,
		},
		{
			name:   "v1 ranges ORed, prereleases",
			custom: `{"io.cnab.dependencies":{"requires":{"db":{"bundle":"r.io/db:v1","version":{"ranges":["1.x","^2.1"],"prereleases":true}}}}}`,
			want:   []format.Dependency{{Name: "db", Ref: "r.io/db:v1", Constraint: "1.x || ^2.1", Prereleases: true}},
		},
		{
			name:   "v1 sequence first, rest sorted",
			custom: `{"io.cnab.dependencies":{"sequence":["z","m"],"requires":{"a":{"bundle":"a"},"m":{"bundle":"m"},"b":{"bundle":"b"},"z":{"bundle":"r.io/z"}}}}`,
			want: []format.Dependency{
				{Name: "z", Ref: "r.io/z"}, {Name: "m", Ref: "m"}, {Name: "a", Ref: "a"}, {Name: "b", Ref: "b"},
			},
		},
		{
			name:   "v1 version without ranges",
			custom: `{"io.cnab.dependencies":{"requires":{"db":{"bundle":"org/db:v1","version":{"prereleases":false}}}}}`,
			want:   []format.Dependency{{Name: "db", Ref: "org/db:v1"}},
		},
		{
			name:    "v1 sequence names unknown",
			custom:  `{"io.cnab.dependencies":{"sequence":["x"],"requires":{}}}`,
			wantErr: `sequence names "x"`,
		},
		{
			name:    "v1 no bundle",
			custom:  `{"io.cnab.dependencies":{"requires":{"db":{"name":"db"}}}}`,
			wantErr: `dependency "db" has no bundle reference`,
		},
		{
			name:    "v1 malformed",
			custom:  `{"io.cnab.dependencies":{"requires":["db"]}}`,
			wantErr: "custom.io.cnab.dependencies: json: cannot unmarshal array",
		},
		{
			name:   "v2 sharing mode bool",
			custom: `{"org.getporter.dependencies@v2":{"requires":{"infra":{"bundle":"r.io/infra:v0.1.0","version":"1.x","sharing":{"mode":true,"group":{"name":"g"}}}}}}`,
			want:   []format.Dependency{{Name: "infra", Ref: "r.io/infra:v0.1.0", Constraint: "1.x", SharingGroup: "g"}},
		},
		{
			name:   "v2 sharing mode string",
			custom: `{"org.getporter.dependencies@v2":{"requires":{"infra":{"bundle":"r.io/infra","sharing":{"mode":"group","group":{"name":"g"}}},"x":{"bundle":"x","sharing":{"mode":"none"}}}}}`,
			want:   []format.Dependency{{Name: "infra", Ref: "r.io/infra", SharingGroup: "g"}, {Name: "x", Ref: "x"}},
		},
		{
			name:    "v2 sharing mode unknown string",
			custom:  `{"org.getporter.dependencies@v2":{"requires":{"infra":{"bundle":"r.io/infra","sharing":{"mode":"always"}}}}}`,
			wantErr: `sharing.mode "always"`,
		},
		{
			name:    "v2 sharing mode number",
			custom:  `{"org.getporter.dependencies@v2":{"requires":{"infra":{"bundle":"r.io/infra","sharing":{"mode":3}}}}}`,
			wantErr: `sharing.mode 3`,
		},
		{
			name:   "v2 interface only",
			custom: `{"org.getporter.dependencies@v2":{"requires":{"mysql":{"interface":{"id":"porter.sh/interfaces/mysql"}}}}}`,
			want:   []format.Dependency{{Name: "mysql", Interface: true}},
		},
		{
			name:   "v2 bundle and interface",
			custom: `{"org.getporter.dependencies@v2":{"requires":{"mysql":{"bundle":"r.io/mysql","version":"5.7.x","interface":{"id":"x"}}}}}`,
			want:   []format.Dependency{{Name: "mysql", Ref: "r.io/mysql", Constraint: "5.7.x"}},
		},
		{
			name:    "v2 sharing mode true without a group",
			custom:  `{"org.getporter.dependencies@v2":{"requires":{"infra":{"bundle":"r.io/infra","sharing":{"mode":true}}}}}`,
			wantErr: `dependency "infra": sharing: mode is on but group.name is empty`,
		},
		{
			name:    "v2 sharing group without mode",
			custom:  `{"org.getporter.dependencies@v2":{"requires":{"infra":{"bundle":"r.io/infra","sharing":{"group":{"name":"g"}}}}}}`,
			wantErr: `sharing: group.name is "g" but mode is not on`,
		},
		{
			name:    "v2 sharing mode group without a name",
			custom:  `{"org.getporter.dependencies@v2":{"requires":{"infra":{"bundle":"r.io/infra","sharing":{"mode":"group","group":{}}}}}}`,
			wantErr: "mode is on but group.name is empty",
		},
		{
			// Porter writes an empty group whatever the mode.
			name:   "v2 sharing off, empty group",
			custom: `{"org.getporter.dependencies@v2":{"requires":{"infra":{"bundle":"r.io/infra","sharing":{"mode":false,"group":{}}},"x":{"bundle":"x","sharing":{"mode":"none","group":{"name":"ignored"}}}}}}`,
			want:   []format.Dependency{{Name: "infra", Ref: "r.io/infra"}, {Name: "x", Ref: "x"}},
		},
		{
			name:   "v2 interface reference kept as written",
			custom: `{"org.getporter.dependencies@v2":{"requires":{"mysql":{"bundle":"r.io/mysql:v1","interface":{"id":"mysql","reference":"getporter/mysql-iface:v1","document":{}}}}}}`,
			want:   []format.Dependency{{Name: "mysql", Ref: "r.io/mysql:v1", InterfaceRef: "getporter/mysql-iface:v1"}},
		},
		{
			name:   "v2 interface reference only",
			custom: `{"org.getporter.dependencies@v2":{"requires":{"mysql":{"interface":{"reference":"getporter/mysql-iface:v1"}}}}}`,
			want:   []format.Dependency{{Name: "mysql", Interface: true, InterfaceRef: "getporter/mysql-iface:v1"}},
		},
		{
			name:   "v2 bundle and interface document",
			custom: `{"org.getporter.dependencies@v2":{"requires":{"mysql":{"bundle":"r.io/mysql:v1","interface":{"document":{"outputs":[{"name":"connstr","type":"string"}]}}}}}}`,
			want:   []format.Dependency{{Name: "mysql", Ref: "r.io/mysql:v1", InterfaceDocument: []byte(`{"outputs":[{"name":"connstr","type":"string"}]}`)}},
		},
		{
			// PEP003's short form, `interface: {outputs: [...]}`
			// (getporter/proposals pep/003-advanced-dependencies.md, "Use
			// Case Solutions"), is the same document.
			name:   "v2 interface without document",
			custom: `{"org.getporter.dependencies@v2":{"requires":{"mysql":{"bundle":"r.io/mysql:v1","interface":{"outputs":[{"name":"connstr","type":"string"}]}}}}}`,
			want:   []format.Dependency{{Name: "mysql", Ref: "r.io/mysql:v1", InterfaceDocument: []byte(`{"outputs":[{"name":"connstr","type":"string"}]}`)}},
		},
		{
			name:    "v2 interface both with and without document",
			custom:  `{"org.getporter.dependencies@v2":{"requires":{"mysql":{"bundle":"r.io/mysql:v1","interface":{"outputs":[{"name":"a"}],"document":{"outputs":[{"name":"b"}]}}}}}}`,
			wantErr: `interface: declares parameters, credentials or outputs both under document and beside it`,
		},
		{
			name:   "v2 empty interface document",
			custom: `{"org.getporter.dependencies@v2":{"requires":{"mysql":{"interface":{"id":"mysql","document":{"outputs":{},"parameters":null}}}}}}`,
			want:   []format.Dependency{{Name: "mysql", Interface: true}},
		},
		{
			name:    "v2 interface reference and document",
			custom:  `{"org.getporter.dependencies@v2":{"requires":{"mysql":{"interface":{"reference":"r.io/i:v1","document":{"outputs":{"o":{}}}}}}}}`,
			wantErr: `dependency "mysql": interface declares both a reference and a document`,
		},
		{
			name:    "v2 interface document malformed",
			custom:  `{"org.getporter.dependencies@v2":{"requires":{"mysql":{"interface":{"document":{"outputs":"connstr"}}}}}}`,
			wantErr: `dependency "mysql": interface.document: interface document: outputs: want an object`,
		},
		{
			name:    "v2 interface not an object",
			custom:  `{"org.getporter.dependencies@v2":{"requires":{"mysql":{"interface":"mysql"}}}}`,
			wantErr: "custom.org.getporter.dependencies@v2: json: cannot unmarshal string",
		},
		{
			name:    "v2 neither bundle nor interface",
			custom:  `{"org.getporter.dependencies@v2":{"requires":{"mysql":{"version":"1.x"}}}}`,
			wantErr: `dependency "mysql" has neither a bundle reference nor an interface`,
		},
		{
			name: "v2 wiring",
			custom: `{"org.getporter.dependencies@v2":{"requires":{
				"app":{"bundle":"app","parameters":{"a":"${ bundle.dependencies.db.outputs.host }","b":"${bundle.dependencies.cache.outputs.url}/x","self":"${bundle.dependencies.app.outputs.y}","unknown":"${bundle.dependencies.nope.outputs.z}"},"credentials":{"c":"${bundle.dependencies.db.outputs.pw}"}},
				"cache":{"bundle":"cache","outputs":{"o":"${bundle.dependencies.db.outputs.ip}"}},
				"db":{"bundle":"db","parameters":{"p":"${bundle.parameters.x}","n":"${outputs.port}"}}}}}`,
			want: []format.Dependency{
				{Name: "app", Ref: "app", After: []string{"cache", "db"}},
				{Name: "cache", Ref: "cache", After: []string{"db"}},
				{Name: "db", Ref: "db"},
			},
		},
		{
			name:    "v2 malformed",
			custom:  `{"org.getporter.dependencies@v2":{"requires":{"a":{"bundle":1}}}}`,
			wantErr: "custom.org.getporter.dependencies@v2: json: cannot unmarshal number",
		},
		{
			name:   "v1 and v2 together",
			custom: `{"io.cnab.dependencies":{"requires":{"a":{"bundle":"a"}}},"org.getporter.dependencies@v2":{"requires":{"b":{"bundle":"b"}}}}`,
			want:   []format.Dependency{{Name: "a", Ref: "a"}, {Name: "b", Ref: "b"}},
		},
		{
			name:    "v1 and v2 same name",
			custom:  `{"io.cnab.dependencies":{"requires":{"a":{"bundle":"a"}}},"org.getporter.dependencies@v2":{"requires":{"a":{"bundle":"b"}}}}`,
			wantErr: `dependency "a" is declared in both`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ParseBundle(bundleWith(tt.custom))
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.Dependencies()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("deps =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestMixins(t *testing.T) {
	tests := []struct {
		name     string
		custom   string
		want     []format.Mixin
		warnings []string
	}{
		{"none", `{}`, nil, nil},
		{"no mixins", `{"sh.porter":{"version":"v1.0.0"}}`, nil, nil},
		{"versioned", `{"sh.porter":{"mixins":{"helm3":{"version":"v1.0.1"},"exec":{"version":"v1.2.3"}}}}`,
			[]format.Mixin{{Name: "exec", Version: "v1.2.3"}, {Name: "helm3", Version: "v1.0.1"}}, nil},
		{"old style", `{"sh.porter":{"mixins":{"exec":{"version":"v1.2.3"},"helm3":{}}}}`,
			[]format.Mixin{{Name: "exec", Version: "v1.2.3"}, {Name: "helm3"}}, []string{`mixin "helm3"`}},
		{"null entry", `{"sh.porter":{"mixins":{"az":null}}}`, []format.Mixin{{Name: "az"}}, []string{`mixin "az"`}},
		{"unreadable", `{"sh.porter":{"mixins":["exec"]}}`, nil, []string{"mixins unknown"}},
		{"url and binaries", `{"sh.porter":{"mixins":{"exec":{"version":"v1.2.3","url":"https://cdn.porter.sh/mixins/exec/","binaries":{
			"exec-linux-amd64":{"digest":"sha256:` + strings.Repeat("a", 64) + `"},
			"exec-darwin-arm64":{"digest":"` + strings.Repeat("B", 64) + `"},
			"exec-windows-amd64.exe":"sha256:` + strings.Repeat("c", 64) + `"}}}}}`,
			[]format.Mixin{{Name: "exec", Version: "v1.2.3", URL: "https://cdn.porter.sh/mixins/exec/", Binaries: map[string]string{
				"exec-linux-amd64":       "sha256:" + strings.Repeat("a", 64),
				"exec-darwin-arm64":      "sha256:" + strings.Repeat("b", 64),
				"exec-windows-amd64.exe": "sha256:" + strings.Repeat("c", 64),
			}}}, nil},
		{"source when no url", `{"sh.porter":{"mixins":{"helm3":{"version":"v1.0.0","source":"https://example.com/atom.xml"}}}}`,
			[]format.Mixin{{Name: "helm3", Version: "v1.0.0", URL: "https://example.com/atom.xml"}}, nil},
		{"bad digests", `{"sh.porter":{"mixins":{"exec":{"version":"v1.2.3","binaries":{"exec-linux-amd64":{"digest":"abc123"},"exec-linux-arm64":{"digest":"sha512:` + strings.Repeat("d", 128) + `"},"exec-darwin-amd64":["x"]}}}}}`,
			[]format.Mixin{{Name: "exec", Version: "v1.2.3"}},
			[]string{`binary exec-darwin-amd64: want {"digest"`, `binary exec-linux-amd64: digest "abc123"`, `binary exec-linux-arm64: digest "sha512:`}},
		{"unreadable record", `{"sh.porter":{"mixins":{"exec":"v1.2.3"}}}`, []format.Mixin{{Name: "exec"}}, []string{`mixin "exec": its record is unreadable`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ParseBundle(bundleWith(tt.custom))
			if err != nil {
				t.Fatal(err)
			}
			got, warnings := b.Mixins()
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("mixins = %+v, want %+v", got, tt.want)
			}
			if len(warnings) != len(tt.warnings) {
				t.Fatalf("warnings = %q, want %d", warnings, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %q does not contain %q", warnings[i], w)
				}
			}
		})
	}
}

// TestInterfaceDocumentDefinitions checks that a bundle.json interface
// document gets the parent bundle's definitions it names, so that
// InterfaceFromDocument reads its types and $ids.
func TestInterfaceDocumentDefinitions(t *testing.T) {
	data := []byte(`{"name":"app","version":"1.0.0",
		"definitions":{"connstr-output":{"type":"string","$id":"mysql.connstr"},"port-parameter":{"type":"integer"},"unused":{"type":"boolean"}},
		"custom":{"org.getporter.dependencies@v2":{"requires":{"db":{"bundle":"r.io/db:v1","interface":{"document":{
			"outputs":{"connstr":{"definition":"connstr-output"}},
			"parameters":{"port":{"definition":"port-parameter"},"own":{"definition":"own-parameter"},"lost":{"definition":"nowhere"}},
			"definitions":{"own-parameter":{"type":"number"}}}}}}}}}`)
	b, err := ParseBundle(data)
	if err != nil {
		t.Fatal(err)
	}
	deps, err := b.Dependencies()
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) != 1 || deps[0].InterfaceDocument == nil {
		t.Fatalf("deps = %+v", deps)
	}
	if strings.Contains(string(deps[0].InterfaceDocument), "unused") {
		t.Errorf("document %s has a definition it does not name", deps[0].InterfaceDocument)
	}
	got, err := InterfaceFromDocument(deps[0].InterfaceDocument)
	if err != nil {
		t.Fatal(err)
	}
	want := &Declarations{
		Parameters: []Declared{{Name: "lost"}, {Name: "own", Type: "number"}, {Name: "port", Type: "integer"}},
		Outputs:    []Declared{{Name: "connstr", Type: "string", ID: "mysql.connstr"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
}
