package client_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/serve"
)

// TestPushMonolithic pushes blobs by a POST carrying the blob
// (distribution-spec "Single POST") to a registry that completes it (201:
// ferry serve, as zot), to distribution itself (202: the blob ignored, a
// session opened) and to one that refuses it (400). PushMonolithic
// returns no session after a 201, the 202's own session, or a new one
// after a 400; the blob is in the registry once that session's Put
// completes; the answer is remembered for the host, the probe is claimed
// once at a time, and AwaitMonolithicProbe returns the answer once the
// probe ends.
func TestPushMonolithic(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// answer is the front's status for a POST carrying a blob;
		// 0 passes it to the registry: distribution, or ferry serve
		// where ferryServe is set.
		answer      int
		ferryServe  bool
		wantSession bool
		want        client.MonolithicSupport
		// wantPOSTs are the upload POSTs the registry receives.
		wantPOSTs int
	}{
		{"completed (ferry serve)", 0, true, false, client.MonolithicSupported, 1},
		{"ignored (distribution)", 0, false, true, client.MonolithicUnsupported, 1},
		{"refused", http.StatusBadRequest, false, true, client.MonolithicUnsupported, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			posts := 0
			reg := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					q := r.URL.Query()
					if r.Method == http.MethodPost {
						mu.Lock()
						posts++
						mu.Unlock()
					}
					if r.Method != http.MethodPost || !q.Has("digest") || tt.answer == 0 {
						next.ServeHTTP(w, r)
						return
					}
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(tt.answer)
					_, _ = io.WriteString(w, `{"errors":[{"code":"BLOB_UPLOAD_INVALID","message":"refused by the test"}]}`)
				})
			}), func(o *serve.Options) { o.DistributionOnly = !tt.ferryServe })
			c := registrytest.Client(t)
			repo := registrytest.Repository(t, c, reg.Host+"/single/blob")
			if got := client.MonolithicUploads(repo); got != client.MonolithicUnknown {
				t.Fatalf("support %v before any push, want unknown", got)
			}
			if !client.ClaimMonolithicProbe(repo) {
				t.Fatal("the first probe was not granted")
			}
			if client.ClaimMonolithicProbe(repo) {
				t.Fatal("a second probe was granted while the first is under way")
			}
			// A push that finds the probe under way waits for its
			// answer, unless its context ends first.
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if got := client.AwaitMonolithicProbe(cancelled, repo); got != client.MonolithicUnknown {
				t.Errorf("awaited with an ended context: %v, want unknown", got)
			}
			awaited := make(chan client.MonolithicSupport, 1)
			go func() { awaited <- client.AwaitMonolithicProbe(ctx, repo) }()
			b := []byte("a blob pushed in one request " + tt.name)
			desc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageLayer, Digest: digest.FromBytes(b), Size: int64(len(b))}
			began := time.Now()
			up, err := client.PushMonolithic(ctx, repo, desc, b)
			// The wait is capped (MonolithicProbeWait): on a machine so
			// loaded that the push took half of it, the wait may end
			// first, and what it returns is not checked.
			inTime := time.Since(began) < client.MonolithicProbeWait/2
			select {
			case got := <-awaited:
				if inTime {
					t.Fatalf("the wait ended (%v) before the probe did", got)
				}
			default:
			}
			client.ReleaseMonolithicProbe(repo)
			if err != nil {
				t.Fatal(err)
			}
			if got := <-awaited; got != tt.want && inTime {
				t.Errorf("awaited %v, want %v", got, tt.want)
			}
			if (up != nil) != tt.wantSession {
				t.Fatalf("session %v, want %v", up != nil, tt.wantSession)
			}
			if up != nil {
				if err := up.Put(ctx, desc, bytes.NewReader(b)); err != nil {
					t.Fatal(err)
				}
			}
			if ok, err := repo.Exists(ctx, desc); err != nil || !ok {
				t.Fatalf("blob in the registry: %v, %v", ok, err)
			}
			if got := client.MonolithicUploads(repo); got != tt.want {
				t.Errorf("support %v, want %v", got, tt.want)
			}
			if client.ClaimMonolithicProbe(repo) {
				t.Error("a probe was granted once the answer is known")
			}
			mu.Lock()
			defer mu.Unlock()
			if posts != tt.wantPOSTs {
				t.Errorf("%d upload POSTs, want %d", posts, tt.wantPOSTs)
			}
		})
	}
}
