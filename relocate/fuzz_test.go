package relocate_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/resolve"
)

// fuzzArchive returns a real archive, as `ferry mirror --to-archive`
// writes it, of app -> db (each with an image) published to src.
func fuzzArchive(tb testing.TB, c *client.Client, src *registrytest.Registry) []byte {
	tb.Helper()
	ctx := context.Background()
	h := src.Host
	for _, b := range []struct {
		path string
		b    fixture.Bundle
	}{
		{"p/db", fixture.Bundle{Name: "db", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"mysql"}}},
		{"p/app", fixture.Bundle{Name: "app", Version: "1.0.0", Tags: []string{"v1.0.0"},
			Deps: []fixture.Dep{{Name: "db", Bundle: h + "/p/db:v1.0.0", Ranges: []string{"^1.0"}}}}},
	} {
		if _, err := fixture.PushBundle(ctx, registrytest.Repository(tb, c, h+"/"+b.path), h+"/"+b.path, b.b); err != nil {
			tb.Fatal(err)
		}
	}
	g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: h + "/p/app:v1.0.0"}}, resolve.Options{Registry: c, Formats: []format.Format{porter.Reader{Strategy: porter.StrategyHighest}}})
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "closure.tar")
	if _, err := relocate.ToArchive(ctx, lock.FromGraph(g, "sha256:inputs"), path, relocate.Options{Source: c, Concurrency: 2}, nil); err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// lockEntry returns the content of the ferry.lock entry of a tar, read
// with archive/tar alone, and whether there is exactly one.
func lockEntry(data []byte) ([]byte, bool) {
	tr := tar.NewReader(bytes.NewReader(data))
	var found []byte
	n := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return found, n == 1
		}
		if err != nil {
			return nil, false
		}
		if strings.TrimPrefix(h.Name, "./") == relocate.ArchiveLockFile {
			n++
			if found, err = io.ReadAll(tr); err != nil {
				return nil, false
			}
		}
	}
}

// FuzzArchive reads fuzzed archives as `ferry mirror --from-archive`
// does. A lock ReadArchiveLock returns is the archive's one ferry.lock
// entry, parsed, and survives a round trip; when FromArchive imports an
// archive, every package it reports is in the mirror under the locked
// digest (and tag), and nothing else is claimed. The seed is a real
// archive written by ToArchive.
func FuzzArchive(f *testing.F) {
	ctx := context.Background()
	src, mirror := registrytest.New(f), registrytest.New(f)
	c := registrytest.Client(f)
	real := fuzzArchive(f, c, src)
	f.Add(real)
	var onlyLock bytes.Buffer
	tw := tar.NewWriter(&onlyLock)
	body := "apiVersion: ferry.dev/v1alpha1\nkind: Lock\ninputs: sha256:x\npackages: []\n"
	if err := tw.WriteHeader(&tar.Header{Name: relocate.ArchiveLockFile, Mode: 0o644, Size: int64(len(body))}); err != nil {
		f.Fatal(err)
	}
	if _, err := tw.Write([]byte(body)); err != nil {
		f.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		f.Fatal(err)
	}
	f.Add(onlyLock.Bytes())
	to, err := relocate.ParseMapping(mirror.Host + "/m")
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	// The real archive imports: the property below is reached.
	seedPath := filepath.Join(dir, "seed.tar")
	if err := os.WriteFile(seedPath, real, 0o644); err != nil {
		f.Fatal(err)
	}
	if _, _, err := relocate.FromArchive(ctx, seedPath, relocate.Options{Source: c, To: to, Concurrency: 2}, nil); err != nil {
		f.Fatalf("the seed archive does not import: %v", err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "in.tar")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := relocate.ReadArchiveLock(path)
		if err != nil {
			return
		}
		entry, one := lockEntry(data)
		if !one {
			t.Fatalf("ReadArchiveLock read a lock from an archive without exactly one %s entry", relocate.ArchiveLockFile)
		}
		want, err := lock.Parse(entry)
		if err != nil {
			t.Fatalf("ReadArchiveLock accepted a %s that lock.Parse refuses: %v", relocate.ArchiveLockFile, err)
		}
		got, err := l.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		wantOut, err := want.Marshal()
		if err != nil || !bytes.Equal(got, wantOut) {
			t.Fatalf("ReadArchiveLock's lock differs from the entry's:\n%s\n---\n%s", got, wantOut)
		}
		imported, rep, err := relocate.FromArchive(ctx, path, relocate.Options{Source: c, To: to, Concurrency: 2}, nil)
		if err != nil {
			return
		}
		if len(rep.Packages) != len(imported.Resolved()) {
			t.Fatalf("FromArchive reports %d packages for %d resolved", len(rep.Packages), len(imported.Resolved()))
		}
		for _, p := range imported.Resolved() {
			if p.Mirror != to.Repo(p.Source) {
				t.Fatalf("%s recorded in %s, want %s", p.Source, p.Mirror, to.Repo(p.Source))
			}
			repo, err := c.Repository(p.Mirror)
			if err != nil {
				t.Fatal(err)
			}
			d, err := repo.Resolve(ctx, p.Digest)
			if err != nil || d.Digest.String() != p.Digest {
				t.Fatalf("FromArchive imported %s, but the mirror has %v (%v) for %s", p.Source, d.Digest, err, p.Digest)
			}
		}
	})
}
