package relocate_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"

	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

// TestMirrorTagsOfOneRepositoryPushSharedBlobsOnce mirrors several tags
// of one repository (as an images: selection locks them), whose images
// share two layers, copied at once: each blob is uploaded once, the
// copies of the other tags waiting for it instead of pushing the same
// bytes again (benchmark W6: 6 tags a repository pushed the shared
// layers up to 6 times).
func TestMirrorTagsOfOneRepositoryPushSharedBlobsOnce(t *testing.T) {
	ctx := context.Background()
	const tags = 6
	c := registrytest.Client(t)
	src := registrytest.New(t)
	repo := registrytest.Repository(t, c, src.Host+"/one/app")
	l := &lock.Lock{}
	for i := range tags {
		var layers []ocispec.Descriptor
		for _, seed := range []string{"base layer", "runtime layer", fmt.Sprintf("tag %d layer", i)} {
			d, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageLayer, []byte(seed+strings.Repeat(".", 4096)))
			if err != nil {
				t.Fatal(err)
			}
			layers = append(layers, d)
		}
		cfg, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageConfig, fmt.Appendf(nil, `{"architecture":"amd64","os":"linux","config":{"Labels":{"tag":"%d"}}}`, i))
		if err != nil {
			t.Fatal(err)
		}
		root, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{ConfigDescriptor: &cfg, Layers: layers})
		if err != nil {
			t.Fatal(err)
		}
		tag := fmt.Sprintf("1.%d.0", i)
		if err := repo.Tag(ctx, root, tag); err != nil {
			t.Fatal(err)
		}
		l.Packages = append(l.Packages, lock.Package{
			Source: src.Host + "/one/app", Version: tag,
			Digest: root.Digest.String(), MediaType: root.MediaType, Size: root.Size,
			Signatures: lock.Signatures{},
		})
	}
	// Slow uploads, so that every tag's copy is under way while the
	// shared layers are pushed.
	mirror := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads/") {
				time.Sleep(50 * time.Millisecond)
			}
			next.ServeHTTP(w, r)
		})
	}))
	to, err := relocate.ParseMapping(mirror.Host + "/m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := relocate.Mirror(ctx, l, relocate.Options{Source: c, To: to, Concurrency: 8, JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, r := range mirror.Requests() {
		kinds[requestKind(r)]++
	}
	t.Logf("%v", kinds)
	// 2 shared layers, and per tag its own layer and config.
	const blobs = 2 + 2*tags
	if kinds["PUT upload"] != blobs || kinds["POST upload"] != blobs {
		t.Errorf("%d upload POSTs and %d upload PUTs, want %d of each (each blob once)", kinds["POST upload"], kinds["PUT upload"], blobs)
	}
}
