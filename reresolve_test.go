package ferry

import (
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

// TestMirrorOf: the repository a source is read from by verify --resolve:
// the --mirror mapping, else the lock's recorded mirror, else the
// HOST/PREFIX the recorded mirrors share.
func TestMirrorOf(t *testing.T) {
	recorded := &lock.Lock{Packages: []lock.Package{
		{Source: "src.example/acme/app", Mirror: "mirror.example/m/acme/app"},
		{Source: "src.example/acme/odd", Mirror: "elsewhere.example/odd"},
	}}
	tests := []struct {
		name     string
		l        *lock.Lock
		override *relocate.Mapping
		source   string
		want     string
		code     int // exit code of the error, 0: none
	}{
		{"override", recorded, &relocate.Mapping{Host: "dr.example", Prefix: "x"}, "src.example/acme/app", "dr.example/x/acme/app", 0},
		{"recorded", recorded, nil, "src.example/acme/app", "mirror.example/m/acme/app", 0},
		{"recorded off the layout", recorded, nil, "src.example/acme/odd", "elsewhere.example/odd", 0},
		{"not recorded: the shared layout", recorded, nil, "other.example/lib/db", "mirror.example/m/lib/db", 0},
		{"nothing recorded", &lock.Lock{Packages: []lock.Package{{Source: "src.example/a"}}}, nil, "src.example/a", "", exitcode.Usage},
		{"no layout to infer", &lock.Lock{Packages: []lock.Package{{Source: "src.example/a", Mirror: "m.example/b"}}}, nil, "src.example/c", "", exitcode.Mismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			to, err := mirrorOf(tt.l, tt.override)
			var got string
			if err == nil {
				got, err = to(tt.source)
			}
			if code := exitcode.Of(err); err != nil && code != tt.code || err == nil && tt.code != 0 {
				t.Fatalf("error %v (exit %d), want exit %d", err, exitcode.Of(err), tt.code)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
