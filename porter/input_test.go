package porter

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/mixin"
)

const testPorterYAML = `schemaVersion: 1.0.1
name: wordpress
version: 0.1.4
registry: ghcr.io/acme
mixins:
  - exec
  - helm3@1.x
  - az:
      clientVersion: 2.0.0
dependencies:
  requires:
    - name: mysql
      bundle:
        reference: getporter/mysql:v0.1.0
        version: 0.1.x
    - name: redis
      bundle: ghcr.io/acme/redis:v1.0.0
install:
  - exec:
      command: ./install.sh
`

func TestReadInput(t *testing.T) {
	strategy := func(s string) *mirrorset.MirrorSet {
		m := &mirrorset.MirrorSet{}
		if err := m.SetSection(KeyPorter, Settings{VersionStrategy: s}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name     string
		file     string
		content  string
		settings *mirrorset.MirrorSet
		packages []mirrorset.Package
		mixins   []mixin.Entry
		notMine  bool
		wantErr  string
	}{
		{
			// Porter's strategy picks among the range when the roots
			// resolve (TestPorterPolicy pins it); the roots name the format.
			name: "Porter roots, Docker references", file: "porter.yaml", content: testPorterYAML,
			packages: []mirrorset.Package{{Ref: "docker.io/getporter/mysql:v0.1.0", Version: "0.1.x", Format: "porter"}, {Ref: "ghcr.io/acme/redis:v1.0.0", Format: "porter"}},
			mixins:   []mixin.Entry{{Name: "exec"}, {Name: "helm3", Version: "1.x"}, {Name: "az"}},
		},
		{
			name: "by content", file: "bundle.yaml", content: testPorterYAML, settings: strategy("max-patch"),
			packages: []mirrorset.Package{{Ref: "docker.io/getporter/mysql:v0.1.0", Version: "0.1.x", Format: "porter"}, {Ref: "ghcr.io/acme/redis:v1.0.0", Format: "porter"}},
			mixins:   []mixin.Entry{{Name: "exec"}, {Name: "helm3", Version: "1.x"}, {Name: "az"}},
		},
		{
			name: "mixin versioning proposal", file: "porter.yaml",
			content: "name: tool\nmixins:\n  - exec:\n      mixin:\n        version: v1.0.0\n        source: https://mirror.acme/mixins/atom.xml\n",
			mixins:  []mixin.Entry{{Name: "exec", Version: "v1.0.0", Feed: "https://mirror.acme/mixins/atom.xml"}},
		},
		{
			// PEP003: the interface's bundle is part of the closure, as
			// resolve's interface edge makes it for a published bundle.
			name: "interface.reference kept", file: "porter.yaml",
			content:  "name: app\ndependencies:\n  requires:\n    - name: db\n      bundle:\n        reference: ghcr.io/acme/mysql:v1.0.0\n        version: 1.x\n        interface:\n          reference: ghcr.io/acme/db-interface:v1\n",
			packages: []mirrorset.Package{{Ref: "ghcr.io/acme/mysql:v1.0.0", Version: "1.x", Format: "porter"}, {Ref: "ghcr.io/acme/db-interface:v1", Format: "porter"}},
		},
		{name: "interface-only dependency names its interface", file: "porter.yaml", content: "name: app\ndependencies:\n  requires:\n    - name: db\n      bundle:\n        interface:\n          reference: getporter/db:v1\n", wantErr: `dependency "db" declares only an interface (getporter/db:v1)`},
		{name: "a ferry.yaml is not a porter.yaml", file: "x.yaml", content: "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n", notMine: true},
		{name: "interface-only dependency", file: "porter.yaml", content: "name: app\ndependencies:\n  requires:\n    - name: db\n      bundle:\n        interface:\n          id: mysql\n", wantErr: `dependency "db" declares only an interface`},
		{name: "nothing to resolve", file: "porter.yaml", content: "name: app\ninstall: []\n", wantErr: "no packages or mixins"},
		{name: "bad mixin entry", file: "porter.yaml", content: "name: app\nmixins:\n  - {exec: {}, helm3: {}}\n", wantErr: "mixin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok, err := Reader{}.ReadInput(tt.file, []byte(tt.content), tt.settings)
			if tt.notMine {
				if ok || err != nil {
					t.Fatalf("ReadInput = %v, %v; want not a porter.yaml", ok, err)
				}
				return
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !ok {
				t.Fatalf("ReadInput = %v, %v", ok, err)
			}
			var mixins []mixin.Entry
			if _, err := m.Section(mixin.KeyMixins, &mixins); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m.Packages, tt.packages) || !reflect.DeepEqual(mixins, tt.mixins) {
				t.Errorf("packages %+v mixins %+v\nwant %+v %+v", m.Packages, mixins, tt.packages, tt.mixins)
			}
		})
	}
}
