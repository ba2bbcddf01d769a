package lock_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/lock"
)

func init() {
	// The stand-in `mixins` section (lock_test.go) records its mirror
	// locations in a sidecar as the mixin format does.
	lock.RegisterSectionMirrors("mixins", lock.SectionMirrors{
		Get: func(l *lock.Lock) ([]lock.ItemMirror, error) {
			var out []lock.ItemMirror
			for _, m := range mixins(l) {
				if m.Mirror != "" {
					out = append(out, lock.ItemMirror{Name: m.Name, Version: m.Version, Mirror: m.Mirror})
				}
			}
			return out, nil
		},
		Set: func(l *lock.Lock, items []lock.ItemMirror) error {
			ms := mixins(l)
			for i := range ms {
				for _, it := range items {
					if it.Name == ms[i].Name && it.Version == ms[i].Version {
						ms[i].Mirror = it.Mirror
					}
				}
			}
			setMixins(l, ms)
			return nil
		},
	})
}

// mirroredTo returns diamond() as a mirror run to `to` leaves it: every
// package and the mixin recorded there.
func mirroredTo(to string) *lock.Lock {
	l := diamond()
	for _, p := range l.Resolved() {
		p.Mirror = to + "/" + p.Source
	}
	ms := mixins(l)
	ms[0].Mirror = to + "/porter-mixins/exec@sha256:" + strings.Repeat("a", 64)
	setMixins(l, ms)
	return l
}

// TestMirrorsSidecarDestinations: a signed lock's sidecar records the
// mirror locations of its format sections' items (the mixins) beside its
// packages', and every destination a mirror run copied it to, the latest
// on top (the default of verify and install) and each once; ApplyMirrors
// gives a run the locations of the mirror it reads from (--from), or the
// latest, and nothing from a sidecar of another lock.
func TestMirrorsSidecarDestinations(t *testing.T) {
	tests := []struct {
		name string
		// runs are the destinations mirrored to, in order.
		runs []string
		// from is the mirror ApplyMirrors is asked for.
		from string
		// stale rewrites the lock after the runs.
		stale       bool
		wantTo      string
		wantEarlier []string
		// wantApplied is the mirror whose locations ApplyMirrors sets
		// ("" for none).
		wantApplied string
	}{
		{name: "one run", runs: []string{"m1.io/a"}, wantTo: "m1.io/a", wantApplied: "m1.io/a"},
		{name: "two destinations", runs: []string{"m1.io/a", "m2.io/b"}, wantTo: "m2.io/b", wantEarlier: []string{"m1.io/a"}, wantApplied: "m2.io/b"},
		{name: "from the earlier one", runs: []string{"m1.io/a", "m2.io/b"}, from: "m1.io/a", wantTo: "m2.io/b", wantEarlier: []string{"m1.io/a"}, wantApplied: "m1.io/a"},
		{name: "from one not recorded: the latest", runs: []string{"m1.io/a", "m2.io/b"}, from: "m9.io/x", wantTo: "m2.io/b", wantEarlier: []string{"m1.io/a"}, wantApplied: "m2.io/b"},
		{name: "the same destination again, once", runs: []string{"m1.io/a", "m2.io/b", "m1.io/a"}, wantTo: "m1.io/a", wantEarlier: []string{"m2.io/b"}, wantApplied: "m1.io/a"},
		{name: "three, latest first", runs: []string{"m1.io/a", "m2.io/b", "m3.io/c"}, wantTo: "m3.io/c", wantEarlier: []string{"m2.io/b", "m1.io/a"}, wantApplied: "m3.io/c"},
		{name: "stale: nothing applied", runs: []string{"m1.io/a"}, stale: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ferry.lock")
			signed := diamond()
			if err := signed.Write(path); err != nil {
				t.Fatal(err)
			}
			for _, to := range tc.runs {
				m, err := lock.NewMirrors(signed, mirroredTo(to), to)
				if err != nil {
					t.Fatal(err)
				}
				if len(m.Extensions) != 1 || m.Extensions[0].Section != "mixins" || m.Extensions[0].Name != "exec" {
					t.Fatalf("the sidecar records extensions %+v, want the exec mixin", m.Extensions)
				}
				if err := m.Write(path); err != nil {
					t.Fatal(err)
				}
			}
			if tc.stale {
				l := diamond()
				l.Input = "other.yaml"
				if err := l.Write(path); err != nil {
					t.Fatal(err)
				}
			}
			l, err := lock.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.stale {
				m, err := lock.ReadMirrors(path, l)
				if err != nil {
					t.Fatal(err)
				}
				var earlier []string
				for _, r := range m.Earlier {
					earlier = append(earlier, r.To)
				}
				if m.To != tc.wantTo || strings.Join(earlier, ",") != strings.Join(tc.wantEarlier, ",") {
					t.Fatalf("sidecar to %s, earlier %v; want %s, %v", m.To, earlier, tc.wantTo, tc.wantEarlier)
				}
			}
			if err := lock.ApplyMirrors(path, l, tc.from); err != nil {
				t.Fatal(err)
			}
			for _, p := range l.Resolved() {
				want := ""
				if tc.wantApplied != "" {
					want = tc.wantApplied + "/" + p.Source
				}
				if p.Mirror != want {
					t.Errorf("%s: mirror %q, want %q", p.Source, p.Mirror, want)
				}
			}
			got := mixins(l)[0].Mirror
			if want := mixins(mirroredTo(tc.wantApplied))[0].Mirror; (tc.wantApplied == "" && got != "") || (tc.wantApplied != "" && got != want) {
				t.Errorf("mixin mirror %q, want the one in %q", got, tc.wantApplied)
			}
		})
	}
}

// TestMirrorsSidecarMalformedEarlier: an earlier mirror without its
// destination is bad input.
func TestMirrorsSidecarMalformedEarlier(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ferry.lock")
	l := diamond()
	if err := l.Write(path); err != nil {
		t.Fatal(err)
	}
	d, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	side := "apiVersion: " + lock.APIVersion + "\nkind: " + lock.MirrorsKind + "\nlock: " + d + "\nto: m1.io/a\nearlier:\n  - packages: []\n"
	if err := os.WriteFile(lock.MirrorsPath(path), []byte(side), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ReadMirrors(path, l); err == nil || !strings.Contains(err.Error(), "earlier[0]: no mirror") {
		t.Fatalf("err = %v", err)
	}
}
