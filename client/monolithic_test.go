package client_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestPushMonolithic pushes blobs by a POST carrying the blob
// (distribution-spec "Single POST") to a registry that completes it (201:
// a front giving distribution the POST and then the PUT, as zot answers),
// to distribution itself (202: the blob ignored, a session opened) and to
// one that refuses it (400). PushMonolithic returns no session after a
// 201, the 202's own session, or a new one after a 400; the blob is in
// the registry once that session's Put completes; the answer is
// remembered for the host, and the probe is claimed once at a time.
func TestPushMonolithic(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// answer is the front's status for a POST carrying a blob;
		// 0 passes it to distribution.
		answer      int
		wantSession bool
		want        client.MonolithicSupport
		// wantPOSTs are the upload POSTs the registry receives.
		wantPOSTs int
	}{
		{"completed", http.StatusCreated, false, client.MonolithicSupported, 1},
		{"ignored (distribution)", 0, true, client.MonolithicUnsupported, 1},
		{"refused", http.StatusBadRequest, true, client.MonolithicUnsupported, 2},
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
					if tt.answer != http.StatusCreated {
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(tt.answer)
						_, _ = io.WriteString(w, `{"errors":[{"code":"BLOB_UPLOAD_INVALID","message":"refused by the test"}]}`)
						return
					}
					post := r.Clone(r.Context())
					post.URL.RawQuery, post.Body, post.ContentLength = "", http.NoBody, 0
					rec := httptest.NewRecorder()
					next.ServeHTTP(rec, post)
					loc, err := url.Parse(rec.Header().Get("Location"))
					if rec.Code != http.StatusAccepted || err != nil {
						w.WriteHeader(http.StatusInternalServerError)
						return
					}
					lq := loc.Query()
					lq.Set("digest", q.Get("digest"))
					put := r.Clone(r.Context())
					put.Method, put.URL.Path, put.URL.RawQuery, put.RequestURI = http.MethodPut, loc.Path, lq.Encode(), ""
					next.ServeHTTP(w, put)
				})
			}))
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
			b := []byte("a blob pushed in one request " + tt.name)
			desc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageLayer, Digest: digest.FromBytes(b), Size: int64(len(b))}
			up, err := client.PushMonolithic(ctx, repo, desc, b)
			client.ReleaseMonolithicProbe(repo)
			if err != nil {
				t.Fatal(err)
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
