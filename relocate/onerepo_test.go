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
//
// With two repositories, whose tags share the base layer too, copies
// into the second wait for the first repository's push of it: a claim
// taken over by another tag's copy left them waiting forever (ferry
// mirror of W6's lock hung); the copy must end well within its deadline.
func TestMirrorTagsOfOneRepositoryPushSharedBlobsOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const tags, repos = 6, 2
	c := registrytest.Client(t)
	src := registrytest.New(t)
	l := &lock.Lock{}
	for k := range repos {
		repo := registrytest.Repository(t, c, fmt.Sprintf("%s/one/app-%d", src.Host, k))
		for i := range tags {
			var layers []ocispec.Descriptor
			for _, seed := range []string{"base layer", fmt.Sprintf("repository %d layer", k), fmt.Sprintf("repository %d tag %d layer", k, i)} {
				d, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageLayer, []byte(seed+strings.Repeat(".", 4096)))
				if err != nil {
					t.Fatal(err)
				}
				layers = append(layers, d)
			}
			cfg, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageConfig, fmt.Appendf(nil, `{"architecture":"amd64","os":"linux","config":{"Labels":{"tag":"%d-%d"}}}`, k, i))
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
				Source: fmt.Sprintf("%s/one/app-%d", src.Host, k), Version: tag,
				Digest: root.Digest.String(), MediaType: root.MediaType, Size: root.Size,
				Signatures: lock.Signatures{},
			})
		}
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
	// Pushed once: the base layer, each repository's layer, and per tag
	// its own layer and config. The base is mounted into the second
	// repository (a POST alone), by one or more of its tags' copies: a
	// mount takes no claim.
	const blobs = 1 + repos + 2*tags*repos
	if kinds["PUT upload"] != blobs {
		t.Errorf("%d upload PUTs, want %d (each blob pushed once)", kinds["PUT upload"], blobs)
	}
	if mounts := kinds["POST upload"] - kinds["PUT upload"]; mounts < repos-1 || mounts > tags*(repos-1) {
		t.Errorf("%d mounts, want %d to %d", mounts, repos-1, tags*(repos-1))
	}
}
