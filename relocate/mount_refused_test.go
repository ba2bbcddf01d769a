package relocate_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/memory"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

// mountPolicy is how a test registry answers a cross-repository mount
// (POST /v2/NAME/blobs/uploads/?mount=DIGEST&from=REPO).
type mountPolicy int

const (
	// mountAllow lets the registry mount (201).
	mountAllow mountPolicy = iota
	// mountSession refuses by opening a fresh upload session instead
	// (202 with a Location), as the distribution spec says a registry
	// that cannot mount should.
	mountSession
	// mountForbidden answers 403, as a registry does when the source
	// repository is in a project the credentials cannot read.
	mountForbidden
	// mountNotFound answers 404.
	mountNotFound
)

// uploadWatch sits in front of a test registry: it applies a mountPolicy
// and counts mount POSTs (per destination repository and digest), plain
// upload POSTs, and the upload sessions the registry opened (each 202's
// Location) and closed (the final PUT's 201, or a DELETE).
type uploadWatch struct {
	policy mountPolicy

	mu          sync.Mutex
	mounts      int
	mounted     int
	mountsPer   map[string]int // "REPO DIGEST" -> mount POSTs
	uploadPOSTs int
	// answered counts the requests the watch answered itself (403, 404).
	answered int
	open     map[string]bool // session path -> still open
}

func (u *uploadWatch) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		post := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/blobs/uploads/")
		isMount := post && r.URL.Query().Has("mount")
		if post {
			u.mu.Lock()
			if isMount {
				u.mounts++
				u.mountsPer[r.URL.Path+" "+r.URL.Query().Get("mount")]++
			} else {
				u.uploadPOSTs++
			}
			u.mu.Unlock()
		}
		if isMount {
			switch u.policy {
			case mountSession:
				r = r.Clone(r.Context())
				r.URL.RawQuery = ""
				r.RequestURI = r.URL.RequestURI()
			case mountForbidden:
				u.count()
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				fmt.Fprint(w, `{"errors":[{"code":"DENIED","message":"cross-repository mount not allowed"}]}`)
				return
			case mountNotFound:
				u.count()
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, `{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry"}]}`)
				return
			}
		}
		sw := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		u.mu.Lock()
		defer u.mu.Unlock()
		switch {
		case post && sw.status == http.StatusAccepted:
			if loc, err := url.Parse(sw.Header().Get("Location")); err == nil {
				u.open[loc.Path] = true
			}
		case isMount && sw.status == http.StatusCreated:
			u.mounted++
		case (r.Method == http.MethodPut && sw.status == http.StatusCreated) ||
			(r.Method == http.MethodDelete && sw.status == http.StatusNoContent):
			if strings.Contains(r.URL.Path, "/blobs/uploads/") {
				delete(u.open, r.URL.Path)
			}
		}
	})
}

func (u *uploadWatch) count() {
	u.mu.Lock()
	u.answered++
	u.mu.Unlock()
}

// statusRecorder keeps the status of the answer written through it and,
// when onStatus is set, tells it as the status is written: before the
// client can read the answer.
type statusRecorder struct {
	http.ResponseWriter
	status   int
	onStatus func(int)
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		if w.onStatus != nil {
			w.onStatus(code)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// sharedClosure pushes n packages to src, each in its own repository: an
// image whose config and two layers are the same in every repository, and
// one layer of its own. It returns their lock and the number of blobs each
// package has.
func sharedClosure(t *testing.T, c *client.Client, src *registrytest.Registry, n int) (*lock.Lock, int) {
	t.Helper()
	ctx := context.Background()
	l := &lock.Lock{}
	const blobs = 4
	for i := range n {
		repo := registrytest.Repository(t, c, fmt.Sprintf("%s/shared/app-%02d", src.Host, i))
		var layers []ocispec.Descriptor
		for _, seed := range []string{"base layer", "runtime layer", fmt.Sprintf("app %d layer", i)} {
			d, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageLayer, []byte(seed+strings.Repeat(".", 512)))
			if err != nil {
				t.Fatal(err)
			}
			layers = append(layers, d)
		}
		cfg, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageConfig, []byte(`{"architecture":"amd64","os":"linux"}`))
		if err != nil {
			t.Fatal(err)
		}
		root, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{
			ConfigDescriptor: &cfg, Layers: layers,
		})
		if err != nil {
			t.Fatal(err)
		}
		l.Packages = append(l.Packages, lock.Package{
			Source: repo.Reference.Registry + "/" + repo.Reference.Repository, Version: "v1",
			Digest: root.Digest.String(), MediaType: root.MediaType, Size: root.Size,
			Signatures: lock.Signatures{},
		})
	}
	return l, blobs
}

// TestMirrorMountsOnce mirrors packages that share blobs into many
// repositories of a registry that mounts, and of registries that refuse
// cross-repository mounts in each of the ways registries do. Each
// repository tries at most one mount per blob; once the registry has
// refused one, no other mount is tried; a refused mount's session carries
// the upload; and no upload session is left open.
func TestMirrorMountsOnce(t *testing.T) {
	ctx := context.Background()
	const n = 24
	c := registrytest.Client(t)
	src := registrytest.New(t)
	l, blobs := sharedClosure(t, c, src, n)
	// A package's blobs: 3 shared by all (config and two layers), 1 its
	// own; with its manifest, 5 nodes.
	const shared = 3
	tests := []struct {
		name   string
		policy mountPolicy
	}{
		{"mounts allowed", mountAllow},
		{"refused with a session", mountSession},
		{"refused 403", mountForbidden},
		{"refused 404", mountNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			watch := &uploadWatch{policy: tt.policy, mountsPer: map[string]int{}, open: map[string]bool{}}
			mirror := registrytest.New(t, registrytest.WithWrap(watch.wrap))
			to, err := relocate.ParseMapping(mirror.Host + "/m")
			if err != nil {
				t.Fatal(err)
			}
			pl := *l
			pl.Packages = append([]lock.Package(nil), l.Packages...)
			start := time.Now()
			rep, err := relocate.Mirror(ctx, &pl, relocate.Options{Source: c, To: to, Concurrency: 8})
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			sent := mirror.Requests()
			var mounted, copied int64
			for _, p := range rep.Packages {
				mounted += p.Mounted
				copied += p.Copied
			}
			// Every package is whole in the mirror.
			for _, p := range pl.Resolved() {
				repo := registrytest.Repository(t, c, p.Mirror)
				if err := oras.CopyGraph(ctx, repo, memory.New(), p.Descriptor(), oras.CopyGraphOptions{}); err != nil {
					t.Errorf("%s: reading the mirror back: %v", p.Mirror, err)
				}
				if d, err := repo.Resolve(ctx, p.Version); err != nil || d.Digest.String() != p.Digest {
					t.Errorf("%s:%s -> %v, %v", p.Mirror, p.Version, d.Digest, err)
				}
			}
			kinds := map[string]int{}
			for _, r := range sent {
				kinds[requestKind(r)]++
			}
			watch.mu.Lock()
			defer watch.mu.Unlock()
			t.Logf("%d repositories in %v: %d requests to the mirror (%d answered by the registry: %v); %d mount POSTs (%d mounted), %d upload POSTs; report: %d mounted, %d copied; %d sessions open",
				n, took.Round(time.Millisecond), len(sent)+watch.answered, len(sent), kinds, watch.mounts, watch.mounted, watch.uploadPOSTs, mounted, copied, len(watch.open))
			for k, v := range watch.mountsPer {
				if v > 1 {
					t.Errorf("%d mount POSTs for %s", v, k)
				}
			}
			if len(watch.open) != 0 {
				t.Errorf("%d upload sessions left open", len(watch.open))
			}
			// Every blob of every repository is uploaded or mounted once,
			// and every upload session opened (by a plain POST or by a
			// refused mount) is the one its upload went into.
			if want := int64(n * (blobs + 1)); mounted+copied != want {
				t.Errorf("mounted %d + copied %d nodes, want %d", mounted, copied, want)
			}
			switch tt.policy {
			case mountAllow:
				if mounted == 0 || int64(watch.mounted) != mounted {
					t.Errorf("registry mounted %d, report %d", watch.mounted, mounted)
				}
				if want := (n - 1) * shared; watch.mounts > want {
					t.Errorf("%d mount POSTs, want at most %d", watch.mounts, want)
				}
			default:
				if mounted != 0 || watch.mounted != 0 {
					t.Errorf("mounted %d (registry %d) although the registry refuses", mounted, watch.mounted)
				}
				// One refusal, remembered: no other mount is tried.
				if watch.mounts != 1 {
					t.Errorf("%d mount POSTs, want 1", watch.mounts)
				}
				// As many upload sessions as blobs uploaded, plus the
				// fresh session a 403 or 404 refusal takes, plus the one
				// opened and cancelled before copying to ask the first
				// repository, unknown to the registry, whether it takes
				// pushes (refusalGate.preflight).
				want := n*blobs + 1
				if tt.policy != mountSession {
					want++
				}
				if got := watch.uploadPOSTs + watch.mounts; got != want {
					t.Errorf("%d upload and mount POSTs, want %d", got, want)
				}
			}
		})
	}
}

// requestKind names a request for counting: method and what it addresses.
func requestKind(r registrytest.Request) string {
	switch {
	case strings.Contains(r.Path, "/blobs/uploads/"):
		return r.Method + " upload"
	case strings.Contains(r.Path, "/blobs/"):
		return r.Method + " blob"
	case strings.Contains(r.Path, "/manifests/"):
		return r.Method + " manifest"
	case strings.Contains(r.Path, "/tags/list"):
		return r.Method + " tags"
	case strings.Contains(r.Path, "/referrers/"):
		return r.Method + " referrers"
	}
	return r.Method + " " + path.Base(r.Path)
}
