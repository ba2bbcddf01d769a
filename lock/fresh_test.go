package lock_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
)

// TestAdvance: a lock written over another takes the next serial when its
// content differs, keeps the old one when it is the same, keeps its own
// when it is higher, and Write leaves an identical file untouched.
func TestAdvance(t *testing.T) {
	mk := func(serial int64, digest string) *lock.Lock {
		return &lock.Lock{APIVersion: lock.APIVersion, Kind: lock.Kind, Serial: serial, Inputs: "sha256:" + digest,
			Packages: []lock.Package{{Source: "r.example/app", Version: "v1", Digest: "sha256:" + digest}}}
	}
	const a, b = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	tests := []struct {
		name string
		old  *lock.Lock // nil: no file
		new  *lock.Lock
		want int64
	}{
		{"first lock", nil, mk(0, a), 0},
		{"same content", mk(0, a), mk(0, a), 0},
		{"same content, serial 4", mk(4, a), mk(0, a), 4},
		{"other content", mk(0, a), mk(0, b), 1},
		{"other content over serial 4", mk(4, a), mk(0, b), 5},
		{"a higher serial stays", mk(4, a), mk(9, b), 9},
		{"an equal serial with other content", mk(4, a), mk(4, b), 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ferry.lock")
			if tt.old != nil {
				if err := tt.old.Write(path); err != nil {
					t.Fatal(err)
				}
			}
			if err := tt.new.Write(path); err != nil {
				t.Fatal(err)
			}
			got, held, err := lock.ReadSerial(path)
			if err != nil || !held || got != tt.want || tt.new.Serial != tt.want {
				t.Fatalf("serial = %d (held %v, err %v), lock %d; want %d", got, held, err, tt.new.Serial, tt.want)
			}
			if _, err := lock.Read(path); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, held, err := lock.ReadSerial(filepath.Join(t.TempDir(), "none.lock")); held || err != nil {
		t.Fatalf("no lock: held %v, err %v", held, err)
	}
}

// TestCheckFresh: a lower serial than the one held is a *DowngradeError of
// kind errkind.Mismatch naming both; equal and higher ones pass.
func TestCheckFresh(t *testing.T) {
	tests := []struct {
		serial, held int64
		refused      bool
	}{
		{0, 0, false}, {1, 0, false}, {3, 3, false}, {0, 1, true}, {4, 7, true},
	}
	for _, tt := range tests {
		err := lock.CheckFresh("new.tar's ferry.lock", tt.serial, "ferry.lock", tt.held)
		var de *lock.DowngradeError
		if refused := errors.As(err, &de); refused != tt.refused || (err != nil) != tt.refused {
			t.Errorf("CheckFresh(%d, held %d) = %v, refused %v", tt.serial, tt.held, err, tt.refused)
			continue
		}
		if tt.refused && (!errors.Is(err, errkind.Mismatch) || de.Serial != tt.serial || de.Held != tt.held) {
			t.Errorf("CheckFresh(%d, held %d) = %#v", tt.serial, tt.held, err)
		}
	}
}
