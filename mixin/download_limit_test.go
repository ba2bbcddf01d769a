package mixin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

// endless serves a body that never ends and counts the bytes it sent.
func endless(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var sent atomic.Int64
	chunk := []byte(strings.Repeat("x", 32<<10))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &sent
}

// TestDownloadLimits pins that a binary whose body never ends is cut at
// the size the lock records (a mismatch) or, with no lock yet, at
// MaxBinarySize, and that nothing of it is left in the directory.
func TestDownloadLimits(t *testing.T) {
	ctx := context.Background()
	hc := registrytest.Client(t).HTTPClient()
	srv, _ := endless(t)

	t.Run("locked size", func(t *testing.T) {
		dir := t.TempDir()
		l := &Locked{Name: "exec", Feed: srv.URL + "/atom.xml", Version: "v1.0.0", Binaries: map[string]Binary{
			"exec-linux-amd64": {Digest: "sha256:" + strings.Repeat("a", 64), Size: 1 << 20, URL: srv.URL + "/exec-linux-amd64"},
		}}
		err := FetchLocked(ctx, hc, l, dir, nil)
		if err == nil || !strings.Contains(err.Error(), "does not match ferry.lock: the body is longer than the 1048576 bytes") {
			t.Fatalf("error %v", err)
		}
		if code := exitcode.Of(err); code != exitcode.Mismatch {
			t.Errorf("exit code %d, want %d", code, exitcode.Mismatch)
		}
		if got := entries(t, dir); len(got) != 0 {
			t.Errorf("dir holds %q", got)
		}
	})

	t.Run("no lock yet", func(t *testing.T) {
		old := MaxBinarySize
		MaxBinarySize = 4 << 20
		t.Cleanup(func() { MaxBinarySize = old })
		fs := mixintest.NewFeed(t)
		feed, err := LoadFeed(ctx, hc, fs.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		f := File{Name: "exec-linux-amd64", URL: srv.URL + "/exec-linux-amd64"}
		tmp, _, err := download(ctx, hc, feed, f, dir, 0)
		if err == nil || !strings.Contains(err.Error(), "longer than 4194304 bytes") {
			t.Fatalf("error %v", err)
		}
		if tmp == "" {
			t.Fatal("no temporary file named for the caller to remove")
		}
	})
}
