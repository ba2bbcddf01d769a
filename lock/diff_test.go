package lock_test

import (
	"slices"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/lock"
)

// TestDiffReplaced: a digest change under an unchanged version is a
// category of its own (lock.OpReplaced), listed before every other
// change; a version change, a digest pin moved (no version), and a
// package replaced by another are not.
func TestDiffReplaced(t *testing.T) {
	dOld := digest.FromString("web, the old content").String()
	dNew := digest.FromString("web, other content").String()
	edit := func(f func(l *lock.Lock)) *lock.Lock {
		l := diamond()
		f(l)
		return l
	}
	swapped := func(l *lock.Lock) { l.Package("r.io/web").Digest = dNew }
	tests := []struct {
		name string
		a, b *lock.Lock
		want []string // "OP KIND NAME", in order
	}{
		{"identical", diamond(), diamond(), []string{}},
		{
			name: "same version, other digest",
			a:    diamond(),
			b:    edit(swapped),
			want: []string{"replaced package r.io/web"},
		},
		{
			name: "new version, new digest",
			a:    diamond(),
			b:    edit(func(l *lock.Lock) { l.Package("r.io/web").Version, l.Package("r.io/web").Digest = "v1.2.0", dNew }),
			want: []string{"changed package r.io/web"},
		},
		{
			name: "a replacement comes first, whatever its name",
			a:    diamond(),
			b: edit(func(l *lock.Lock) {
				swapped(l)
				l.Package("r.io/api").Version, l.Package("r.io/api").Digest = "v1.1.0", dOld
				l.Packages = append(l.Packages, lock.Package{Source: "r.io/aaa", Version: "v1.0.0", Digest: dOld})
				ms := mixins(l)
				ms[0].Binaries["exec-linux-amd64"] = testBinary{Digest: dOld, Size: 10, URL: "https://feed/exec-linux-amd64"}
				setMixins(l, ms)
			}),
			want: []string{"replaced package r.io/web", "replaced mixin exec", "changed package r.io/api", "added package r.io/aaa"},
		},
		{
			name: "a newer version on the same digest: a rollback, first",
			a:    diamond(),
			b: edit(func(l *lock.Lock) {
				l.Package("r.io/api").Version, l.Package("r.io/api").Digest = "v1.1.0", dOld
				l.Package("r.io/web").Version = "v9.0.0"
			}),
			want: []string{"rollback package r.io/web", "changed package r.io/api"},
		},
		{
			name: "an older version on the same digest",
			a:    edit(func(l *lock.Lock) { l.Package("r.io/web").Version = "v9.0.0" }),
			b:    diamond(),
			want: []string{"changed package r.io/web"},
		},
		{
			name: "a digest pin without a version moved",
			a:    edit(func(l *lock.Lock) { l.Package("r.io/web").Version = "" }),
			b:    edit(func(l *lock.Lock) { l.Package("r.io/web").Version = ""; swapped(l) }),
			want: []string{"changed package r.io/web"},
		},
		{
			name: "a package now replaced by another",
			a:    diamond(),
			b: edit(func(l *lock.Lock) {
				p := l.Package("r.io/api")
				p.Digest, p.ReplacedBy = "", "r.io/db"
			}),
			want: []string{"changed package r.io/api"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changes := lock.Diff(tt.a, tt.b)
			got := []string{}
			for _, c := range changes {
				got = append(got, c.Op+" "+c.Kind+" "+c.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Diff = %q\nwant   %q", got, tt.want)
			}
			replaced, others := lock.Replaced(changes)
			if len(replaced)+len(others) != len(changes) {
				t.Errorf("Replaced split %d changes into %d + %d", len(changes), len(replaced), len(others))
			}
			for _, c := range replaced {
				replacedOK := c.Op == lock.OpReplaced && c.OldVersion == c.NewVersion && c.OldDigest != c.NewDigest
				rollbackOK := c.Op == lock.OpRollback && c.OldVersion != c.NewVersion && c.OldDigest == c.NewDigest
				if !replacedOK && !rollbackOK {
					t.Errorf("replaced %+v", c)
				}
			}
			for _, c := range others {
				if c.Op == lock.OpReplaced || c.Op == lock.OpRollback {
					t.Errorf("other %+v", c)
				}
			}
		})
	}
}
