package mirrorset

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
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
        reference: ghcr.io/acme/mysql:v0.1.0
        version: 0.1.x
    - name: redis
      bundle:
        reference: ghcr.io/acme/redis:v1.0.0
install:
  - exec:
      command: ./install.sh
`

func TestFromArgsPorterYAML(t *testing.T) {
	wantPackages := []Package{{Ref: "ghcr.io/acme/mysql:v0.1.0", Version: "0.1.x"}, {Ref: "ghcr.io/acme/redis:v1.0.0"}}
	wantMixins := []Mixin{{Name: "exec"}, {Name: "helm3", Version: "1.x"}, {Name: "az"}}
	tests := []struct {
		name     string
		file     string
		content  string
		packages []Package
		mixins   []Mixin
		wantErr  string
	}{
		{name: "by file name", file: "porter.yaml", content: testPorterYAML, packages: wantPackages, mixins: wantMixins},
		{name: "porter.yml", file: "porter.yml", content: testPorterYAML, packages: wantPackages, mixins: wantMixins},
		{name: "by content", file: "bundle-manifest.yaml", content: testPorterYAML, packages: wantPackages, mixins: wantMixins},
		{name: "mixins only", file: "porter.yaml", content: "name: tool\nmixins:\n  - exec@v1.2.3\n", mixins: []Mixin{{Name: "exec", Version: "v1.2.3"}}},
		{name: "ferry.yaml still read", file: "inputs.yaml", content: "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nmixins:\n  - name: exec\n    version: 1.x\n", mixins: []Mixin{{Name: "exec", Version: "1.x"}}},
		{name: "interface-only dependency", file: "porter.yaml", content: "name: app\ndependencies:\n  requires:\n    - name: db\n      bundle:\n        interface:\n          id: mysql\n", wantErr: `dependency "db" declares only an interface`},
		{name: "nothing to resolve", file: "porter.yaml", content: "name: app\ninstall: []\n", wantErr: "no packages or mixins"},
		{name: "malformed", file: "porter.yaml", content: "name: [\n", wantErr: "porter.yaml"},
		{name: "bad mixin entry", file: "porter.yaml", content: "name: app\nmixins:\n  - {exec: {}, helm3: {}}\n", wantErr: "one mixin per entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), tt.file)
			if err := os.WriteFile(p, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			m, file, err := FromArgs([]string{p}, "")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if code := exitcode.Of(err); code != exitcode.Usage {
					t.Errorf("exit code %d, want %d", code, exitcode.Usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if file != p {
				t.Errorf("file = %q", file)
			}
			if !reflect.DeepEqual(m.Packages, tt.packages) || !reflect.DeepEqual(m.Mixins, tt.mixins) {
				t.Errorf("packages %+v mixins %+v, want %+v %+v", m.Packages, m.Mixins, tt.packages, tt.mixins)
			}
		})
	}
}
