package relocate_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/memory"

	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestMirrorUploadChallengedStartsOver mirrors into a registry that asks
// for a bearer token (an auth challenge, as when a token expires between
// an upload's POST and its content) on the first blob content pushed, a
// body ferry streams and cannot send again: the push must start over with
// a new session, which the token now answers, the abandoned session must
// be cancelled, and the mirror must hold every node. The probe of
// single-request uploads (client.PushMonolithic) is not challenged: its
// content is buffered and sent again within its session.
func TestMirrorUploadChallengedStartsOver(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var challenged bool
	opened := map[string]int{} // upload sessions by state: "open", "done", "cancelled"
	var tokens int
	// probes are the sessions opened by a POST carrying a blob (the
	// probe of single-request uploads), by upload path.
	probes := map[string]bool{}
	mirror := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/token" {
				mu.Lock()
				tokens++
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"token":"fresh"}`)
				return
			}
			upload := strings.Contains(r.URL.Path, "/blobs/uploads/")
			mu.Lock()
			first := upload && r.Method == http.MethodPut && !challenged && !probes[r.URL.Path]
			if first {
				challenged = true
			}
			mu.Unlock()
			if first {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="http://%s/token",service="mirror"`, r.Host))
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"token expired"}]}`, http.StatusUnauthorized)
				return
			}
			if !upload {
				next.ServeHTTP(w, r)
				return
			}
			// Counted as each answer's status is written, before the
			// client can read it.
			next.ServeHTTP(&statusRecorder{ResponseWriter: w, onStatus: func(status int) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case r.Method == http.MethodPost && status == http.StatusAccepted:
					opened["open"]++
					if r.URL.Query().Has("digest") {
						if loc, err := url.Parse(w.Header().Get("Location")); err == nil {
							probes[loc.Path] = true
						}
					}
				case r.Method == http.MethodPut && status == http.StatusCreated:
					opened["done"]++
				case r.Method == http.MethodDelete && status/100 == 2:
					opened["cancelled"]++
				}
			}}, r)
		})
	}))
	src := registrytest.New(t)
	l, blobs := sharedClosure(t, registrytest.Client(t), src, 1)
	rep, err := mirrorInto(t, l, mirror.Host)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if !challenged || tokens == 0 {
		t.Fatalf("challenged %v, %d tokens asked for: the challenge was not met", challenged, tokens)
	}
	// Besides the blobs' sessions and the one the challenge ended, the
	// probe before copying: a session opened and cancelled to ask the
	// repository, unknown to the registry, whether it takes pushes
	// (refusalGate.preflight).
	if opened["open"] != blobs+2 || opened["done"] != blobs || opened["cancelled"] != 2 {
		t.Errorf("upload sessions %v, want %d opened, %d completed, 2 cancelled", opened, blobs+2, blobs)
	}
	if got := rep.Packages[0].Copied; got != int64(blobs+1) {
		t.Errorf("%d nodes copied, want %d", got, blobs+1)
	}
	mu.Unlock()
	c := registrytest.Client(t)
	for _, p := range l.Resolved() {
		repo := registrytest.Repository(t, c, p.Mirror)
		if err := oras.CopyGraph(ctx, repo, memory.New(), p.Descriptor(), oras.CopyGraphOptions{}); err != nil {
			t.Errorf("%s: reading the mirror back: %v", p.Mirror, err)
		}
	}
}
