package verify_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/verify"
)

// sharedRepos is how many repositories the shared-blob fixture fills.
const sharedRepos = 4

// pseudo returns size bytes of SHA-256 in counter mode over seed.
func pseudo(seed string, size int) []byte {
	var out []byte
	for i := uint64(0); len(out) < size; i++ {
		h := sha256.New()
		h.Write([]byte(seed))
		_ = binary.Write(h, binary.BigEndian, i)
		out = h.Sum(out)
	}
	return out[:size]
}

// sharedFixture pushes sharedRepos packages to src, "s/rN:v1", each an
// index over two images: one of a config shared by every repository, a
// layer shared by every repository and a layer of its own; one of a
// config of its own and the shared layer again. It returns the lock (not
// mirrored yet) and the size of every distinct blob.
func sharedFixture(t *testing.T, c *client.Client, src string) (*lock.Lock, map[digest.Digest]int64) {
	t.Helper()
	ctx := context.Background()
	blobs := map[digest.Digest]int64{}
	push := func(repo oras.Target, mediaType string, data []byte) ocispec.Descriptor {
		t.Helper()
		d := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(data), Size: int64(len(data))}
		if exists, err := repo.Exists(ctx, d); err != nil {
			t.Fatal(err)
		} else if !exists {
			if err := repo.Push(ctx, d, bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	pushJSON := func(repo oras.Target, mediaType string, v any) ocispec.Descriptor {
		t.Helper()
		data, err := fixture.CanonicalJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		return push(repo, mediaType, data)
	}
	image := func(repo oras.Target, config []byte, layers ...[]byte) ocispec.Descriptor {
		t.Helper()
		m := ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
			Config: push(repo, ocispec.MediaTypeImageConfig, config)}
		blobs[m.Config.Digest] = m.Config.Size
		for _, l := range layers {
			d := push(repo, ocispec.MediaTypeImageLayer, l)
			blobs[d.Digest] = d.Size
			m.Layers = append(m.Layers, d)
		}
		return pushJSON(repo, ocispec.MediaTypeImageManifest, m)
	}
	sharedConfig := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers"}}`)
	sharedLayer := pseudo("shared layer", 48<<10)
	l := &lock.Lock{APIVersion: lock.APIVersion, Kind: lock.Kind, Inputs: "sha256:inputs"}
	for i := range sharedRepos {
		name := fmt.Sprintf("%s/s/r%d", src, i)
		repo := registrytest.Repository(t, c, name)
		a := image(repo, sharedConfig, sharedLayer, pseudo(name+" layer", 8<<10+i))
		b := image(repo, []byte(fmt.Sprintf(`{"architecture":"arm64","os":"linux","rootfs":{"type":"layers"},"n":%d}`, i)), sharedLayer)
		idx := pushJSON(repo, ocispec.MediaTypeImageIndex, ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2},
			MediaType: ocispec.MediaTypeImageIndex, Manifests: []ocispec.Descriptor{a, b}})
		if err := repo.Tag(ctx, idx, "v1"); err != nil {
			t.Fatal(err)
		}
		l.Packages = append(l.Packages, lock.Package{Source: name, Version: "v1", Digest: idx.Digest.String(), MediaType: idx.MediaType, Size: idx.Size})
	}
	return l, blobs
}

// TestVerifyDeepHashesEachDigestOnce: with --deep, packages in several
// repositories that share blobs read each blob once in a run (one GET
// per digest, the bytes read are the unique bytes), while every
// repository is still proven to hold every blob its packages need: a
// blob unlinked from one repository is reported missing there, and a
// blob whose stored bytes were altered is reported for every package
// that holds it.
func TestVerifyDeepHashesEachDigestOnce(t *testing.T) {
	ctx := context.Background()
	src := registrytest.New(t)
	var wire registrytest.BlobReads
	mirror := registrytest.New(t, registrytest.WithWrap(wire.Wrap))
	c := registrytest.Client(t)
	l, blobs := sharedFixture(t, c, src.Host)
	to, err := relocate.ParseMapping(mirror.Host + "/m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := relocate.Mirror(ctx, l, relocate.Options{Source: c, To: to, Concurrency: 2}); err != nil {
		t.Fatal(err)
	}
	var unique int64
	for _, size := range blobs {
		unique += size
	}
	// Every package reaches the shared layer twice and the shared config
	// once: each is needed in every repository.
	if len(blobs) != 2+2*sharedRepos {
		t.Fatalf("fixture has %d distinct blobs", len(blobs))
	}
	var shared digest.Digest
	for d, size := range blobs {
		if size == 48<<10 {
			shared = d
		}
	}
	blobFile := filepath.Join(mirror.Root, "docker", "registry", "v2", "blobs", "sha256", shared.Encoded()[:2], shared.Encoded(), "data")
	orig, err := os.ReadFile(blobFile)
	if err != nil {
		t.Fatal(err)
	}
	unlinked := l.Packages[2]
	link := filepath.Join(mirror.Root, "docker", "registry", "v2", "repositories", strings.TrimPrefix(unlinked.Mirror, mirror.Host+"/"), "_layers", "sha256", shared.Encoded())

	for _, tc := range []struct {
		name   string
		jobs   int
		tamper func(t *testing.T)
		// want lists "PACKAGE KIND REF" per problem.
		want []string
		// gets is how many times each blob is read; sharedGets the
		// shared layer's.
		gets, sharedGets int
	}{
		{name: "clean, one at a time", jobs: 1, gets: 1, sharedGets: 1},
		{name: "clean, all at once", jobs: sharedRepos, gets: 1, sharedGets: 1},
		{name: "shared layer unlinked from one repository", jobs: sharedRepos,
			tamper: func(t *testing.T) {
				b, err := os.ReadFile(filepath.Join(link, "link"))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.RemoveAll(link); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					if err := os.MkdirAll(link, 0o755); err != nil {
						t.Error(err)
					}
					if err := os.WriteFile(filepath.Join(link, "link"), b, 0o644); err != nil {
						t.Error(err)
					}
				})
			},
			want: []string{unlinked.Source + " missing " + unlinked.Mirror + "@" + shared.String()},
			gets: 1, sharedGets: 1},
		{name: "shared layer altered in storage", jobs: sharedRepos,
			tamper: func(t *testing.T) {
				b := append([]byte(nil), orig...)
				b[len(b)-1] ^= 1
				if err := os.WriteFile(blobFile, b, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					if err := os.WriteFile(blobFile, orig, 0o644); err != nil {
						t.Error(err)
					}
				})
			},
			// Read again in each repository, since the first read proved
			// nothing: each reports it once.
			want: func() []string {
				var w []string
				for _, p := range l.Packages {
					w = append(w, p.Source+" digest "+p.Mirror+"@"+shared.String())
				}
				return w
			}(),
			gets: 1, sharedGets: sharedRepos},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.tamper != nil {
				tc.tamper(t)
			}
			wire.Reset()
			mirror.Reset()
			rep, err := verify.Verify(ctx, l, verify.Options{Registry: c, Deep: true, Concurrency: tc.jobs})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range rep.Problems {
				got = append(got, p.Package+" "+p.Kind+" "+p.Ref)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			gets, read := wire.Counts()
			for d := range blobs {
				want := tc.gets
				if d == shared {
					want = tc.sharedGets
				}
				if gets[d] != want {
					t.Errorf("blob %s (%d bytes) was read %d times, want %d", d, blobs[d], gets[d], want)
				}
			}
			if len(gets) != len(blobs) {
				t.Errorf("%d distinct blobs read, the graph has %d", len(gets), len(blobs))
			}
			wantBytes := unique + int64(tc.sharedGets-1)*blobs[shared]
			if read != wantBytes || rep.HashedBytes != wantBytes {
				t.Errorf("read %d bytes (report: %d), want %d (unique bytes %d)", read, rep.HashedBytes, wantBytes, unique)
			}
			if rep.UniqueBlobs != len(blobs) || rep.HashedBlobs != len(blobs)+tc.sharedGets-1 {
				t.Errorf("report: %d unique blobs, %d read; want %d, %d", rep.UniqueBlobs, rep.HashedBlobs, len(blobs), len(blobs)+tc.sharedGets-1)
			}
			// Every repository is still asked for every blob its packages
			// need: a HEAD proves it links the digest.
			heads := map[string]bool{}
			for _, r := range mirror.Requests() {
				if r.Method == http.MethodHead && strings.Contains(r.Path, "/blobs/") {
					heads[r.Path] = true
				}
			}
			for _, p := range l.Packages {
				repo := strings.TrimPrefix(p.Mirror, mirror.Host+"/")
				for _, d := range []digest.Digest{shared} {
					if path := "/v2/" + repo + "/blobs/" + d.String(); !heads[path] {
						t.Errorf("no HEAD %s", path)
					}
				}
			}
			if rep.Blobs != sharedRepos*5 {
				t.Errorf("checked %d blobs, want %d", rep.Blobs, sharedRepos*5)
			}
		})
	}

	t.Run("archive", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "closure.tar")
		if _, err := relocate.ToArchive(ctx, l, path, relocate.Options{Source: c, Concurrency: 2}, nil); err != nil {
			t.Fatal(err)
		}
		rep, err := verify.Archive(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() || rep.UniqueBlobs != len(blobs) || rep.HashedBlobs != len(blobs) || rep.HashedBytes != unique || rep.Blobs != sharedRepos*4 {
			t.Errorf("archive report: ok %v, %d blobs checked, %d unique, %d read, %d bytes read (unique bytes %d)", rep.OK(), rep.Blobs, rep.UniqueBlobs, rep.HashedBlobs, rep.HashedBytes, unique)
		}
	})
}
