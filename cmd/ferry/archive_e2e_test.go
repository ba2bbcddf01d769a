package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

// TestArchiveAirGap carries a mixed closure with its mixins across an air
// gap: --to-archive on the connected side, then, with the source registry
// and the feed gone, --from-archive into a private registry, verify --deep
// and install from it.
func TestArchiveAirGap(t *testing.T) {
	t.Parallel()
	w := newCrossplaneWorld(t)
	feed := mixintest.NewFeed(t)
	env := clitest.New(t)
	env.WriteFile("ferry.yaml", `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: `+w.porter.Diamond+`
  - ref: `+w.xp.Transitive+`
mixins:
  - name: exec
    version: 1.x
    feed: `+feed.URL+`
platforms: [linux/amd64]
`)
	env.MustRun("lock")
	r := env.MustRun("mirror", "--to-archive", "closure.tar")
	if _, err := os.Stat(env.Path("closure.tar")); err != nil {
		t.Fatal(err)
	}
	// Each package's line names the archive it went into, not a mirror.
	if !strings.Contains(r.Stderr, "archived ") || !strings.Contains(r.Stderr, " -> closure.tar (") || strings.Contains(r.Stderr, "mirrored ") {
		t.Errorf("--to-archive's lines do not name the archive:\n%s", r.Stderr)
	}
	names := tarNames(t, env.Path("closure.tar"))
	for _, want := range []string{"oci-layout", "index.json", "ferry.lock"} {
		if !names[want] {
			t.Errorf("archive lacks %s", want)
		}
	}

	// The other side of the gap: no source registry, no feed, no ferry.yaml.
	w.src.Stop()
	feed.Close()
	air := clitest.New(t)
	if err := os.Rename(env.Path("closure.tar"), air.Path("closure.tar")); err != nil {
		t.Fatal(err)
	}
	private := registrytest.New(t)
	air.Expect(2, []string{"mirror", "--from-archive", "closure.tar"}, "--to")
	air.MustRun("mirror", "--from-archive", "closure.tar", "--to", private.Host)
	l, err := lock.Read(air.Path("ferry.lock"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Resolved() {
		if !strings.HasPrefix(p.Mirror, private.Host+"/") {
			t.Errorf("%s: mirror %q", p.Source, p.Mirror)
		}
	}
	mixins, err := mixin.FromLock(l)
	if err != nil {
		t.Fatal(err)
	}
	if len(mixins) == 0 || !strings.HasPrefix(mixins[0].Mirror, private.Host+"/porter-mixins/exec@sha256:") {
		t.Fatalf("mixins after import: %+v", mixins)
	}
	air.MustRun("verify", "--deep")
	air.MustRun("install", "--dest", "out", "--porter-home", "porter-home")
	if _, err := os.Stat(air.Path("out/crossplane/imageconfig.yaml")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(air.Path("porter-home/mixins/exec/runtimes/exec-runtime")); err != nil {
		t.Error(err)
	}
	// A second import is a no-op that leaves the lock byte-identical.
	before := air.ReadFile("ferry.lock")
	air.MustRun("mirror", "--from-archive", "closure.tar", "--to", private.Host)
	if air.ReadFile("ferry.lock") != before {
		t.Error("re-importing changed the lock")
	}
}

// TestArchiveBadInput: archives that are not ferry's, or that lack what
// their lock names, are refused before the lock is written.
func TestArchiveBadInput(t *testing.T) {
	t.Parallel()
	env := clitest.New(t)
	private := registrytest.New(t)
	env.WriteFile("notatar.tar", "hello")
	env.Expect(2, []string{"mirror", "--from-archive", "notatar.tar", "--to", private.Host}, "notatar.tar")
	env.Expect(2, []string{"mirror", "--to-archive", "x.tar", "--to", private.Host}, "not both")

	// A tar holding a lock but none of the content the lock names.
	l := &lock.Lock{APIVersion: lock.APIVersion, Kind: lock.Kind, Inputs: "sha256:" + strings.Repeat("0", 64),
		Packages: []lock.Package{{Source: "127.0.0.1:1/acme/app", Kind: "oci.artifact", Version: "v1",
			Digest: "sha256:" + strings.Repeat("1", 64), MediaType: "application/vnd.oci.image.manifest.v1+json", Size: 2}}}
	data, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range map[string][]byte{
		"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`),
		"index.json": []byte(`{"schemaVersion":2,"manifests":[]}`),
		"ferry.lock": data,
	} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	env.WriteFile("empty.tar", buf.String())
	r := env.Run("mirror", "--from-archive", "empty.tar", "--to", private.Host)
	if r.Code != 3 || !strings.Contains(r.Stderr, "acme/app") {
		t.Fatalf("exit %d, want 3 naming the package:\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(env.Path("ferry.lock")); !os.IsNotExist(err) {
		t.Error("a lock was written after a failed import")
	}
}

func tarNames(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = true
	}
}

// TestArchiveHostileEntries: an archive whose entries would land outside
// any destination (.., absolute names, symbolic and hard links pointing
// out) is read in place, never extracted: the import fails, and nothing is
// written outside, or at all.
func TestArchiveHostileEntries(t *testing.T) {
	t.Parallel()
	env := clitest.New(t)
	private := registrytest.New(t)
	outside := t.TempDir()
	digest := strings.Repeat("1", 64)
	l := &lock.Lock{APIVersion: lock.APIVersion, Kind: lock.Kind, Inputs: "sha256:" + strings.Repeat("0", 64),
		Packages: []lock.Package{{Source: "127.0.0.1:1/acme/app", Kind: "oci.artifact", Version: "v1",
			Digest: "sha256:" + digest, MediaType: "application/vnd.oci.image.manifest.v1+json", Size: 2}}}
	data, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []struct {
		hdr  tar.Header
		body string
	}{
		{tar.Header{Name: "oci-layout"}, `{"imageLayoutVersion":"1.0.0"}`},
		{tar.Header{Name: "index.json"}, `{"schemaVersion":2,"manifests":[]}`},
		{tar.Header{Name: "ferry.lock"}, string(data)},
		{tar.Header{Name: "../escaped"}, "x"},
		{tar.Header{Name: "../../escaped2"}, "x"},
		{tar.Header{Name: filepath.ToSlash(filepath.Join(outside, "absolute"))}, "x"},
		{tar.Header{Name: "blobs/sha256/" + digest, Typeflag: tar.TypeSymlink, Linkname: filepath.Join(outside, "target")}, ""},
		{tar.Header{Name: "blobs/sha256/" + strings.Repeat("2", 64), Typeflag: tar.TypeLink, Linkname: "../../../etc/passwd"}, ""},
	} {
		hdr := h.hdr
		hdr.Mode, hdr.Size = 0o644, int64(len(h.body))
		if hdr.Typeflag == 0 {
			hdr.Typeflag = tar.TypeReg
		}
		if err := tw.WriteHeader(&hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(h.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	env.WriteFile("hostile.tar", buf.String())
	r := env.Run("mirror", "--from-archive", "hostile.tar", "--to", private.Host)
	if r.Code != 2 || !strings.Contains(r.Stderr, `"../escaped"`) {
		t.Fatalf("exit %d, want 2 naming the escaping entry:\n%s", r.Code, r.Stderr)
	}
	for _, p := range []string{filepath.Join(env.Dir, "..", "escaped"), filepath.Join(env.Dir, "..", "..", "escaped2"),
		filepath.Join(outside, "absolute"), filepath.Join(outside, "target")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s was written: %v", p, err)
		}
	}
	entries, err := os.ReadDir(env.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "hostile.tar" && e.Name() != ".docker" {
			t.Errorf("the import wrote %s", e.Name())
		}
	}
}
