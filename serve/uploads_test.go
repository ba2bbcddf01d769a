package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestUploadHashStates pins the copy's one departure in how uploads are
// stored (internal/forked/distribution UPSTREAM.md, patch 7): an upload's
// POST writes no hash state (upstream writes, and syncs, the state at
// offset 0, which nothing reads), while a chunk still stores the state at
// its end, so that a chunked upload across requests resumes its digest as
// upstream's does. Both registries must answer the same and keep the
// blob.
func TestUploadHashStates(t *testing.T) {
	chunks := [][]byte{bytes.Repeat([]byte("a"), 1000), bytes.Repeat([]byte("b"), 24)}
	all := bytes.Join(chunks, nil)
	dgst := fmt.Sprintf("sha256:%x", sha256.Sum256(all))
	for _, tc := range []struct {
		name  string
		build func(context.Context, Options) (registryApp, error)
		// states are the hash states on disk after the POST and after
		// each chunk, by offset.
		states [][]string
	}{
		{"ferry's copy", newApp, [][]string{nil, {"1000"}, {"1000", "1024"}}},
		{"upstream", upstreamApp, [][]string{{"0"}, {"0", "1000"}, {"0", "1000", "1024"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, root := startWith(t, tc.build, Options{})
			states := func() []string {
				var offsets []string
				_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() && strings.Contains(p, string(filepath.Separator)+"hashstates"+string(filepath.Separator)) {
						offsets = append(offsets, d.Name())
					}
					return nil
				})
				slices.SortFunc(offsets, func(a, b string) int { // numerically
					if len(a) != len(b) {
						return len(a) - len(b)
					}
					return strings.Compare(a, b)
				})
				return offsets
			}
			ps := &paritySession{t: t, base: s.URL()}
			do := func(method, loc string, body []byte, want int) string {
				t.Helper()
				resp, b := ps.do(method, method, loc, map[string]string{"Content-Type": "application/octet-stream"}, body)
				if resp.StatusCode != want {
					t.Fatalf("%s %s: %d %s, want %d", method, loc, resp.StatusCode, b, want)
				}
				if want == http.StatusAccepted {
					return ps.location(resp)
				}
				return ""
			}
			loc := do(http.MethodPost, "/v2/app/blobs/uploads/", nil, http.StatusAccepted)
			if got := states(); !slices.Equal(got, tc.states[0]) {
				t.Errorf("after the POST: hash states at %v, want %v", got, tc.states[0])
			}
			for i, c := range chunks {
				loc = do(http.MethodPatch, loc, c, http.StatusAccepted)
				if got := states(); !slices.Equal(got, tc.states[i+1]) {
					t.Errorf("after chunk %d: hash states at %v, want %v", i+1, got, tc.states[i+1])
				}
			}
			sep := "?"
			if strings.Contains(loc, "?") {
				sep = "&"
			}
			do(http.MethodPut, loc+sep+"digest="+url.QueryEscape(dgst), nil, http.StatusCreated)
			_, got := ps.do("get", http.MethodGet, "/v2/app/blobs/"+dgst, nil, nil)
			if !bytes.Equal(got, all) {
				t.Errorf("blob holds %d bytes, want the %d uploaded", len(got), len(all))
			}
		})
	}
}
