package mixin

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/authtest"
	"github.com/ferryhq/ferry/mixin/mixintest"
	"github.com/ferryhq/ferry/serve"
)

// TestMirrorHandlerBehindAuth mounts a MirrorHandler in an embedded registry
// with htpasswd authentication: /mixins/ obeys it, and answers Porter's
// mirror protocol from the registry's content, read in process.
func TestMirrorHandlerBehindAuth(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pass := authtest.Secret(t)
	mm := NewMirrorHandler()
	rec := httptest.NewRecorder()
	mm.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/mixins/atom.xml", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("unbound: %d, want 503", rec.Code)
	}
	srv, err := serve.Start(ctx, serve.Options{
		Root: filepath.Join(dir, "root"), Addr: "127.0.0.1:0",
		Htpasswd: authtest.WriteHtpasswd(t, dir, map[string]string{"u": pass}),
		Extra:    map[string]http.Handler{"/mixins/": mm},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if err := mm.Bind(srv.Registry()); err != nil {
		t.Fatal(err)
	}

	// Push exec v1.2.3 under a prefix, with credentials.
	c, err := client.New(client.Options{RegistryConfig: authtest.WriteDockerConfig(t, t.TempDir(), srv.Addr, "u", pass)})
	if err != nil {
		t.Fatal(err)
	}
	fs := mixintest.NewFeed(t)
	feed, err := LoadFeed(ctx, c.HTTPClient(), fs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	bins := t.TempDir()
	locked, err := Fetch(ctx, c.HTTPClient(), feed, "exec", "v1.2.3", []string{"linux/amd64"}, nil, bins)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := c.Repository(srv.Addr + "/deep/prefix/porter-mixins/exec")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Push(ctx, repo, locked, bins, client.RetryPolicy{}); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name, path string
		auth       bool
		status     int
		body       []byte
		contains   string
	}{
		{name: "feed without credentials", path: "/mixins/atom.xml", status: http.StatusUnauthorized},
		{name: "binary without credentials", path: "/mixins/v1.2.3/exec-linux-amd64", status: http.StatusUnauthorized},
		{name: "feed", path: "/mixins/atom.xml", auth: true, status: http.StatusOK, contains: "<content>v1.2.3</content>"},
		{name: "binary", path: "/mixins/v1.2.3/exec-linux-amd64", auth: true, status: http.StatusOK, body: mixintest.Content("v1.2.3", "exec-linux-amd64")},
		{name: "unknown version", path: "/mixins/v9.9.9/exec-linux-amd64", auth: true, status: http.StatusNotFound},
		{name: "unknown platform", path: "/mixins/v1.2.3/exec-linux-s390x", auth: true, status: http.StatusNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL()+tt.path, nil)
			if tt.auth {
				req.SetBasicAuth("u", pass)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, b)
			}
			if tt.body != nil && !bytes.Equal(b, tt.body) {
				t.Errorf("body of %d bytes differs from the locked binary", len(b))
			}
			if tt.contains != "" && !strings.Contains(string(b), tt.contains) {
				t.Errorf("body lacks %q:\n%s", tt.contains, b)
			}
		})
	}
}
