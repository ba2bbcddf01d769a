package resolve_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/crossplane"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/internal/runblobs"
	"github.com/ferryhq/ferry/resolve"
)

// pushReleaseImage pushes an image whose config records created and whose
// manifest carries annotations, tagged tags.
func pushReleaseImage(t *testing.T, repo *remote.Repository, seed string, created time.Time, annotations map[string]string, tags ...string) {
	t.Helper()
	ctx := context.Background()
	push := func(mt string, b []byte) ocispec.Descriptor {
		d := ocispec.Descriptor{MediaType: mt, Digest: digest.FromBytes(b), Size: int64(len(b))}
		if ok, _ := repo.Exists(ctx, d); !ok {
			if err := repo.Push(ctx, d, bytes.NewReader(b)); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	layer := push(ocispec.MediaTypeImageLayer, []byte(seed))
	cfg, err := fixture.CanonicalJSON(ocispec.Image{Created: &created, Platform: ocispec.Platform{OS: "linux", Architecture: "amd64"},
		RootFS: ocispec.RootFS{Type: "layers", DiffIDs: []digest.Digest{layer.Digest}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := fixture.CanonicalJSON(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		Config: push(ocispec.MediaTypeImageConfig, cfg), Layers: []ocispec.Descriptor{layer}, Annotations: annotations})
	if err != nil {
		t.Fatal(err)
	}
	desc := push(ocispec.MediaTypeImageManifest, m)
	for _, tag := range tags {
		if err := repo.Tag(ctx, desc, tag); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReleaseRollback: for packages whose format records no version (a
// Crossplane xpkg, an image), a version tag holding an older release is
// refused with exit code 3: by the manifest's
// org.opencontainers.image.version annotation (*VersionMismatchError),
// else by the release below it (*OlderReleaseError: the same digest, or
// an image created before the lower patch of its minor line). Honest
// releases and a patch of an older line built later resolve, and an image
// named by an exact tag costs no tag list.
func TestReleaseRollback(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	h := reg.Host + "/rl/"
	repo := func(name string) *remote.Repository { return registrytest.Repository(t, c, h+name) }
	xpkg := func(name, xp string, tags ...string) {
		if _, err := fixture.PushXpkg(ctx, repo(name), fixture.Xpkg{Name: name, Kind: "Provider", Crossplane: xp, Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	xpkg("xp-moved", ">=v1.14.0", "v1.0.0", "v1.1.0")
	xpkg("xp-honest", ">=v1.14.0", "v1.0.0")
	xpkg("xp-honest", ">=v1.15.0", "v1.1.0")
	xpkg("xp-index", ">=v1.14.0", "v2.0.0")
	day := func(d int) time.Time { return time.Date(2025, 1, d, 0, 0, 0, 0, time.UTC) }
	pushReleaseImage(t, repo("img-moved"), "m", day(1), nil, "1.0.0", "1.1.0")
	pushReleaseImage(t, repo("img-annotated"), "a", day(1), map[string]string{ocispec.AnnotationVersion: "1.0.0"}, "1.1.0")
	pushReleaseImage(t, repo("img-dated"), "d1", day(10), nil, "1.2.0")
	pushReleaseImage(t, repo("img-dated"), "d2", day(2), nil, "1.2.1")
	pushReleaseImage(t, repo("img-backport"), "b1", day(2), nil, "1.1.0")
	pushReleaseImage(t, repo("img-backport"), "b2", day(10), nil, "1.0.5")

	type kind int
	const (
		passes kind = iota
		mismatch
		older
	)
	tests := []struct {
		name    string
		root    resolve.Root
		want    kind
		tag     string   // the root's tag, when it resolves
		errs    []string // what the refusal names
		noLists bool     // no tag list is read
	}{
		{"xpkg: a tag moved to an older release", resolve.Root{Ref: h + "xp-moved:v1.1.0"}, older, "",
			[]string{h + "xp-moved:v1.1.0", "older release than v1.0.0", "it is the digest tagged v1.0.0"}, false},
		{"xpkg: a range reaches the moved tag", resolve.Root{Ref: h + "xp-moved", Constraint: "^1.0"}, older, "", []string{"tag v1.1.0"}, false},
		{"xpkg: the honest tag below", resolve.Root{Ref: h + "xp-moved:v1.0.0"}, passes, "v1.0.0", nil, false},
		{"xpkg: honest releases", resolve.Root{Ref: h + "xp-honest", Constraint: "^1.0"}, passes, "v1.1.0", nil, false},
		{"xpkg: no release below", resolve.Root{Ref: h + "xp-index:v2.0.0"}, passes, "v2.0.0", nil, false},
		{"image: a range reaches a moved tag", resolve.Root{Ref: h + "img-moved", Constraint: "^1.0"}, older, "", []string{"tag 1.1.0", "the digest tagged 1.0.0"}, false},
		{"image: an exact tag costs no tag list", resolve.Root{Ref: h + "img-moved:1.1.0"}, passes, "1.1.0", nil, true},
		{"image: the version annotation", resolve.Root{Ref: h + "img-annotated:1.1.0"}, mismatch, "", []string{"names version 1.1.0", "declares version 1.0.0"}, true},
		{"image: created before the lower patch", resolve.Root{Ref: h + "img-dated", Constraint: "~1.2"}, older, "",
			[]string{"tag 1.2.1", "created 2025-01-02T00:00:00Z, before 1.2.0", "created 2025-01-10T00:00:00Z"}, false},
		{"image: a backport built later", resolve.Root{Ref: h + "img-backport", Constraint: "^1.0"}, passes, "1.1.0", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg.Reset()
			g, err := resolve.Resolve(ctx, []resolve.Root{tt.root}, resolve.Options{Registry: registrytest.Client(t), Formats: []format.Format{crossplane.Format{}}})
			if tt.noLists {
				for _, r := range reg.Requests() {
					if strings.HasSuffix(r.Path, "/tags/list") {
						t.Errorf("tag list read: %s", r.Path)
					}
				}
			}
			if tt.want == passes {
				if err != nil {
					t.Fatal(err)
				}
				if got := g.Packages[g.Roots[0]].Version; got != tt.tag {
					t.Errorf("root version = %q, want %q", got, tt.tag)
				}
				return
			}
			var oe *resolve.OlderReleaseError
			var ve *resolve.VersionMismatchError
			switch {
			case err == nil:
				t.Fatal("resolved, want a refusal")
			case tt.want == older && !errors.As(err, &oe), tt.want == mismatch && !errors.As(err, &ve):
				t.Fatalf("error %T: %v", err, err)
			}
			if code := exitcode.Of(err); code != exitcode.Mismatch {
				t.Errorf("exit code %d, want %d", code, exitcode.Mismatch)
			}
			for _, w := range tt.errs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestReleaseRollbackRequests pins what the rollback check of images
// costs the source: within a minor line the lower release's manifest is
// read by one GET of its tag (no HEAD first), each image's config is read
// once however many checks need its date, a lower release in another
// minor line costs one HEAD unless the resolution reads it anyway (2.0.1,
// below 2.1.0, is selected too: in whatever order the roots' reads and
// the checks run, no HEAD), and every config read is handed to
// Options.Blobs under the source, for a mirror run's copy.
func TestReleaseRollbackRequests(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	source := reg.Host + "/rl/img-reqs"
	repo := registrytest.Repository(t, c, source)
	day := func(d int) time.Time { return time.Date(2025, 1, d, 0, 0, 0, 0, time.UTC) }
	for i, tag := range []string{"1.1.0", "1.2.0", "1.2.1", "2.0.0-rc.1", "2.0.0", "2.0.1", "2.1.0"} {
		pushReleaseImage(t, repo, "s"+tag, day(i+1), nil, tag)
	}
	tests := []struct {
		name string
		root resolve.Root
		// configs is how many configs are read (each once); heads the
		// manifests resolved by HEAD; byTag the manifests read by a GET
		// of a tag the resolution does not lock.
		configs int
		heads   []string
		byTag   []string
	}{
		{"a selection over two minor lines and a prerelease", resolve.Root{Ref: source, Select: &resolve.TagSelection{Ranges: []string{">=1.2.0 <3.0.0"}}},
			5, []string{"1.1.0"}, []string{"2.0.0-rc.1"}},
		{"one tag, the lower release in its line", resolve.Root{Ref: source, Constraint: "~1.2"}, 2, nil, []string{"1.2.0"}},
		{"an exact tag: no tag list, nothing compared", resolve.Root{Ref: source + ":1.2.1"}, 0, nil, nil},
		{"a range, the lower release in another line", resolve.Root{Ref: source, Constraint: "~2.1"}, 0, []string{"2.0.1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg.Reset()
			blobs := runblobs.New()
			g, err := resolve.Resolve(ctx, []resolve.Root{tt.root}, resolve.Options{Registry: registrytest.Client(t), Formats: []format.Format{crossplane.Format{}}, Blobs: blobs})
			if err != nil {
				t.Fatal(err)
			}
			locked := map[string]bool{}
			for _, p := range g.Packages {
				locked[p.Version] = true
			}
			seen := map[string]bool{}
			var configs []string
			var heads, byTag []string
			for _, r := range reg.Requests() {
				_, ref, _ := strings.Cut(r.Path, "/rl/img-reqs/")
				switch {
				case r.Method == http.MethodGet && strings.HasPrefix(ref, "blobs/"):
					if seen[ref] {
						t.Errorf("config read twice: %s", ref)
					}
					seen[ref] = true
					configs = append(configs, strings.TrimPrefix(ref, "blobs/"))
				case r.Method == http.MethodHead && strings.HasPrefix(ref, "manifests/"):
					heads = append(heads, strings.TrimPrefix(ref, "manifests/"))
				case r.Method == http.MethodGet && strings.HasPrefix(ref, "manifests/") && !strings.HasPrefix(ref, "manifests/sha256:") && !locked[strings.TrimPrefix(ref, "manifests/")]:
					byTag = append(byTag, strings.TrimPrefix(ref, "manifests/"))
				case r.Method == http.MethodGet && strings.HasPrefix(ref, "manifests/sha256:"):
					t.Errorf("manifest read again by digest: %s", ref)
				}
			}
			if len(configs) != tt.configs {
				t.Errorf("%d configs read, want %d", len(configs), tt.configs)
			}
			if !slices.Equal(heads, tt.heads) {
				t.Errorf("HEAD of %q, want %q", heads, tt.heads)
			}
			slices.Sort(byTag)
			if !slices.Equal(byTag, tt.byTag) {
				t.Errorf("GET by tag of %q, want %q", byTag, tt.byTag)
			}
			for _, d := range configs {
				desc, err := repo.Blobs().Resolve(ctx, d)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := blobs.Get(source, desc); !ok {
					t.Errorf("config %s read but not handed to Options.Blobs", d)
				}
			}
		})
	}
}
