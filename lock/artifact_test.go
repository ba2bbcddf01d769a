package lock_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/opencontainers/go-digest"
	"oras.land/oras-go/v2"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
)

// TestArtifactRoundTrip pushes a lock of 10,000 packages — several MiB,
// past a ConfigMap's 1 MiB — with its signature and mirror sidecar as one
// artifact to a real registry, and pulls it back by tag and by digest:
// the same bytes, each file where the commands look for it.
func TestArtifactRoundTrip(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	repo := registrytest.Repository(t, registrytest.Client(t), reg.Host+"/mirror/ferry-lock")
	l := &lock.Lock{APIVersion: "ferry.dev/v1alpha1", Kind: "Lock", Inputs: digest.FromString("inputs").String()}
	for i := range 10000 {
		d := digest.FromString(fmt.Sprint(i))
		l.Packages = append(l.Packages, lock.Package{Source: fmt.Sprintf("registry.example/team%d/app%d", i%97, i), Version: "1.0.0",
			Digest: d.String(), MediaType: "application/vnd.oci.image.manifest.v1+json", Size: 1234})
	}
	data, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 1<<20 {
		t.Fatalf("a lock of 10,000 packages is %d bytes; the test is for locks past 1 MiB", len(data))
	}
	src := t.TempDir()
	lockPath := filepath.Join(src, "ferry.lock")
	files := map[string][]byte{"": data, ".sig": []byte("MEUCIQ-signature"), ".mirror.yaml": []byte("mirror: sidecar\n")}
	for suffix, b := range files {
		if err := os.WriteFile(lockPath+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := lock.PushArtifact(ctx, repo, lockPath, "v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"v1", m.Digest.String()} {
		dir := t.TempDir()
		got, d, err := lock.PullArtifact(ctx, repo, ref, dir)
		if err != nil {
			t.Fatalf("pull %s: %v", ref, err)
		}
		if d != m.Digest || got != filepath.Join(dir, "ferry.lock") {
			t.Errorf("pull %s: %s %s", ref, got, d)
		}
		for suffix, want := range files {
			b, err := os.ReadFile(got + suffix)
			if err != nil || !bytes.Equal(b, want) {
				t.Errorf("pull %s: ferry.lock%s differs (%v)", ref, suffix, err)
			}
		}
		if _, err := lock.Read(got); err != nil {
			t.Errorf("the pulled lock does not read: %v", err)
		}
	}

	// A lock alone: no signature or sidecar files appear.
	alone := filepath.Join(t.TempDir(), "ferry.lock")
	os.WriteFile(alone, data, 0o644)
	if _, err := lock.PushArtifact(ctx, repo, alone, "alone"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	got, _, err := lock.PullArtifact(ctx, repo, "alone", dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(got + ".sig"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a signature appeared for a lock pushed without one: %v", err)
	}
}

// TestPullArtifactRefuses: what is not a lock artifact is bad input naming
// the reference, before anything is written.
func TestPullArtifactRefuses(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	repo := registrytest.Repository(t, registrytest.Client(t), reg.Host+"/mirror/ferry-lock")
	img, err := fixture.PushImage(ctx, repo, "not-a-lock", 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, img, "image"); err != nil {
		t.Fatal(err)
	}
	other, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, lock.ArtifactType, oras.PackManifestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, other, "empty"); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"image", "empty", "missing"} {
		dir := t.TempDir()
		_, _, err := lock.PullArtifact(ctx, repo, ref, dir)
		if !errors.Is(err, errkind.BadInput) {
			t.Errorf("pull %s: %v, want bad input", ref, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("pull %s wrote %d files", ref, len(entries))
		}
	}
}
