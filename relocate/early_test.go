package relocate_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
)

// TestMirrorOpensUploadWhileReading mirrors with -j 1 from a source that
// answers each blob read only once the mirror has opened an upload
// session for it: a blob's session must be opened while its content is
// being read from the origin, not after (one round trip instead of two
// before the bytes move). Every session opened must then be the one the
// blob's content goes into: as many opened as completed, none cancelled.
func TestMirrorOpensUploadWhileReading(t *testing.T) {
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	var posts, reads, waitedOut int
	sessions := map[string]int{}
	mirror := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			upload := strings.Contains(r.URL.Path, "/blobs/uploads/")
			if upload && r.Method == http.MethodPost {
				mu.Lock()
				posts++
				cond.Broadcast()
				mu.Unlock()
			}
			countUploads(&mu, sessions, next).ServeHTTP(w, r)
		})
	}))
	src := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:") {
				mu.Lock()
				reads++
				n := reads
				// A guard against waiting for good, not a timing check:
				// the old order opens the session only after this read
				// is answered, so it never comes while the read waits.
				guard := time.AfterFunc(5*time.Second, func() {
					mu.Lock()
					waitedOut++
					posts = max(posts, n)
					cond.Broadcast()
					mu.Unlock()
				})
				for posts < n {
					cond.Wait()
				}
				mu.Unlock()
				guard.Stop()
			}
			next.ServeHTTP(w, r)
		})
	}))
	c := registrytest.Client(t)
	l := &lock.Lock{}
	for i := range 2 {
		l.Packages = append(l.Packages, pushImage(t, c, fmt.Sprintf("%s/early/app-%d", src.Host, i),
			[]byte(fmt.Sprintf("layer of app %d", i)), []byte(fmt.Sprintf(`{"architecture":"amd64","os":"linux","variant":"v%d"}`, i))))
	}
	if _, err := mirrorInto(t, l, mirror.Host); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if waitedOut > 0 {
		t.Errorf("%d of %d blob reads were answered only by the guard: no upload session was opened while they were read", waitedOut, reads)
	}
	// Besides, before copying, one session opened and cancelled to ask the
	// first repository, unknown to the registry, whether it takes pushes
	// (refusalGate.preflight).
	if reads != 4 || sessions["POST 202"] != 5 || sessions["PUT 201"] != 4 || sessions["DELETE 204"] != 1 || len(sessions) != 3 {
		t.Errorf("%d blob reads, upload requests by answer %v; want 4 reads, 4 sessions opened (POST 202) and completed (PUT 201), and the one probe (POST 202, DELETE 204), nothing else", reads, sessions)
	}
}

// TestMirrorCancelsUnusedUpload mirrors from a source that has lost a
// layer (its read answers 404): the session opened for the layer while it
// was read gets no content, and must be cancelled before the mirror
// returns, so that every session opened is completed or cancelled.
func TestMirrorCancelsUnusedUpload(t *testing.T) {
	var mu sync.Mutex
	sessions := map[string]int{}
	mirror := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return countUploads(&mu, sessions, next)
	}))
	var lost string
	src := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if lost != "" && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/blobs/"+lost) {
				http.Error(w, `{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry"}]}`, http.StatusNotFound)
				return
			}
			next.ServeHTTP(w, r)
		})
	}))
	c := registrytest.Client(t)
	layer := []byte("a layer the source has lost")
	p := pushImage(t, c, src.Host+"/early/lost", layer, []byte(`{"architecture":"amd64","os":"linux"}`))
	lost = digest.FromBytes(layer).String()
	_, err := mirrorInto(t, &lock.Lock{Packages: []lock.Package{p}}, mirror.Host)
	if err == nil || !strings.Contains(err.Error(), lost) {
		t.Fatalf("mirror: %v, want an error naming the lost layer %s", err, lost)
	}
	mu.Lock()
	defer mu.Unlock()
	opened, ended := sessions["POST 202"], sessions["PUT 201"]+sessions["DELETE 204"]
	if opened == 0 || opened != ended || sessions["DELETE 204"] == 0 {
		t.Errorf("upload requests by answer %v: want every session opened (POST 202) completed (PUT 201) or cancelled (DELETE 204), the lost layer's cancelled", sessions)
	}
}

// countUploads serves next, counting its answers to upload requests
// (…/blobs/uploads/…) in counts by "METHOD STATUS", under mu, as each
// answer's status is written: before the client can read it, so a count
// is complete once the client has its answers.
func countUploads(mu *sync.Mutex, counts map[string]int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/blobs/uploads/") {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&statusRecorder{ResponseWriter: w, onStatus: func(status int) {
			mu.Lock()
			counts[fmt.Sprintf("%s %d", r.Method, status)]++
			mu.Unlock()
		}}, r)
	})
}
