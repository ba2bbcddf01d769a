package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	forkhandlers "github.com/ferryhq/ferry/internal/forked/distribution/registry/handlers"
)

// startWith starts ferry serve with opts in a fresh storage directory,
// around the registry handler build makes (newApp: ferry's copy;
// upstreamApp: the real distribution), and returns it and its root.
func startWith(t *testing.T, build func(context.Context, Options) (registryApp, error), opts Options) (*Server, string) {
	t.Helper()
	prev := newApp
	newApp = build
	defer func() { newApp = prev }()
	opts.Root, opts.Addr = t.TempDir(), "127.0.0.1:0"
	s, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, opts.Root
}

// storedFiles maps each file under root to its content, upload sessions
// (_uploads) apart: uploads lists the files left in sessions.
func storedFiles(t *testing.T, root string) (files map[string]string, uploads []string) {
	t.Helper()
	files = map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if strings.Contains(rel, string(filepath.Separator)+"_uploads"+string(filepath.Separator)) {
			uploads = append(uploads, rel)
			return nil
		}
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, uploads
}

// TestSinglePostPush pins ferry serve's one departure in what it answers
// (internal/forked/distribution UPSTREAM.md, patch 8): a POST
// /v2/NAME/blobs/uploads/?digest=D carrying the blob (the distribution
// spec's "Single POST") is completed, 201 with the blob's Location, where
// distribution ignores the digest and body and opens a session (202).
// What it stores is what distribution stores after POST then PUT of the
// same blob, byte for byte, and no session is left; a blob that does not
// match D is refused as distribution's PUT refuses it, and nothing is
// stored. With DistributionOnly (internal/registrytest's registries) it
// answers as distribution does.
func TestSinglePostPush(t *testing.T) {
	small := bytes.Repeat([]byte("ferry single post\n"), 3000)
	atMost := bytes.Repeat([]byte{7}, forkhandlers.SinglePostBuffered)
	large := bytes.Repeat([]byte("a blob streamed into a session in the POST\n"), forkhandlers.SinglePostBuffered/40)
	octet := map[string]string{"Content-Type": "application/octet-stream"}
	tests := []struct {
		name   string
		blob   []byte
		digest string
		// want is the status and error code ferry serve answers.
		want string
	}{
		{"small blob, stored without a session", small, digest.FromBytes(small).String(), "201"},
		{"blob of SinglePostBuffered bytes", atMost, digest.FromBytes(atMost).String(), "201"},
		{"larger blob, through a session in the request", large, digest.FromBytes(large).String(), "201"},
		{"small blob not matching its digest", small, digest.FromBytes(large).String(), "400 DIGEST_INVALID"},
		{"larger blob not matching its digest", large, digest.FromBytes(small).String(), "400 DIGEST_INVALID"},
		{"digest that does not parse", small, "sha256:not-hex", "400 DIGEST_INVALID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fork, forkRoot := startWith(t, newApp, Options{})
			fs := &paritySession{t: t, base: fork.URL()}
			resp, body := fs.do("single POST", "POST", "/v2/single/app/blobs/uploads/?digest="+tt.digest, octet, tt.blob)
			got := resp.Status[:3]
			if resp.StatusCode >= 400 {
				var e struct{ Errors []struct{ Code string } }
				if json.Unmarshal(body, &e) == nil && len(e.Errors) > 0 {
					got += " " + e.Errors[0].Code
				}
			}
			if got != tt.want {
				t.Fatalf("single POST: %s %s, want %s", resp.Status, body, tt.want)
			}
			files, uploads := storedFiles(t, forkRoot)
			if len(uploads) > 0 {
				t.Errorf("sessions left: %v", uploads)
			}
			if resp.StatusCode != http.StatusCreated {
				for f := range files {
					if strings.Contains(f, "/blobs/") || strings.Contains(f, "/_layers/") {
						t.Errorf("refused push stored %s", f)
					}
				}
				return
			}
			d := digest.FromBytes(tt.blob)
			if h := resp.Header.Get("Docker-Content-Digest"); h != d.String() {
				t.Errorf("Docker-Content-Digest %q, want %s", h, d)
			}
			if loc := resp.Header.Get("Location"); !strings.HasSuffix(loc, "/v2/single/app/blobs/"+d.String()) {
				t.Errorf("Location %q, want the blob's URL", loc)
			}
			if r, b := fs.do("get blob", "GET", "/v2/single/app/blobs/"+d.String(), nil, nil); r.StatusCode != http.StatusOK || !bytes.Equal(b, tt.blob) {
				t.Errorf("GET of the pushed blob: %s, %d bytes, want the blob's %d", r.Status, len(b), len(tt.blob))
			}

			// The same blob by POST then PUT into the real distribution.
			up, upRoot := startWith(t, upstreamApp, Options{})
			us := &paritySession{t: t, base: up.URL()}
			r, _ := us.do("start", "POST", "/v2/single/app/blobs/uploads/", nil, nil)
			if r, b := us.do("put", "PUT", withQuery(us.location(r), "digest", d.String()), octet, tt.blob); r.StatusCode != http.StatusCreated {
				t.Fatalf("upstream PUT: %s %s", r.Status, b)
			}
			want, _ := storedFiles(t, upRoot)
			if len(files) != len(want) {
				t.Errorf("ferry serve stored %d files, distribution %d", len(files), len(want))
			}
			for f, c := range want {
				if files[f] != c {
					t.Errorf("%s: ferry serve stored %d bytes, distribution %d (or not the same)", f, len(files[f]), len(c))
				}
			}
		})
	}

	t.Run("distribution only", func(t *testing.T) {
		for _, build := range []struct {
			name string
			app  func(context.Context, Options) (registryApp, error)
		}{{"ferry's copy", newApp}, {"upstream", upstreamApp}} {
			s, root := startWith(t, build.app, Options{DistributionOnly: true})
			ps := &paritySession{t: t, base: s.URL()}
			resp, body := ps.do("single POST", "POST", "/v2/single/app/blobs/uploads/?digest="+digest.FromBytes(small).String(), octet, small)
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("%s: %s %s, want 202 and a session", build.name, resp.Status, body)
			}
			files, _ := storedFiles(t, root)
			for f := range files {
				if strings.Contains(f, "/blobs/") {
					t.Errorf("%s: the ignored body was stored as %s", build.name, f)
				}
			}
			if r, b := ps.do("put", "PUT", withQuery(ps.location(resp), "digest", digest.FromBytes(small).String()), octet, small); r.StatusCode != http.StatusCreated {
				t.Errorf("%s: PUT into the session: %s %s", build.name, r.Status, b)
			}
		}
	})
}
