package relocate_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

// TestMirrorSchedulesMetadataApart mirrors two packages with -j 1 from a
// source that holds every manifest read of the first package until a
// blob of the second has been read, and the second package's manifest
// reads until the first package's has arrived: the first package, waiting
// on its metadata, must hold neither the run's one blob slot nor keep the
// second package from starting or reading its manifests, so the second
// package's blobs go meanwhile.
func TestMirrorSchedulesMetadataApart(t *testing.T) {
	ctx := context.Background()
	var armed atomic.Bool
	var once, first sync.Once
	released, arrived := make(chan struct{}), make(chan struct{})
	hold := func(w http.ResponseWriter, until chan struct{}) bool {
		select {
		case <-until:
			return true
		case <-time.After(30 * time.Second): // a guard against a hang, not a timing check
			http.Error(w, "held for good: the other package did not get its turn", http.StatusBadRequest)
			return false
		}
	}
	src := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case !armed.Load() || r.Method != http.MethodGet:
			case strings.Contains(r.URL.Path, "/shared/app-00/manifests/"):
				first.Do(func() { close(arrived) })
				if !hold(w, released) {
					return
				}
			case strings.Contains(r.URL.Path, "/shared/app-01/manifests/"):
				if !hold(w, arrived) {
					return
				}
			case strings.Contains(r.URL.Path, "/shared/app-01/blobs/"):
				once.Do(func() { close(released) })
			}
			next.ServeHTTP(w, r)
		})
	}))
	l, _ := sharedClosure(t, registrytest.Client(t), src, 2)
	armed.Store(true)
	mirror := registrytest.New(t)
	to, err := relocate.ParseMapping(mirror.Host + "/m")
	if err != nil {
		t.Fatal(err)
	}
	// A client of its own: the one that pushed answers its own pushes
	// from its cache.
	if _, err := relocate.Mirror(ctx, l, relocate.Options{Source: registrytest.Client(t), To: to, Concurrency: 1, JournalDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-released:
	default:
		t.Error("the second package read no blob")
	}
}

// TestMirrorHoldsNoBlobSlotWhileWaiting mirrors two packages with -j 1 into
// a registry that holds the answer to the first upload session a blob asks
// for until another blob's bytes have arrived: the first blob, waiting on
// the network, must not hold the run's one blob slot, or no other blob's
// bytes could move.
func TestMirrorHoldsNoBlobSlotWhileWaiting(t *testing.T) {
	var sessions atomic.Int32
	arrived := make(chan struct{})
	var once sync.Once
	mirror := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			// The first session is the probe before copying, asking the
			// first repository, unknown to the registry, whether it takes
			// pushes (refusalGate.preflight); the second is the first
			// blob's.
			case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/blobs/uploads/") && sessions.Add(1) == 2:
				select {
				case <-arrived:
				case <-time.After(30 * time.Second): // a guard against a hang, not a timing check
					http.Error(w, "held for good: no other blob's bytes arrived while this upload waited", http.StatusBadRequest)
					return
				}
			case r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads/"):
				body, err := io.ReadAll(r.Body)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
				once.Do(func() { close(arrived) })
			}
			next.ServeHTTP(w, r)
		})
	}))
	src := registrytest.New(t)
	c := registrytest.Client(t)
	l := &lock.Lock{}
	for i := range 2 {
		l.Packages = append(l.Packages, pushImage(t, c, fmt.Sprintf("%s/apart/app-%d", src.Host, i),
			[]byte(fmt.Sprintf("layer of app %d", i)), []byte(fmt.Sprintf(`{"architecture":"amd64","os":"linux","variant":"v%d"}`, i))))
	}
	rep, err := mirrorInto(t, l, mirror.Host)
	if err != nil {
		t.Fatal(err)
	}
	var copied int64
	for _, p := range rep.Packages {
		copied += p.Copied
	}
	if got := sessions.Load(); got != 5 || copied != 6 {
		t.Errorf("%d upload sessions and %d nodes copied, want 5 (the probe and 4 blobs) and 6", got, copied)
	}
}

// TestMirrorRetriesAPushCutShort mirrors with -j 1 into a registry that
// answers the first blob content pushed with a 503 after reading a little
// of it: the failed try, its bytes stopped short of the end, must give
// back the run's one blob slot, which the new try reads the content again
// within.
func TestMirrorRetriesAPushCutShort(t *testing.T) {
	ctx := context.Background()
	var cut atomic.Bool
	mirror := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads/") && r.ContentLength > 1<<20 && cut.CompareAndSwap(false, true) {
				_, _ = io.CopyN(io.Discard, r.Body, 64<<10)
				w.Header().Set("Connection", "close")
				http.Error(w, "cut short", http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(w, r)
		})
	}))
	src := registrytest.New(t)
	c := registrytest.Client(t)
	big := bytes.Repeat([]byte("layer bytes "), (16<<20)/12)
	l := &lock.Lock{Packages: []lock.Package{pushImage(t, c, src.Host+"/cut/app", big, []byte(`{"architecture":"amd64","os":"linux"}`))}}
	done := make(chan error, 1)
	go func() {
		_, err := mirrorInto(t, l, mirror.Host)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second): // a guard against a hang, not a timing check
		t.Fatal("the retried push never got a blob slot")
	}
	if !cut.Load() {
		t.Fatal("no push was cut short")
	}
	layer := digest.FromBytes(big)
	got, err := registrytest.Repository(t, c, mirror.Host+"/m/cut/app").Blobs().Resolve(ctx, layer.String())
	if err != nil || got.Size != int64(len(big)) {
		t.Errorf("layer in the mirror: %v, %v", got, err)
	}
}

// pushImage pushes an image of one layer and config to the repository
// ref names in a source registry, and returns its lock entry (tag v1).
func pushImage(t *testing.T, c *client.Client, ref string, layer, config []byte) lock.Package {
	t.Helper()
	ctx := context.Background()
	repo := registrytest.Repository(t, c, ref)
	ld, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageLayer, layer)
	if err != nil {
		t.Fatal(err)
	}
	cd, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageConfig, config)
	if err != nil {
		t.Fatal(err)
	}
	root, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{ConfigDescriptor: &cd, Layers: []ocispec.Descriptor{ld}})
	if err != nil {
		t.Fatal(err)
	}
	return lock.Package{
		Source: repo.Reference.Registry + "/" + repo.Reference.Repository, Version: "v1",
		Digest: root.Digest.String(), MediaType: root.MediaType, Size: root.Size, Signatures: lock.Signatures{},
	}
}

// mirrorInto mirrors l into the registry at host, under m/, with -j 1.
func mirrorInto(t *testing.T, l *lock.Lock, host string) (*relocate.Report, error) {
	t.Helper()
	to, err := relocate.ParseMapping(host + "/m")
	if err != nil {
		t.Fatal(err)
	}
	return relocate.Mirror(context.Background(), l, relocate.Options{Source: registrytest.Client(t), To: to, Concurrency: 1, JournalDir: t.TempDir()})
}
