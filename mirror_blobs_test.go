package ferry_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/mirrorset"
)

// TestMirrorReadsResolvedConfigsOnce: a mirror run that resolves an
// images: selection reads, for the rollback check, the configs of the
// releases within one minor line; its copy takes them from that
// resolution instead of reading them again, so each config is read from
// the source once (W6: 80 GETs a run). A deep verification afterwards
// still reads every config from the mirror: what the mirror run read is
// never what verify checks.
func TestMirrorReadsResolvedConfigsOnce(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	repo, err := w.c.Repository(w.src.Host + "/img/app")
	if err != nil {
		t.Fatal(err)
	}
	var configs []ocispec.Descriptor
	for i, tag := range []string{"1.2.0", "1.2.1", "1.3.0"} {
		layer, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageLayer, []byte("layer "+tag))
		if err != nil {
			t.Fatal(err)
		}
		created := time.Date(2025, 1, i+1, 0, 0, 0, 0, time.UTC)
		cb, err := fixture.CanonicalJSON(ocispec.Image{Created: &created, Platform: ocispec.Platform{OS: "linux", Architecture: "amd64"},
			RootFS: ocispec.RootFS{Type: "layers", DiffIDs: []digest.Digest{layer.Digest}}})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageConfig, cb)
		if err != nil {
			t.Fatal(err)
		}
		configs = append(configs, cfg)
		mb, err := fixture.CanonicalJSON(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
			Config: cfg, Layers: []ocispec.Descriptor{layer}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := oras.TagBytes(ctx, repo, ocispec.MediaTypeImageManifest, mb, tag); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := mirrorset.Parse(fmt.Appendf(nil, "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nimages:\n  - ref: %s/img/app\n    tags: ['>=1.2.0']\n", w.src.Host))
	if err != nil {
		t.Fatal(err)
	}
	e := w.env()
	lockPath := filepath.Join(t.TempDir(), "ferry.lock")
	w.src.Reset()
	if _, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, Inputs: ms, LockPath: lockPath, To: w.mirror.Host + "/m", Hooks: (&recorder{}).hooks()}); err != nil {
		t.Fatal(err)
	}
	blobGets := func(reqs []registrytest.Request) map[string]int {
		n := map[string]int{}
		for _, r := range reqs {
			if r.Method == http.MethodGet && strings.Contains(r.Path, "/blobs/sha256:") {
				n[r.Path[strings.LastIndex(r.Path, "/")+1:]]++
			}
		}
		return n
	}
	// 1.2.1's check reads its and 1.2.0's configs; 1.3.0's (another
	// minor line) only the copy reads.
	src := blobGets(w.src.Requests())
	for i, c := range configs {
		if got := src[c.Digest.String()]; got != 1 {
			t.Errorf("config %d read %d times from the source, want 1", i, got)
		}
	}
	w.mirror.Reset()
	rep, err := ferry.Verify(ctx, ferry.VerifyOptions{Env: e, LockPath: lockPath, Deep: true, Hooks: (&recorder{}).hooks()})
	if err != nil || !rep.OK() {
		t.Fatalf("Verify --deep: %v %v", err, rep)
	}
	mirror := blobGets(w.mirror.Requests())
	for i, c := range configs {
		if mirror[c.Digest.String()] == 0 {
			t.Errorf("config %d not read from the mirror by verify --deep", i)
		}
	}
}
