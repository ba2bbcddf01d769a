package client_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/faultproxy"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/resolve"
)

// faults fails the first n requests of each METHOD+path it selects, the
// way fail says, and counts every request.
type faults struct {
	mu     sync.Mutex
	on     bool
	n      int
	fail   func(w http.ResponseWriter)
	match  func(r *http.Request) bool
	counts map[string]int
}

func (f *faults) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.Path
		f.mu.Lock()
		f.counts[key]++
		inject := f.on && f.match(r) && f.counts[key] <= f.n
		fail := f.fail
		f.mu.Unlock()
		if inject {
			fail(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (f *faults) set(on bool, n int, fail func(http.ResponseWriter), match func(*http.Request) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.on, f.n, f.fail, f.match, f.counts = on, n, fail, match, map[string]int{}
}

func (f *faults) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[key]
}

func status(code int, header ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte(`{"errors":[{"code":"UNAVAILABLE","message":"injected"}]}`))
	}
}

func isV2Get(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v2/") && r.URL.Path != "/v2/"
}

func retryClient(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(client.Options{
		RegistryConfig: filepath.Join(t.TempDir(), "config.json"),
		Backoff:        time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRetriesIdempotentRequests resolves a bundle with a dependency while
// every GET of every object fails first: the resolution still succeeds.
func TestRetriesIdempotentRequests(t *testing.T) {
	ctx := context.Background()
	f := &faults{counts: map[string]int{}}
	reg := registrytest.New(t, registrytest.WithWrap(f.wrap))
	h := reg.Host
	c := retryClient(t)
	for _, b := range []struct {
		path string
		b    fixture.Bundle
	}{
		{"r/db", fixture.Bundle{Name: "db", Version: "1.0.0", Tags: []string{"v1.0.0"}}},
		{"r/app", fixture.Bundle{Name: "app", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"web"},
			Deps: []fixture.Dep{{Name: "db", Bundle: h + "/r/db:v1.0.0", Ranges: []string{"^1.0"}}}}},
	} {
		repo, err := c.Repository(h + "/" + b.path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fixture.PushBundle(ctx, repo, h+"/"+b.path, b.b); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		n    int
		fail func(http.ResponseWriter)
	}{
		{"503", 2, status(http.StatusServiceUnavailable)},
		{"500", 1, status(http.StatusInternalServerError)},
		{"429 Retry-After 0", 2, status(http.StatusTooManyRequests, "Retry-After", "0")},
		{"connection reset", 2, faultproxy.ResetConn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.set(true, tt.n, tt.fail, isV2Get)
			defer f.set(false, 0, nil, nil)
			g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: h + "/r/app:v1.0.0"}}, resolve.Options{
				Registry: retryClient(t), Formats: []format.Format{porter.Reader{}},
			})
			if err != nil {
				t.Fatalf("resolve with injected faults: %v", err)
			}
			if len(g.Packages) != 2 || g.Packages[h+"/r/db"].Version != "v1.0.0" {
				t.Fatalf("resolved %v", g.Sources())
			}
			if n := f.count("GET /v2/r/db/tags/list"); n != tt.n+1 {
				t.Errorf("tag list requested %d times, want %d (failures + 1)", n, tt.n+1)
			}
		})
	}

	t.Run("gives up", func(t *testing.T) {
		f.set(true, 100, status(http.StatusServiceUnavailable), func(r *http.Request) bool {
			return isV2Get(r) || r.Method == http.MethodHead
		})
		defer f.set(false, 0, nil, nil)
		repo, err := retryClient(t).Repository(h + "/r/db")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := repo.Resolve(ctx, "v1.0.0"); err == nil {
			t.Fatal("resolve succeeded against a registry that always fails")
		}
		var total int
		f.mu.Lock()
		for k, n := range f.counts {
			if strings.HasPrefix(k, "HEAD /v2/r/db/manifests/") || strings.HasPrefix(k, "GET /v2/r/db/manifests/") {
				total += n
			}
		}
		f.mu.Unlock()
		if want := client.DefaultRetryPolicy.Attempts; total != want {
			t.Errorf("%d attempts, want %d (the first and %d retries)", total, want, want-1)
		}
	})

	t.Run("not found is not retried", func(t *testing.T) {
		f.set(false, 0, nil, nil)
		repo, err := retryClient(t).Repository(h + "/r/db")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := repo.Resolve(ctx, "v9.9.9"); err == nil {
			t.Fatal("resolved a missing tag")
		}
		if n := f.count("HEAD /v2/r/db/manifests/v9.9.9") + f.count("GET /v2/r/db/manifests/v9.9.9"); n != 1 {
			t.Errorf("a 404 was requested %d times", n)
		}
	})
}

// TestWrites: a request the transport can send again (the POST that
// starts an upload, a manifest PUT) is retried; a blob upload PUT is not
// replayed by the transport, and its failure is transient (IsTransient) so
// that the copy layer retries the whole push. Each retry is logged once,
// without query or header values.
func TestWrites(t *testing.T) {
	ctx := context.Background()
	f := &faults{counts: map[string]int{}}
	reg := registrytest.New(t, registrytest.WithWrap(f.wrap))
	isUploadPut := func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads/")
	}
	tests := []struct {
		name     string
		fail     func(http.ResponseWriter)
		match    func(*http.Request) bool
		manifest bool // push a manifest, not a blob
		ok       bool // the push succeeds
		sent     int  // requests the fault matched
	}{
		{name: "upload POST 503", fail: status(http.StatusServiceUnavailable),
			match: func(r *http.Request) bool { return r.Method == http.MethodPost }, ok: true, sent: 2},
		{name: "upload POST reset", fail: faultproxy.ResetConn,
			match: func(r *http.Request) bool { return r.Method == http.MethodPost }, ok: true, sent: 2},
		{name: "manifest PUT 502", fail: status(http.StatusBadGateway), manifest: true,
			match: func(r *http.Request) bool { return r.Method == http.MethodPut }, ok: true, sent: 2},
		{name: "manifest PUT reset", fail: faultproxy.ResetConn, manifest: true,
			match: func(r *http.Request) bool { return r.Method == http.MethodPut }, ok: true, sent: 2},
		{name: "blob PUT 503", fail: status(http.StatusServiceUnavailable), match: isUploadPut, sent: 1},
		{name: "blob PUT reset", fail: faultproxy.ResetConn, match: isUploadPut, sent: 1},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			c, err := client.New(client.Options{
				RegistryConfig: filepath.Join(t.TempDir(), "config.json"),
				Retry:          client.RetryPolicy{Backoff: time.Millisecond},
				Log:            slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			})
			if err != nil {
				t.Fatal(err)
			}
			repo := registrytest.Repository(t, c, reg.Host+"/w/blob")
			data := []byte(fmt.Sprintf("write %d", i))
			desc := ocispec.Descriptor{MediaType: "application/octet-stream", Digest: digest.FromBytes(data), Size: int64(len(data))}
			if tt.manifest {
				desc = pushManifest(t, repo, data)
			}
			f.set(true, 1, tt.fail, tt.match)
			defer f.set(false, 0, nil, nil)
			if tt.manifest {
				err = repo.Manifests().PushReference(ctx, desc, bytes.NewReader(manifestBytes(t, repo, desc)), fmt.Sprintf("t%d", i))
			} else {
				err = repo.Push(ctx, desc, bytes.NewReader(data))
			}
			switch {
			case tt.ok && err != nil:
				t.Fatalf("push through one failure: %v", err)
			case !tt.ok && err == nil:
				t.Fatal("push succeeded through a failing blob PUT")
			case !tt.ok && !client.IsTransient(err):
				t.Errorf("blob PUT failure %q is not transient", err)
			}
			f.mu.Lock()
			var sent int
			for k, n := range f.counts {
				var r http.Request
				r.Method, r.URL = strings.Fields(k)[0], mustURL(t, strings.Fields(k)[1])
				if tt.match(&r) {
					sent += n
				}
			}
			f.mu.Unlock()
			if sent != tt.sent {
				t.Errorf("sent %d times, want %d", sent, tt.sent)
			}
			retries := strings.Count(logs.String(), `msg="retrying `)
			if want := tt.sent - 1; retries != want {
				t.Errorf("%d retry log lines, want %d:\n%s", retries, want, logs.String())
			}
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, `msg="retrying `) && (strings.Contains(line, "?") || !strings.Contains(line, reg.Host+"/v2/w/blob/")) {
					t.Errorf("retry log line without the URL or with a query: %s", line)
				}
			}
		})
	}
}

// TestRetryPolicyOptions: Retry-After is honoured up to MaxRetryAfter (an hour
// asked for does not hang the test), and Attempts 1 sends once.
func TestRetryPolicyOptions(t *testing.T) {
	ctx := context.Background()
	f := &faults{counts: map[string]int{}}
	reg := registrytest.New(t, registrytest.WithWrap(f.wrap))
	repo := registrytest.Repository(t, retryClient(t), reg.Host+"/p/img")
	desc := pushManifest(t, repo, []byte("policy"))
	if err := repo.Tag(ctx, desc, "v1"); err != nil {
		t.Fatal(err)
	}
	isManifest := func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/manifests/") }
	tests := []struct {
		name   string
		policy client.RetryPolicy
		fail   func(http.ResponseWriter)
		ok     bool
		sent   int
	}{
		{"Retry-After seconds capped", client.RetryPolicy{MaxRetryAfter: time.Millisecond},
			status(http.StatusTooManyRequests, "Retry-After", "3600"), true, 2},
		{"Retry-After date capped", client.RetryPolicy{MaxRetryAfter: time.Millisecond},
			status(http.StatusServiceUnavailable, "Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)), true, 2},
		{"408", client.RetryPolicy{Backoff: time.Millisecond}, status(http.StatusRequestTimeout), true, 2},
		{"no retries", client.RetryPolicy{Attempts: 1}, status(http.StatusServiceUnavailable), false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := client.New(client.Options{RegistryConfig: filepath.Join(t.TempDir(), "config.json"), Retry: tt.policy})
			if err != nil {
				t.Fatal(err)
			}
			repo := registrytest.Repository(t, c, reg.Host+"/p/img")
			f.set(true, 1, tt.fail, isManifest)
			defer f.set(false, 0, nil, nil)
			_, err = repo.Resolve(ctx, "v1")
			if tt.ok != (err == nil) {
				t.Fatalf("resolve: %v, want success %v", err, tt.ok)
			}
			if n := f.count("HEAD /v2/p/img/manifests/v1") + f.count("GET /v2/p/img/manifests/v1"); n != tt.sent {
				t.Errorf("sent %d times, want %d", n, tt.sent)
			}
			if got := c.RetryPolicy().Attempts; tt.policy.Attempts != 0 && got != tt.policy.Attempts {
				t.Errorf("RetryPolicy().Attempts = %d, want %d", got, tt.policy.Attempts)
			}
		})
	}
}

// pushManifest pushes a one-layer image whose layer is data and returns
// the manifest's descriptor.
func pushManifest(t *testing.T, repo *remote.Repository, data []byte) ocispec.Descriptor {
	t.Helper()
	ctx := context.Background()
	ld := content.NewDescriptorFromBytes("application/vnd.test.layer", data)
	if err := repo.Push(ctx, ld, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "application/vnd.test",
		oras.PackManifestOptions{Layers: []ocispec.Descriptor{ld}})
	if err != nil {
		t.Fatal(err)
	}
	return desc
}

// manifestBytes reads a manifest back.
func manifestBytes(t *testing.T, repo *remote.Repository, desc ocispec.Descriptor) []byte {
	t.Helper()
	b, err := content.FetchAll(context.Background(), repo, desc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
