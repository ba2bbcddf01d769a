package client_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/faultproxy"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// loggedClient returns a client with policy whose log, at the default
// level (info), goes to the returned buffer.
func loggedClient(t *testing.T, policy client.RetryPolicy) (*client.Client, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	c, err := client.New(client.Options{RegistryConfig: filepath.Join(t.TempDir(), "config.json"), Retry: policy,
		Log: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return c, logs
}

// TestStorageRefusalsNotRetried: a registry with no room (distribution's
// 500 "no space left on device", Harbor's 403 quota, 507, 413), put in
// front of a real registry by the fault proxy, refuses a blob's upload and
// a manifest's push once each: the client sends each write once, within
// the policy's retries of the operation as a whole too, returns a
// *StorageError naming the registry's answer that IsTransient refuses,
// and logs no retry.
func TestStorageRefusalsNotRetried(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		kind faultproxy.Kind
		want []string
	}{
		{faultproxy.DiskFull, []string{"500 Internal Server Error", "no space left on device", "out of storage or over its quota"}},
		{faultproxy.Quota, []string{"403 Forbidden", "Quota exceeded when processing the request", "over its quota"}},
		{faultproxy.InsufficientStorage, []string{"507 Insufficient Storage"}},
		{faultproxy.TooLarge, []string{"413 Request Entity Too Large", "does not accept content this large"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			in := faultproxy.New(faultproxy.Options{Seed: 1, Rate: 1, Kinds: []faultproxy.Kind{tt.kind}})
			reg := registrytest.New(t, registrytest.WithWrap(in.Wrap))
			c, logs := loggedClient(t, client.RetryPolicy{Attempts: 6, Backoff: 50 * time.Millisecond})
			repo := registrytest.Repository(t, c, reg.Host+"/full/img")
			data := []byte("content that finds no room")
			blob := content.NewDescriptorFromBytes("application/octet-stream", data)
			manifest := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2,"data":"e30="},"layers":[]}`)
			md := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, manifest)
			for _, w := range []struct {
				what string
				push func() error
			}{
				{"blob", func() error { return repo.Push(ctx, blob, bytes.NewReader(data)) }},
				{"manifest", func() error { return repo.PushReference(ctx, md, bytes.NewReader(manifest), "v1") }},
			} {
				in.Take()
				start := time.Now()
				// As relocate's retrying target pushes: the whole push
				// again after a transient failure.
				err := c.RetryPolicy().Do(ctx, "pushing "+w.what, w.push)
				took := time.Since(start)
				var se *client.StorageError
				if !errors.As(err, &se) {
					t.Fatalf("%s: %v (%T), want a *client.StorageError", w.what, err, err)
				}
				if client.IsTransient(err) {
					t.Errorf("%s: IsTransient(%v) = true", w.what, err)
				}
				for _, s := range append([]string{reg.Host, "retrying will not help"}, tt.want...) {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("%s: error %q does not name %q", w.what, err, s)
					}
				}
				if strings.Contains(err.Error(), "_state") || strings.Contains(err.Error(), "?") {
					t.Errorf("%s: error %q shows a query", w.what, err)
				}
				if st := in.Take(); st.Faults != 1 {
					t.Errorf("%s: %d writes refused, want 1: the refusal was retried (%s)", w.what, st.Faults, st)
				}
				if took > 2*time.Second {
					t.Errorf("%s: refused after %s, want at once", w.what, took)
				}
			}
			if strings.Contains(logs.String(), "retrying") {
				t.Errorf("a refusal was retried:\n%s", logs)
			}
		})
	}
}

// TestRateLimits: a 429's Retry-After, in seconds or as an HTTP date, is
// waited out (capped at MaxRetryAfter); Docker Hub's rate-limit headers
// appear in the retry line and, once the retries are spent, in the
// *RateLimitError; a 503 retried shows as "retrying METHOD HOST/PATH (2
// of N): 503 Service Unavailable" at the default log level.
func TestRateLimits(t *testing.T) {
	ctx := context.Background()
	f := &faults{counts: map[string]int{}}
	reg := registrytest.New(t, registrytest.WithWrap(f.wrap))
	repo := registrytest.Repository(t, retryClient(t), reg.Host+"/rl/img")
	desc := pushManifest(t, repo, []byte("rate limits"))
	if err := repo.Tag(ctx, desc, "v1"); err != nil {
		t.Fatal(err)
	}
	hub := []string{"RateLimit-Limit", faultproxy.RateLimitLimit, "RateLimit-Remaining", faultproxy.RateLimitRemaining,
		"Docker-RateLimit-Source", faultproxy.RateLimitSource}
	isManifest := func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/manifests/") }
	line := "retrying HEAD " + reg.Host + "/v2/rl/img/manifests/v1 (2 of 3): "
	tests := []struct {
		name    string
		policy  client.RetryPolicy
		n       int
		fail    func(http.ResponseWriter)
		minWait time.Duration
		maxWait time.Duration
		// lines are in the log; errWant in the error (none: success).
		lines   []string
		errWant []string
	}{
		{name: "503", n: 1, fail: status(http.StatusServiceUnavailable), maxWait: 2 * time.Second,
			lines: []string{line + "503 Service Unavailable"}},
		{name: "Retry-After seconds", n: 1, fail: status(http.StatusTooManyRequests, "Retry-After", "1"),
			minWait: time.Second, maxWait: 5 * time.Second, lines: []string{line + "429 Too Many Requests (retry after 1s)"}},
		{name: "Retry-After HTTP date", n: 1,
			fail: func(w http.ResponseWriter) {
				status(http.StatusTooManyRequests, "Retry-After", time.Now().Add(2*time.Second).UTC().Format(http.TimeFormat))(w)
			},
			minWait: 900 * time.Millisecond, maxWait: 5 * time.Second, lines: []string{line + "429 Too Many Requests (retry after "}},
		{name: "Retry-After capped", policy: client.RetryPolicy{MaxRetryAfter: 100 * time.Millisecond}, n: 1,
			fail: status(http.StatusTooManyRequests, "Retry-After", "3600"), maxWait: 3 * time.Second,
			lines: []string{line + "429 Too Many Requests (retry after 1h0m0s)", "wait=100ms"}},
		{name: "Docker Hub headers", n: 1, fail: status(http.StatusTooManyRequests, hub...), maxWait: 3 * time.Second,
			lines: []string{line + "429 Too Many Requests (limit 100;w=21600, remaining 0;w=21600, counted for 192.0.2.1)"}},
		{name: "spent", n: 10, fail: status(http.StatusTooManyRequests, append(hub, "Retry-After", "0")...), maxWait: 3 * time.Second,
			lines:   []string{line + "429 Too Many Requests (limit 100;w=21600", "(3 of 3)"},
			errWant: []string{reg.Host + ": rate limited: HEAD /v2/rl/img/manifests/v1: 429 Too Many Requests (limit 100;w=21600, remaining 0;w=21600, counted for 192.0.2.1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.policy
			p.Attempts, p.Backoff = 3, time.Millisecond
			c, logs := loggedClient(t, p)
			repo := registrytest.Repository(t, c, reg.Host+"/rl/img")
			f.set(true, tt.n, tt.fail, isManifest)
			defer f.set(false, 0, nil, nil)
			start := time.Now()
			_, err := repo.Resolve(ctx, "v1")
			took := time.Since(start)
			if len(tt.errWant) == 0 && err != nil {
				t.Fatalf("resolve: %v", err)
			}
			if len(tt.errWant) > 0 {
				var rl *client.RateLimitError
				if !errors.As(err, &rl) {
					t.Fatalf("resolve: %v (%T), want a *client.RateLimitError", err, err)
				}
				for _, s := range tt.errWant {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
			}
			if took < tt.minWait || took > tt.maxWait {
				t.Errorf("took %s, want %s to %s", took, tt.minWait, tt.maxWait)
			}
			for _, s := range tt.lines {
				if !strings.Contains(logs.String(), s) {
					t.Errorf("the log does not show %q:\n%s", s, logs)
				}
			}
			if strings.Contains(logs.String(), "level=DEBUG") {
				t.Errorf("debug lines at the default level:\n%s", logs)
			}
		})
	}
}
