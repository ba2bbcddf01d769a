package porter

import (
	"reflect"
	"strings"
	"testing"
)

func TestBundleDeclarations(t *testing.T) {
	tests := []struct {
		name    string
		bundle  string
		want    *Declarations
		wantErr string
	}{
		{
			name:   "none",
			bundle: `{"name":"b","version":"1.0.0"}`,
			want:   &Declarations{},
		},
		{
			name: "types and ids from definitions",
			bundle: `{"name":"b","version":"1.0.0",
				"parameters":{"port":{"definition":"port-parameter"},"tags":{"definition":"tags-parameter"},"nodef":{},"dangling":{"definition":"gone"}},
				"credentials":{"kubeconfig":{"path":"/root/.kube/config"}},
				"outputs":{"connstr":{"definition":"connstr-output","path":"/cnab/app/outputs/connstr"}},
				"definitions":{
					"port-parameter":{"type":"integer","default":3306},
					"tags-parameter":{"type":["string","null","string"]},
					"connstr-output":{"type":"string","$id":"porter.sh/interfaces/mysql.connection-string"}}}`,
			want: &Declarations{
				Parameters:  []Declared{{Name: "dangling"}, {Name: "nodef"}, {Name: "port", Type: "integer"}, {Name: "tags", Type: "null,string"}},
				Credentials: []Declared{{Name: "kubeconfig"}},
				Outputs:     []Declared{{Name: "connstr", Type: "string", ID: "porter.sh/interfaces/mysql.connection-string"}},
			},
		},
		{name: "parameters not an object", bundle: `{"name":"b","version":"1.0.0","parameters":"x"}`, wantErr: `bundle "b": parameters: want an object keyed by name or a list`},
		{name: "definitions a list", bundle: `{"name":"b","version":"1.0.0","definitions":[]}`, wantErr: "definitions: json: cannot unmarshal array"},
		{name: "bad type", bundle: `{"name":"b","version":"1.0.0","outputs":{"o":{"definition":"d"}},"definitions":{"d":{"type":3}}}`, wantErr: "outputs.o: definitions.d: type 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ParseBundle([]byte(tt.bundle))
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.Declarations()
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
		})
	}
}

func TestRealworldDeclarations(t *testing.T) {
	d, err := readRealworld(t, "mybuns-depsv2.bundle.json").Declarations()
	if err != nil {
		t.Fatal(err)
	}
	find := func(list []Declared, name string) Declared {
		for _, x := range list {
			if x.Name == name {
				return x
			}
		}
		t.Fatalf("%s not declared in %+v", name, list)
		return Declared{}
	}
	if got, want := find(d.Outputs, "connStr"), (Declared{Name: "connStr", Type: "string", ID: "porter.sh/interfaces/mysql.connection-string"}); got != want {
		t.Errorf("output connStr = %+v, want %+v", got, want)
	}
	if got := find(d.Parameters, "log_level"); got.Type != "integer" {
		t.Errorf("parameter log_level = %+v", got)
	}
	// Porter's file type is CNAB's string with a content encoding.
	if got := find(d.Parameters, "afile"); got.Type != "string" {
		t.Errorf("parameter afile = %+v", got)
	}
	find(d.Credentials, "username")
}

func TestInterfaceFromDocument(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    *Declarations
		wantErr string
	}{
		{name: "empty", doc: ``, want: &Declarations{}},
		{name: "null", doc: `null`, want: &Declarations{}},
		{
			// Porter's bundle.json shape, with the parent's definitions
			// copied in by Bundle.Dependencies.
			name: "bundle.json shape",
			doc: `{"outputs":{"connstr":{"definition":"connstr-output","path":"/cnab/app/outputs/connstr"}},
				"parameters":{"db":{"definition":"db-parameter"}},"credentials":{"token":{"required":true}},
				"definitions":{"connstr-output":{"type":"string","$id":"mysql.connstr"},"db-parameter":{"type":"string"}}}`,
			want: &Declarations{
				Parameters:  []Declared{{Name: "db", Type: "string"}},
				Credentials: []Declared{{Name: "token"}},
				Outputs:     []Declared{{Name: "connstr", Type: "string", ID: "mysql.connstr"}},
			},
		},
		{
			// PEP003's porter.yaml shape; "file" is CNAB's "string".
			name: "porter.yaml shape",
			doc: `{"parameters":[{"name":"cfg","type":"file"},{"name":"port","type":"integer"}],
				"credentials":[{"$id":"https://getporter.org/interfaces#kubernetes.config.cluster-admin"}],
				"outputs":[{"name":"dbCon","$id":"mysql-5.7-connection-string"}]}`,
			want: &Declarations{
				Parameters:  []Declared{{Name: "cfg", Type: "string"}, {Name: "port", Type: "integer"}},
				Credentials: []Declared{{ID: "https://getporter.org/interfaces#kubernetes.config.cluster-admin"}},
				Outputs:     []Declared{{Name: "dbCon", ID: "mysql-5.7-connection-string"}},
			},
		},
		{
			name: "whole bundle.json",
			doc:  `{"name":"iface","version":"1.0.0","outputs":{"o":{"definition":"o"}},"definitions":{"o":{"type":"boolean"}}}`,
			want: &Declarations{Outputs: []Declared{{Name: "o", Type: "boolean"}}},
		},
		{name: "malformed", doc: `{"outputs":`, wantErr: "interface document: unexpected end of JSON input"},
		{name: "not an object", doc: `[]`, wantErr: "interface document: json: cannot unmarshal array"},
		{name: "entry without name or id", doc: `{"outputs":[{"type":"string"}]}`, wantErr: "outputs[0]: neither a name nor an $id"},
		{name: "section a string", doc: `{"credentials":"token"}`, wantErr: `credentials: want an object keyed by name or a list, got "token"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := InterfaceFromDocument([]byte(tt.doc))
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
		})
	}
}

// TestMissing follows PEP003 (getporter/proposals
// pep/003-advanced-dependencies.md): name and type must match, or the $id
// when the interface gives one; an unknown type matches any.
func TestMissing(t *testing.T) {
	impl := &Declarations{
		Parameters:  []Declared{{Name: "port", Type: "integer"}, {Name: "name", Type: "string"}},
		Credentials: []Declared{{Name: "kubeconfig"}},
		Outputs:     []Declared{{Name: "connection-string", Type: "string", ID: "mysql.connstr"}, {Name: "host", Type: "string"}},
	}
	tests := []struct {
		name  string
		impl  *Declarations
		iface *Declarations
		want  []string
	}{
		{name: "no interface", impl: impl, iface: nil},
		{name: "empty interface", impl: impl, iface: &Declarations{}},
		{
			name:  "name and type",
			impl:  impl,
			iface: &Declarations{Parameters: []Declared{{Name: "port", Type: "integer"}}, Outputs: []Declared{{Name: "host", Type: "string"}}},
		},
		{
			name:  "type differs",
			impl:  impl,
			iface: &Declarations{Parameters: []Declared{{Name: "port", Type: "string"}}},
			want:  []string{`parameter "port" (string)`},
		},
		{
			name:  "by $id, another name",
			impl:  impl,
			iface: &Declarations{Outputs: []Declared{{Name: "dbCon", Type: "string", ID: "mysql.connstr"}}},
		},
		{
			name:  "by $id, no name",
			impl:  impl,
			iface: &Declarations{Outputs: []Declared{{ID: "mysql.connstr"}}},
		},
		{
			// With an $id, the name alone does not match.
			name:  "$id absent though the name matches",
			impl:  impl,
			iface: &Declarations{Outputs: []Declared{{Name: "host", Type: "string", ID: "redis.host"}}},
			want:  []string{`output "host" (string, $id "redis.host")`},
		},
		{
			name:  "unknown types match",
			impl:  impl,
			iface: &Declarations{Parameters: []Declared{{Name: "name"}}, Credentials: []Declared{{Name: "kubeconfig", Type: "string"}}},
		},
		{
			name: "sorted across kinds",
			impl: impl,
			iface: &Declarations{
				Parameters:  []Declared{{Name: "zone", Type: "string"}, {Name: "debug", Type: "boolean"}},
				Credentials: []Declared{{ID: "aws.credentials"}},
				Outputs:     []Declared{{Name: "connstr", Type: "string"}},
			},
			want: []string{`credential ($id "aws.credentials")`, `output "connstr" (string)`, `parameter "debug" (boolean)`, `parameter "zone" (string)`},
		},
		{
			name:  "nil implementation",
			impl:  nil,
			iface: &Declarations{Outputs: []Declared{{Name: "connstr"}}},
			want:  []string{`output "connstr"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.impl.Missing(tt.iface)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Missing = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRealworldInterface checks the interface myenv's porter.yaml sketches
// for its infra dependency (an output with $id
// porter.sh/interfaces/mysql.connection-string) against the realworld
// bundles: mybuns declares it as connStr, myenv does not.
func TestRealworldInterface(t *testing.T) {
	iface, err := InterfaceFromDocument([]byte(`{"outputs":[{"name":"mysql-connstr","$id":"porter.sh/interfaces/mysql.connection-string"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file string
		want []string
	}{
		{"mybuns-depsv2.bundle.json", nil},
		{"myenv-depsv2.bundle.json", []string{`output "mysql-connstr" ($id "porter.sh/interfaces/mysql.connection-string")`}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			d, err := readRealworld(t, tt.file).Declarations()
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Missing(iface); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Missing = %q, want %q", got, tt.want)
			}
		})
	}
}
