package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// TestStorageFiles checks that manifests and tag lists answered from the
// storage's files get distribution's status, headers and body, and that
// every case storageFiles does not take reaches distribution.
func TestStorageFiles(t *testing.T) {
	ctx := context.Background()
	srv, root, repo := startFilesServer(t)
	push := func(mediaType string, v any, tag string) ocispec.Descriptor {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		desc := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(b), Size: int64(len(b))}
		if err := repo.Push(ctx, desc, bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
		if tag != "" {
			if err := repo.Tag(ctx, desc, tag); err != nil {
				t.Fatal(err)
			}
		}
		return desc
	}
	config := push(ocispec.MediaTypeImageConfig, map[string]string{"architecture": "amd64", "os": "linux"}, "")
	image := push(ocispec.MediaTypeImageManifest, ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageManifest, Config: config, Layers: []ocispec.Descriptor{}}, "v1")
	index := push(ocispec.MediaTypeImageIndex, ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageIndex, Manifests: []ocispec.Descriptor{image}}, "idx")
	// An image manifest without mediaType: distribution guesses its type.
	untyped := push(ocispec.MediaTypeImageManifest, ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2},
		Config: config, Layers: []ocispec.Descriptor{}}, "untyped")

	dist := srv.Registry()
	var passed []string
	files := storageFiles{root: root, next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		passed = append(passed, r.Method+" "+r.URL.String())
		dist.ServeHTTP(w, r)
	})}
	acceptImage := http.Header{"Accept": {ocispec.MediaTypeImageManifest}}
	tests := []struct {
		name   string
		method string
		target string
		header http.Header
		passes bool // reaches distribution
	}{
		{"image by tag", http.MethodGet, "/v2/a/b/manifests/v1", acceptImage, false},
		{"image by digest", http.MethodGet, "/v2/a/b/manifests/" + image.Digest.String(), acceptImage, false},
		{"image head", http.MethodHead, "/v2/a/b/manifests/v1", acceptImage, false},
		{"image, accept with q and others", http.MethodGet, "/v2/a/b/manifests/v1",
			http.Header{"Accept": {"application/json; q=0.5, " + ocispec.MediaTypeImageManifest + "; q=0.9"}}, false},
		{"image, accept in a second header", http.MethodGet, "/v2/a/b/manifests/v1",
			http.Header{"Accept": {ocispec.MediaTypeImageIndex, ocispec.MediaTypeImageManifest}}, false},
		{"image not accepted", http.MethodGet, "/v2/a/b/manifests/v1", http.Header{"Accept": {ocispec.MediaTypeImageIndex}}, true},
		{"image, no accept", http.MethodGet, "/v2/a/b/manifests/v1", nil, true},
		{"index, no accept", http.MethodGet, "/v2/a/b/manifests/idx", nil, false},
		{"index accepted", http.MethodGet, "/v2/a/b/manifests/" + index.Digest.String(), http.Header{"Accept": {ocispec.MediaTypeImageIndex}}, false},
		{"untyped", http.MethodGet, "/v2/a/b/manifests/untyped", acceptImage, true},
		{"untyped by digest", http.MethodGet, "/v2/a/b/manifests/" + untyped.Digest.String(), acceptImage, true},
		{"etag", http.MethodGet, "/v2/a/b/manifests/v1", http.Header{"Accept": {ocispec.MediaTypeImageManifest}, "If-None-Match": {`"` + image.Digest.String() + `"`}}, true},
		{"unknown tag", http.MethodGet, "/v2/a/b/manifests/v2", acceptImage, true},
		{"unknown digest", http.MethodGet, "/v2/a/b/manifests/" + digest.FromString("x").String(), acceptImage, true},
		{"other repository", http.MethodGet, "/v2/c/d/manifests/v1", acceptImage, true},
		{"config is not a manifest here", http.MethodGet, "/v2/a/b/manifests/" + config.Digest.String(), acceptImage, true},
		{"delete", http.MethodDelete, "/v2/a/b/manifests/" + image.Digest.String(), nil, true},
		{"tags", http.MethodGet, "/v2/a/b/tags/list", nil, false},
		{"tags paged", http.MethodGet, "/v2/a/b/tags/list?n=1", nil, true},
		{"tags head", http.MethodHead, "/v2/a/b/tags/list", nil, true},
		{"tags of unknown repository", http.MethodGet, "/v2/c/d/tags/list", nil, true},
		{"blob", http.MethodGet, "/v2/a/b/blobs/" + config.Digest.String(), nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			passed = nil
			req := httptest.NewRequest(tc.method, tc.target, nil)
			req.Header = tc.header.Clone()
			rec := httptest.NewRecorder()
			files.ServeHTTP(rec, req)
			if got := len(passed) > 0; got != tc.passes {
				t.Fatalf("reached distribution: %v, want %v (%v)", got, tc.passes, passed)
			}
			if tc.passes {
				return
			}
			// distribution's own answer to the same request.
			ref := httptest.NewRecorder()
			dreq := httptest.NewRequest(tc.method, tc.target, nil)
			dreq.Header = tc.header.Clone()
			dist.ServeHTTP(ref, dreq)
			if rec.Code != ref.Code || rec.Code != http.StatusOK {
				t.Fatalf("status %d, distribution's %d", rec.Code, ref.Code)
			}
			got, _ := io.ReadAll(rec.Body)
			want, _ := io.ReadAll(ref.Body)
			if !bytes.Equal(got, want) {
				t.Fatalf("body %q, distribution's %q", got, want)
			}
			for k := range ref.Header() {
				if k == "Date" || k == "Accept-Ranges" || k == "Last-Modified" {
					continue // http.ServeContent's, for blobs
				}
				if g, w := rec.Header().Values(k), ref.Header().Values(k); len(g) != len(w) || (len(w) > 0 && g[0] != w[0]) {
					t.Errorf("%s: %q, distribution sends %q", k, g, w)
				}
			}
			for k := range rec.Header() {
				if _, ok := ref.Header()[k]; !ok && k != "Accept-Ranges" && k != "Last-Modified" {
					t.Errorf("%s: %q, distribution sends none", k, rec.Header().Values(k))
				}
			}
		})
	}
}
