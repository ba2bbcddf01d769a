package relocate_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/internal/runblobs"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

// TestMirrorBlobsReadAtResolution: a package copied from its own source
// repository takes the blobs resolution read (Options.Blobs) without
// asking the source again, and the mirror gets the same bytes; copied
// from another origin (a mirror to mirror run), or with no Blobs, or when
// the blobs were read from another repository, it reads them from its
// origin as before.
func TestMirrorBlobsReadAtResolution(t *testing.T) {
	ctx := context.Background()
	c := registrytest.Client(t)
	src := registrytest.New(t)
	source := src.Host + "/rb/app"
	other := src.Host + "/rb/other"
	repo := registrytest.Repository(t, c, source)
	layer, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageLayer, []byte("layer "+strings.Repeat(".", 1024)))
	if err != nil {
		t.Fatal(err)
	}
	cfgBytes := []byte(`{"architecture":"amd64","os":"linux","created":"2025-01-01T00:00:00Z"}`)
	cfg, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageConfig, cfgBytes)
	if err != nil {
		t.Fatal(err)
	}
	root, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{ConfigDescriptor: &cfg, Layers: []ocispec.Descriptor{layer}})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, root, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	// The same image under another repository, the origin of a mirror
	// to mirror run.
	if err := oras.CopyGraph(ctx, repo, registrytest.Repository(t, c, other), root, oras.DefaultCopyGraphOptions); err != nil {
		t.Fatal(err)
	}
	held := func(from string) *runblobs.Cache {
		b := runblobs.New()
		if !b.Put(from, cfg, cfgBytes) {
			t.Fatal("config not kept")
		}
		return b
	}
	tests := []struct {
		name       string
		blobs      *runblobs.Cache
		origin     string // "" reads the package's source
		wantConfig int    // GETs of the config at the origin
	}{
		{"read at resolution: not read again", held(source), "", 0},
		{"no blobs: read from the source", nil, "", 1},
		{"read from another repository: read from the source", held(other), "", 1},
		{"another origin: read from it", held(source), other, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mirror := registrytest.New(t)
			to, err := relocate.ParseMapping(mirror.Host + "/m")
			if err != nil {
				t.Fatal(err)
			}
			l := &lock.Lock{Packages: []lock.Package{{Source: source, Version: "1.0.0", Digest: root.Digest.String(), MediaType: root.MediaType, Size: root.Size, Signatures: lock.Signatures{}}}}
			opts := relocate.Options{Source: c, To: to, Concurrency: 4, JournalDir: t.TempDir(), Blobs: tt.blobs}
			if tt.origin != "" {
				opts.Origin = func(*lock.Package) string { return tt.origin }
			}
			src.Reset()
			if _, err := relocate.Mirror(ctx, l, opts); err != nil {
				t.Fatal(err)
			}
			reads := map[string]int{}
			for _, r := range src.Requests() {
				if r.Method == http.MethodGet && strings.Contains(r.Path, "/blobs/") {
					reads[r.Path[strings.LastIndex(r.Path, "/")+1:]]++
				}
			}
			if got := reads[cfg.Digest.String()]; got != tt.wantConfig {
				t.Errorf("config read %d times at the origin, want %d (blob reads: %v)", got, tt.wantConfig, reads)
			}
			if got := reads[layer.Digest.String()]; got != 1 {
				t.Errorf("layer read %d times, want 1", got)
			}
			got, err := content.FetchAll(ctx, registrytest.Repository(t, c, mirror.Host+"/m/rb/app"), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(cfgBytes) {
				t.Errorf("mirror's config = %q, want %q", got, cfgBytes)
			}
		})
	}
}
