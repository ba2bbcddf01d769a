package client_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
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
		f.mu.Unlock()
		if inject {
			f.fail(w)
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

// reset hijacks the connection and closes it with a TCP reset.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
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
		{"connection reset", 2, reset},
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
		if total != 5 {
			t.Errorf("%d attempts, want 5 (the first and 4 retries)", total)
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

// TestWritesAreNotRetried: a POST or PUT that fails is reported, not
// repeated.
func TestWritesAreNotRetried(t *testing.T) {
	ctx := context.Background()
	f := &faults{counts: map[string]int{}}
	reg := registrytest.New(t, registrytest.WithWrap(f.wrap))
	repo, err := retryClient(t).Repository(reg.Host + "/w/blob")
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("not retried")
	desc := ocispec.Descriptor{MediaType: "application/octet-stream", Digest: digest.FromBytes(data), Size: int64(len(data))}
	for _, method := range []string{http.MethodPost, http.MethodPut} {
		t.Run(method, func(t *testing.T) {
			f.set(true, 1, status(http.StatusServiceUnavailable), func(r *http.Request) bool { return r.Method == method })
			defer f.set(false, 0, nil, nil)
			if err := repo.Push(ctx, desc, bytes.NewReader(data)); err == nil {
				t.Fatalf("push succeeded through a failing %s", method)
			}
			var writes int
			f.mu.Lock()
			for k, n := range f.counts {
				if strings.HasPrefix(k, method+" ") {
					writes += n
				}
			}
			f.mu.Unlock()
			if writes != 1 {
				t.Errorf("%s sent %d times, want 1", method, writes)
			}
		})
	}
}
