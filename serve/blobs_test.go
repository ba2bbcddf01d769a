package serve

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"
)

// TestBlobFiles checks that linked blobs are answered from their files
// with distribution's headers, ranges and conditional requests, and that
// everything else reaches distribution.
func TestBlobFiles(t *testing.T) {
	ctx := context.Background()
	srv, root, repo := startFilesServer(t)
	content := []byte("0123456789 a blob served from its file")
	d := digest.FromBytes(content)
	if err := repo.Push(ctx, ocispec.Descriptor{MediaType: "application/octet-stream", Digest: d, Size: int64(len(content))}, bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	// What distribution itself answers, for comparison.
	dist := srv.Registry()
	var passed []string
	files := storageFiles{root: root, next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		passed = append(passed, r.Method+" "+r.URL.Path)
		dist.ServeHTTP(w, r)
	})}
	blob := "/v2/a/b/blobs/" + d.String()
	tests := []struct {
		name       string
		method     string
		path       string
		header     http.Header
		wantStatus int
		wantBody   string
		passes     bool // reaches distribution
	}{
		{"get", http.MethodGet, blob, nil, http.StatusOK, string(content), false},
		{"head", http.MethodHead, blob, nil, http.StatusOK, "", false},
		{"range", http.MethodGet, blob, http.Header{"Range": {"bytes=2-5"}}, http.StatusPartialContent, "2345", false},
		{"etag", http.MethodGet, blob, http.Header{"If-None-Match": {`"` + d.String() + `"`}}, http.StatusNotModified, "", false},
		{"not linked here", http.MethodGet, "/v2/c/d/blobs/" + d.String(), nil, http.StatusNotFound, "", true},
		{"unknown blob", http.MethodGet, "/v2/a/b/blobs/" + digest.FromString("other").String(), nil, http.StatusNotFound, "", true},
		{"dot-dot name", http.MethodGet, "/v2/a/../a/b/blobs/" + d.String(), nil, 0, "", true},
		{"upper-case name", http.MethodGet, "/v2/A/b/blobs/" + d.String(), nil, 0, "", true},
		{"delete", http.MethodDelete, blob, nil, 0, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			passed = nil
			req := httptest.NewRequest(tc.method, blob, nil)
			req.URL.Path = tc.path
			for k, v := range tc.header {
				req.Header[k] = v
			}
			rec := httptest.NewRecorder()
			files.ServeHTTP(rec, req)
			if got := len(passed) > 0; got != tc.passes {
				t.Fatalf("reached distribution: %v, want %v (%v)", got, tc.passes, passed)
			}
			if tc.passes {
				if tc.wantStatus != 0 && rec.Code != tc.wantStatus {
					t.Fatalf("status %d, want %d", rec.Code, tc.wantStatus)
				}
				return
			}
			if rec.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d", rec.Code, tc.wantStatus)
			}
			if body, _ := io.ReadAll(rec.Body); string(body) != tc.wantBody {
				t.Fatalf("body %q, want %q", body, tc.wantBody)
			}
			if tc.wantStatus == http.StatusNotModified {
				return
			}
			// The headers distribution's ServeBlob sends, compared with
			// its own answer to the same request.
			ref := httptest.NewRecorder()
			dreq := httptest.NewRequest(tc.method, tc.path, nil)
			for k, v := range tc.header {
				dreq.Header[k] = v
			}
			dist.ServeHTTP(ref, dreq)
			if ref.Code != rec.Code {
				t.Fatalf("status %d, distribution's %d", rec.Code, ref.Code)
			}
			for _, h := range []string{"Docker-Content-Digest", "Content-Type", "Content-Length", "Content-Range", "ETag", "Cache-Control", "Accept-Ranges", "Docker-Distribution-Api-Version"} {
				if got, want := rec.Header().Get(h), ref.Header().Get(h); got != want {
					t.Errorf("%s: %q, distribution sends %q", h, got, want)
				}
			}
		})
	}
}

// startFilesServer starts a registry on loopback and returns it, its
// storage directory and its repository a/b.
func startFilesServer(t *testing.T) (*Server, string, *remote.Repository) {
	t.Helper()
	root := t.TempDir()
	srv, err := Start(context.Background(), Options{Root: root, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	repo, err := remote.NewRepository(srv.Addr + "/a/b")
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	return srv, root, repo
}
