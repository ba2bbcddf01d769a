package client_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/memory"

	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestRefusedMountUploads: a registry that refuses a cross-repository
// mount (401, 403 or 404 to POST .../blobs/uploads/?mount=) still gets the
// blob, uploaded instead; a registry that mounts gets no upload.
func TestRefusedMountUploads(t *testing.T) {
	ctx := context.Background()
	var (
		mu      sync.Mutex
		refuse  func(http.ResponseWriter)
		mounts  int
		uploads int
	)
	reg := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				mu.Lock()
				f := refuse
				if r.URL.Query().Has("mount") {
					mounts++
				} else {
					uploads++
					f = nil
				}
				mu.Unlock()
				if f != nil {
					f(w)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}))
	c := registrytest.Client(t)
	tests := []struct {
		name   string
		refuse func(http.ResponseWriter)
	}{
		{"mounted", nil},
		{"401", status(http.StatusUnauthorized)},
		{"401 basic challenge", status(http.StatusUnauthorized, "WWW-Authenticate", `Basic realm="test"`)},
		{"403", status(http.StatusForbidden)},
		{"404", status(http.StatusNotFound)},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := registrytest.Repository(t, c, fmt.Sprintf("%s/m/src%d", reg.Host, i))
			dst := registrytest.Repository(t, c, fmt.Sprintf("%s/m/dst%d", reg.Host, i))
			desc := pushManifest(t, src, []byte("mounted layer "+tt.name))
			mu.Lock()
			refuse, mounts, uploads = tt.refuse, 0, 0
			mu.Unlock()
			opts := oras.CopyGraphOptions{MountFrom: func(context.Context, ocispec.Descriptor) ([]string, error) {
				return []string{src.Reference.Repository}, nil
			}}
			if err := oras.CopyGraph(ctx, src, dst, desc, opts); err != nil {
				t.Fatalf("copy with mounts: %v", err)
			}
			mu.Lock()
			m, u := mounts, uploads
			mu.Unlock()
			if m == 0 {
				t.Fatal("no mount was tried")
			}
			if tt.refuse == nil && u != 0 {
				t.Errorf("%d uploads although the mounts succeeded", u)
			}
			if tt.refuse != nil && u == 0 {
				t.Error("no upload after the mounts were refused")
			}
			// The copy is whole: read it back from dst.
			if _, err := oras.Copy(ctx, dst, desc.Digest.String(), memory.New(), "", oras.DefaultCopyOptions); err != nil {
				t.Fatalf("reading the copy back: %v", err)
			}
		})
	}
}
