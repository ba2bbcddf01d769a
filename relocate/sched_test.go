package relocate_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferryhq/ferry/internal/registrytest"
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
