package client_test

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestReadCache: within one Client, a manifest fetched by digest is
// fetched from the registry once per repository, whatever reads it again
// (a fetch, a resolve, an existence check), while tags, other repositories
// and a manifest whose bytes do not hash to its digest always go to the
// registry; and a registry without the referrers API is probed once per
// run, not once per repository.
func TestReadCache(t *testing.T) {
	ctx := context.Background()
	var corrupt atomic.Bool
	reg := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if corrupt.Load() && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/manifests/sha256:") {
				next.ServeHTTP(&flipWriter{ResponseWriter: w}, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}))
	pusher := registrytest.Client(t)
	// One manifest in two repositories: pushed to a, copied to b.
	repoA := registrytest.Repository(t, pusher, reg.Host+"/cache/a")
	d := pushManifest(t, repoA, []byte("same content"))
	if err := repoA.Tag(ctx, d, "v1"); err != nil {
		t.Fatal(err)
	}
	if _, err := oras.Copy(ctx, repoA, "v1", registrytest.Repository(t, pusher, reg.Host+"/cache/b"), "v1", oras.DefaultCopyOptions); err != nil {
		t.Fatal(err)
	}
	// A config-sized blob and a layer-sized one, in a.
	small, large := []byte(`{"architecture":"amd64","os":"linux"}`), bytes.Repeat([]byte("layer "), 4<<10)
	smallDesc, largeDesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageConfig, small), content.NewDescriptorFromBytes(ocispec.MediaTypeImageLayer, large)
	for _, b := range []struct {
		desc ocispec.Descriptor
		data []byte
	}{{smallDesc, small}, {largeDesc, large}} {
		if err := repoA.Push(ctx, b.desc, bytes.NewReader(b.data)); err != nil {
			t.Fatal(err)
		}
	}
	count := func(method, substr string) int {
		n := 0
		for _, r := range reg.Requests() {
			if r.Method == method && strings.Contains(r.Path, substr) {
				n++
			}
		}
		return n
	}
	tests := []struct {
		name    string
		corrupt bool
		// read reads through a fresh Client's repositories.
		read func(t *testing.T, open func(name string) registry.Repository) error
		// want are the requests the registry must have seen, by method
		// and path fragment.
		want map[[2]string]int
	}{
		{
			name: "fetched twice, resolved, checked: one GET",
			read: func(t *testing.T, open func(string) registry.Repository) error {
				r := open("a")
				for range 2 {
					if _, err := content.FetchAll(ctx, r, d); err != nil {
						return err
					}
				}
				if _, err := r.Resolve(ctx, d.Digest.String()); err != nil {
					return err
				}
				if ok, err := r.Exists(ctx, d); err != nil || !ok {
					t.Errorf("Exists: %v %v", ok, err)
				}
				// The same repository opened again shares the cache.
				_, err := content.FetchAll(ctx, open("a"), d)
				return err
			},
			want: map[[2]string]int{{"GET", "/cache/a/manifests/sha256:"}: 1, {"HEAD", "/cache/a/manifests/sha256:"}: 0},
		},
		{
			name: "a blob is read from the registry every time, however small (deep verification reads what the mirror holds)",
			read: func(t *testing.T, open func(string) registry.Repository) error {
				for range 2 {
					for _, d := range []ocispec.Descriptor{smallDesc, largeDesc} {
						got, err := content.FetchAll(ctx, open("a"), d)
						if err != nil {
							return err
						}
						if len(got) != int(d.Size) {
							t.Errorf("%s: read %d bytes, want %d", d.Digest, len(got), d.Size)
						}
					}
				}
				return nil
			},
			want: map[[2]string]int{{"GET", "/cache/a/blobs/" + smallDesc.Digest.String()}: 2, {"GET", "/cache/a/blobs/" + largeDesc.Digest.String()}: 2},
		},
		{
			name: "a repository's tags listed by 6 copies at once: one GET",
			read: func(t *testing.T, open func(string) registry.Repository) error {
				var g errgroup.Group
				for range 6 {
					g.Go(func() error {
						tags, err := registry.Tags(ctx, open("a"))
						if err == nil && !slices.Contains(tags, "v1") {
							t.Errorf("tags %v, want v1 among them", tags)
						}
						return err
					})
				}
				return g.Wait()
			},
			want: map[[2]string]int{{"GET", "/cache/a/tags/list"}: 1},
		},
		{
			name: "another repository is asked itself",
			read: func(t *testing.T, open func(string) registry.Repository) error {
				for _, n := range []string{"a", "b"} {
					if _, err := content.FetchAll(ctx, open(n), d); err != nil {
						return err
					}
				}
				return nil
			},
			want: map[[2]string]int{{"GET", "/cache/a/manifests/sha256:"}: 1, {"GET", "/cache/b/manifests/sha256:"}: 1},
		},
		{
			name: "a tag is always asked",
			read: func(t *testing.T, open func(string) registry.Repository) error {
				r := open("a")
				for range 2 {
					if _, _, err := r.FetchReference(ctx, "v1"); err != nil {
						return err
					}
				}
				return nil
			},
			want: map[[2]string]int{{"GET", "/cache/a/manifests/v1"}: 2},
		},
		{
			name: "read by tag, then by digest: the digest is not asked",
			read: func(t *testing.T, open func(string) registry.Repository) error {
				r := open("a")
				if _, _, err := r.FetchReference(ctx, "v1"); err != nil {
					return err
				}
				_, err := content.FetchAll(ctx, r, d)
				return err
			},
			want: map[[2]string]int{{"GET", "/cache/a/manifests/v1"}: 1, {"GET", "/cache/a/manifests/sha256:"}: 0},
		},
		{
			name: "a tag list is read once, and again after a push through the client",
			read: func(t *testing.T, open func(string) registry.Repository) error {
				r := open("a")
				list := func() error {
					return r.Tags(ctx, "", func([]string) error { return nil })
				}
				if err := list(); err != nil {
					return err
				}
				if err := list(); err != nil {
					return err
				}
				if err := r.Tag(ctx, d, "v2"); err != nil {
					return err
				}
				return list()
			},
			want: map[[2]string]int{{"GET", "/cache/a/tags/list"}: 2},
		},
		{
			name: "a cosign tag the tag list lacks is not asked; one it holds is",
			read: func(t *testing.T, open func(string) registry.Repository) error {
				r := open("a")
				if err := r.Tags(ctx, "", func([]string) error { return nil }); err != nil {
					return err
				}
				absent := "sha256-" + d.Digest.Encoded() + ".sig"
				if _, err := r.Resolve(ctx, absent); err == nil || !strings.Contains(err.Error(), "not found") {
					t.Errorf("Resolve(%s): %v, want not found", absent, err)
				}
				_, err := r.Resolve(ctx, "v1")
				return err
			},
			want: map[[2]string]int{{"GET", "/cache/a/tags/list"}: 1, {"HEAD", "/manifests/sha256-"}: 0, {"GET", "/manifests/sha256-"}: 0, {"HEAD", "/cache/a/manifests/v1"}: 1},
		},
		{
			name: "a manifest pushed through the client is not read back",
			read: func(t *testing.T, open func(string) registry.Repository) error {
				r := open("a")
				m := pushManifest(t, r.(*remote.Repository), []byte("pushed in this run"))
				if ok, err := r.Exists(ctx, m); err != nil || !ok {
					t.Errorf("Exists: %v %v", ok, err)
				}
				if err := r.Tag(ctx, m, "pushed"); err != nil {
					return err
				}
				_, err := content.FetchAll(ctx, r, m)
				return err
			},
			want: map[[2]string]int{{"PUT", "/cache/a/manifests/"}: 2, {"GET", "/cache/a/manifests/sha256:"}: 0, {"HEAD", "/cache/a/manifests/sha256:"}: 0},
		},
		{
			name:    "bytes that do not hash to the digest are never kept",
			corrupt: true,
			read: func(t *testing.T, open func(string) registry.Repository) error {
				r := open("a")
				for range 2 {
					if _, err := content.FetchAll(ctx, r, d); err == nil {
						t.Error("a corrupt manifest was accepted")
					}
				}
				return nil
			},
			want: map[[2]string]int{{"GET", "/cache/a/manifests/sha256:"}: 2},
		},
		{
			name: "one referrers probe per registry",
			read: func(t *testing.T, open func(string) registry.Repository) error {
				for _, n := range []string{"a", "b", "a"} {
					if err := open(n).(registry.ReferrerLister).Referrers(ctx, d, "", func([]ocispec.Descriptor) error { return nil }); err != nil {
						return err
					}
				}
				return nil
			},
			want: map[[2]string]int{{"GET", "/referrers/"}: 1},
		},
		{
			name: "one referrers probe per registry, asked at once",
			read: func(t *testing.T, open func(string) registry.Repository) error {
				errs := make(chan error, 8)
				for i := range 8 {
					r := open([]string{"a", "b"}[i%2])
					go func() {
						errs <- r.(registry.ReferrerLister).Referrers(ctx, d, "", func([]ocispec.Descriptor) error { return nil })
					}()
				}
				for range 8 {
					if err := <-errs; err != nil {
						return err
					}
				}
				return nil
			},
			want: map[[2]string]int{{"GET", "/referrers/"}: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			corrupt.Store(tt.corrupt)
			defer corrupt.Store(false)
			c := registrytest.Client(t)
			reg.Reset()
			err := tt.read(t, func(name string) registry.Repository {
				return registrytest.Repository(t, c, reg.Host+"/cache/"+name)
			})
			if err != nil {
				t.Fatal(err)
			}
			for k, n := range tt.want {
				if got := count(k[0], k[1]); got != n {
					t.Errorf("%s …%s…: %d requests, want %d (%v)", k[0], k[1], got, n, reg.Requests())
				}
			}
		})
	}
}

// flipWriter changes the first byte of a body, keeping its length.
type flipWriter struct {
	http.ResponseWriter
	done bool
}

func (w *flipWriter) Write(b []byte) (int, error) {
	if !w.done && len(b) > 0 {
		w.done = true
		c := append([]byte(nil), b...)
		c[0] ^= 0xff
		return w.ResponseWriter.Write(c)
	}
	return w.ResponseWriter.Write(b)
}
