package relocate_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/memory"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/serve"
)

// singlePolicy is how a mirror answers a blob upload POST that carries
// the blob (?digest=D and a body).
type singlePolicy int

const (
	// singleIgnored: CNCF distribution v3 as it is (Docker Hub, Harbor,
	// GitLab): the digest and body are ignored and a session opened, 202.
	singleIgnored singlePolicy = iota
	// singleCompleted: the upload is completed, 201, as the
	// distribution spec's "Single POST" describes and zot and ferry serve
	// do: the test's registry is ferry serve as it serves
	// (DistributionOnly unset).
	singleCompleted
	// singleRefused: 400, as a registry that takes no body on the POST
	// might answer.
	singleRefused
)

// singleWatch counts the upload requests a mirror receives, before its
// front answers single-request uploads by policy.
type singleWatch struct {
	policy singlePolicy
	mu     sync.Mutex
	// withDigest counts upload POSTs carrying ?digest= (single-request
	// uploads), plain the other upload POSTs, mounts the mount POSTs,
	// puts the PUTs into sessions, deletes the cancelled sessions.
	withDigest, plain, mounts, puts, deletes int
	// slowest is the longest the registry took to answer a POST
	// carrying a blob.
	slowest time.Duration
}

// reset forgets the counts.
func (w *singleWatch) reset() {
	w.mu.Lock()
	w.withDigest, w.plain, w.mounts, w.puts, w.deletes, w.slowest = 0, 0, 0, 0, 0, 0
	w.mu.Unlock()
}

func (w *singleWatch) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		upload := strings.Contains(r.URL.Path, "/blobs/uploads/")
		q := r.URL.Query()
		single := upload && r.Method == http.MethodPost && q.Has("digest")
		w.mu.Lock()
		switch {
		case single:
			w.withDigest++
		case upload && r.Method == http.MethodPost && q.Has("mount"):
			w.mounts++
		case upload && r.Method == http.MethodPost:
			w.plain++
		case upload && r.Method == http.MethodPut:
			w.puts++
		case upload && r.Method == http.MethodDelete:
			w.deletes++
		}
		w.mu.Unlock()
		if !single {
			next.ServeHTTP(rw, r)
			return
		}
		switch w.policy {
		case singleRefused:
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusBadRequest)
			_, _ = rw.Write([]byte(`{"errors":[{"code":"BLOB_UPLOAD_INVALID","message":"refused by the test"}]}`))
		default:
			began := time.Now()
			next.ServeHTTP(rw, r)
			w.mu.Lock()
			w.slowest = max(w.slowest, time.Since(began))
			w.mu.Unlock()
		}
	})
}

// TestMirrorSingleRequestUploads mirrors packages into registries that
// complete, ignore or refuse a blob upload POST carrying the blob
// (distribution-spec "Single POST"), twice with one client. The first
// small blob is the probe: a registry that completes it (ferry serve) gets
// every small blob in one request and no session (pushes that begin
// while the probe is under way wait for its answer); one that ignores it gets the
// probe's content in the session its 202 opened (no request is added),
// one that refuses it a plain session; either way the answer is
// remembered and no further POST carries a blob. Every package is whole
// in the mirror and no session is left open.
func TestMirrorSingleRequestUploads(t *testing.T) {
	ctx := context.Background()
	const n = 6
	src := registrytest.New(t)
	tests := []struct {
		name   string
		policy singlePolicy
	}{
		{"ignored (distribution)", singleIgnored},
		{"completed", singleCompleted},
		{"refused", singleRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := registrytest.Client(t)
			l, blobs := sharedClosure(t, c, src, n)
			watch := &singleWatch{policy: tt.policy}
			opts := []registrytest.Option{registrytest.WithWrap(watch.wrap)}
			if tt.policy == singleCompleted {
				opts = append(opts, func(o *serve.Options) { o.DistributionOnly = false })
			}
			mirror := registrytest.New(t, opts...)
			for run, prefix := range []string{"first", "second"} {
				to, err := relocate.ParseMapping(mirror.Host + "/" + prefix)
				if err != nil {
					t.Fatal(err)
				}
				watch.reset()
				pl := *l
				pl.Packages = append([]lock.Package(nil), l.Packages...)
				rep, err := relocate.Mirror(ctx, &pl, relocate.Options{Source: c, To: to, Concurrency: 4, JournalDir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				var copied, mounted int64
				for _, p := range rep.Packages {
					copied += p.Copied
					mounted += p.Mounted
				}
				for _, p := range pl.Resolved() {
					repo := registrytest.Repository(t, c, p.Mirror)
					if err := oras.CopyGraph(ctx, repo, memory.New(), p.Descriptor(), oras.CopyGraphOptions{}); err != nil {
						t.Errorf("%s: reading the mirror back: %v", p.Mirror, err)
					}
					if d, err := repo.Resolve(ctx, p.Version); err != nil || d.Digest.String() != p.Digest {
						t.Errorf("%s:%s -> %v, %v", p.Mirror, p.Version, d.Digest, err)
					}
				}
				w := watch
				w.mu.Lock()
				t.Logf("%s run: %d single-request POSTs, %d plain POSTs, %d mounts, %d session PUTs, %d DELETEs; %d nodes copied, %d mounted",
					prefix, w.withDigest, w.plain, w.mounts, w.puts, w.deletes, copied, mounted)
				// Blobs pushed: every blob of every repository not mounted.
				uploads := n*blobs - w.mounts
				// Before copying, the first repository, unknown to the
				// registry, is asked whether it takes pushes: one plain
				// POST and the DELETE of its session
				// (refusalGate.preflight). No other session is cancelled.
				if w.deletes != 1 {
					t.Errorf("%d upload sessions cancelled, want the preflight's one", w.deletes)
				}
				w.plain--
				switch {
				case tt.policy == singleCompleted && run == 1:
					// Known to complete them: every blob in one request.
					if w.withDigest != uploads || w.plain != 0 || w.puts != 0 {
						t.Errorf("%d single-request POSTs, %d plain POSTs, %d PUTs; want %d, 0, 0", w.withDigest, w.plain, w.puts, uploads)
					}
				case tt.policy == singleCompleted:
					// The probe, and pushes that began while it was
					// under way waited for its answer: every blob in one
					// request. Only a probe that outlasts the wait's cap
					// (client.MonolithicProbeWait, 1 s), on a machine
					// loaded far beyond a loopback push, lets those
					// pushes use sessions: checked strictly when the
					// registry answered each such POST in a quarter of
					// the cap.
					strict := w.slowest < client.MonolithicProbeWait/4
					if w.withDigest < 1 || w.withDigest+w.plain != uploads || w.puts != w.plain || (strict && w.plain != 0) {
						t.Errorf("%d single-request POSTs, %d plain POSTs, %d PUTs for %d uploads (the slowest single-request POST answered in %v)", w.withDigest, w.plain, w.puts, uploads, w.slowest)
					}
				case run == 0:
					// One probe; every blob then goes POST, PUT: into the
					// probe's 202 session, or for a refused probe a new one.
					want := uploads
					if tt.policy == singleRefused {
						want++
					}
					if w.withDigest != 1 || w.withDigest+w.plain != want || w.puts != uploads {
						t.Errorf("%d single-request POSTs, %d plain POSTs, %d PUTs; want 1, %d, %d", w.withDigest, w.plain, w.puts, want-1, uploads)
					}
				default:
					// The answer is remembered: no probe.
					if w.withDigest != 0 || w.plain != uploads || w.puts != uploads {
						t.Errorf("%d single-request POSTs, %d plain POSTs, %d PUTs; want 0, %d, %d", w.withDigest, w.plain, w.puts, uploads, uploads)
					}
				}
				w.mu.Unlock()
			}
		})
	}
}
