package client_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/memory"

	"github.com/ferryhq/ferry/client"
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
			// A client of its own: a Client remembers a refusal.
			c := registrytest.Client(t)
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

// TestMountRefusalRemembered: many blobs mounted at once through one
// Client into a registry that refuses mounts (a 202 with a fresh session,
// or a 403 or 404) send one mount request in all: the first goes alone,
// its refusal is remembered for the host and the others become plain
// uploads; every upload session opened is the one its upload completes.
// A registry that mounts gets every mount, and a transient failure (503)
// is no refusal: the mounts after it are still tried.
func TestMountRefusalRemembered(t *testing.T) {
	ctx := context.Background()
	const blobs = 12
	tests := []struct {
		name string
		// answer answers the nth mount POST (from 0) itself; it
		// returns false to let the registry answer.
		answer      func(n int, w http.ResponseWriter, r *http.Request) bool
		wantMounts  func(n int) bool
		wantMounted bool
	}{
		{"mounts allowed", func(int, http.ResponseWriter, *http.Request) bool { return false },
			// Each copy has two blobs: its layer and the empty config.
			func(n int) bool { return n == 2*blobs }, true},
		{"refused with a session", nil, func(n int) bool { return n == 1 }, false},
		{"refused 403", func(_ int, w http.ResponseWriter, _ *http.Request) bool {
			status(http.StatusForbidden)(w)
			return true
		}, func(n int) bool { return n == 1 }, false},
		{"refused 404", func(_ int, w http.ResponseWriter, _ *http.Request) bool {
			status(http.StatusNotFound)(w)
			return true
		}, func(n int) bool { return n == 1 }, false},
		{"503 is not a refusal", func(n int, w http.ResponseWriter, _ *http.Request) bool {
			if n == 0 {
				status(http.StatusServiceUnavailable)(w)
				return true
			}
			return false
		}, func(n int) bool { return n >= 2*blobs }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				mu      sync.Mutex
				mounts  int
				mounted int
				open    = map[string]bool{}
			)
			reg := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					post := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/blobs/uploads/")
					mount := post && r.URL.Query().Has("mount")
					if mount {
						mu.Lock()
						n := mounts
						mounts++
						mu.Unlock()
						if tt.answer == nil {
							// Refuse by opening a session instead.
							r = r.Clone(r.Context())
							r.URL.RawQuery = ""
							r.RequestURI = r.URL.RequestURI()
						} else if tt.answer(n, w, r) {
							return
						}
					}
					rec := &headerRecorder{ResponseWriter: w}
					next.ServeHTTP(rec, r)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case post && rec.status == http.StatusAccepted:
						if loc, err := url.Parse(w.Header().Get("Location")); err == nil {
							open[loc.Path] = true
						}
					case mount && rec.status == http.StatusCreated:
						mounted++
					case r.Method == http.MethodPut && rec.status == http.StatusCreated:
						delete(open, r.URL.Path)
					}
				})
			}))
			c := registrytest.Client(t)
			src := registrytest.Repository(t, c, reg.Host+"/r/src")
			var descs []ocispec.Descriptor
			for i := range blobs {
				descs = append(descs, pushManifest(t, src, []byte(fmt.Sprintf("%s layer %d", tt.name, i))))
			}
			mu.Lock()
			mounts, mounted = 0, 0
			clear(open)
			mu.Unlock()
			var wg sync.WaitGroup
			errs := make([]error, blobs)
			for i, desc := range descs {
				wg.Go(func() {
					dst := registrytest.Repository(t, c, fmt.Sprintf("%s/r/dst%d", reg.Host, i))
					opts := oras.CopyGraphOptions{MountFrom: func(context.Context, ocispec.Descriptor) ([]string, error) {
						return []string{src.Reference.Repository}, nil
					}}
					errs[i] = oras.CopyGraph(ctx, src, dst, desc, opts)
					if errs[i] == nil {
						_, errs[i] = oras.Copy(ctx, dst, desc.Digest.String(), memory.New(), "", oras.DefaultCopyOptions)
					}
				})
			}
			wg.Wait()
			if got := client.MountsRefused(src); got == tt.wantMounted {
				t.Errorf("MountsRefused = %v", got)
			}
			for i, err := range errs {
				if err != nil {
					t.Errorf("copy %d: %v", i, err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			t.Logf("%d blobs: %d mount requests, %d mounted, %d sessions open", blobs, mounts, mounted, len(open))
			if !tt.wantMounts(mounts) {
				t.Errorf("%d mount requests", mounts)
			}
			if tt.wantMounted != (mounted > 0) {
				t.Errorf("%d mounted", mounted)
			}
			if len(open) != 0 {
				t.Errorf("%d upload sessions left open: %v", len(open), open)
			}
		})
	}
}

// headerRecorder records the status a handler answered.
type headerRecorder struct {
	http.ResponseWriter
	status int
}

func (w *headerRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}
