package lock_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ferryhq/ferry/lock"
)

func TestMirrorsSidecar(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ferry.lock")
	signed := diamond()
	if err := signed.Write(path); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mirrored := diamond()
	for _, p := range mirrored.Resolved() {
		p.Mirror = "mirror.io/m/" + p.Source
	}
	m, err := lock.NewMirrors(signed, mirrored, "mirror.io/m")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("writing the sidecar changed the lock")
	}

	tests := []struct {
		name      string
		edit      func(t *testing.T)
		wantTo    string
		wantStale bool
		wantErr   bool
	}{
		{name: "current", wantTo: "mirror.io/m"},
		{name: "none", edit: func(t *testing.T) { os.Remove(lock.MirrorsPath(path)) }},
		{name: "stale", edit: func(t *testing.T) {
			l := diamond()
			l.Input = "other.yaml"
			if err := l.Write(path); err != nil {
				t.Fatal(err)
			}
		}, wantStale: true},
		{name: "malformed", edit: func(t *testing.T) {
			os.WriteFile(lock.MirrorsPath(path), []byte("kind: Lock\nextra: 1\n"), 0o644)
		}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := signed.Write(path); err != nil {
				t.Fatal(err)
			}
			if err := m.Write(path); err != nil {
				t.Fatal(err)
			}
			if tt.edit != nil {
				tt.edit(t)
			}
			l, got, stale, err := lock.ReadWithMirrors(path)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ReadWithMirrors error %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if (stale != nil) != tt.wantStale || (stale != nil && !errors.Is(stale, lock.ErrStaleMirrors)) {
				t.Fatalf("stale = %v, want stale %v", stale, tt.wantStale)
			}
			to := ""
			if got != nil {
				to = got.To
			}
			if to != tt.wantTo {
				t.Fatalf("sidecar to = %q, want %q", to, tt.wantTo)
			}
			if got == nil {
				return
			}
			for _, p := range l.Resolved() {
				if p.Mirror != "" {
					t.Fatalf("ReadWithMirrors changed the lock: %s has mirror %s", p.Source, p.Mirror)
				}
			}
			got.Apply(l)
			for _, p := range l.Resolved() {
				if want := "mirror.io/m/" + p.Source; p.Mirror != want {
					t.Errorf("after Apply %s mirror = %q, want %q", p.Source, p.Mirror, want)
				}
			}
		})
	}
}
