package client_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// breaker serves the first GET of a blob path up to half its body and
// then breaks it: cuts the connection (cut) or stops sending (stall, until
// the client gives up or a minute passes). It can redirect blob GETs to
// /cdn/PATH first, and strip Range from later requests (a registry that
// ignores Range). It records the Range headers it receives.
type breaker struct {
	mu       sync.Mutex
	blob     string // path of the blob to break
	stall    bool
	redirect bool
	noRange  bool
	broken   bool
	ranges   []string
	gaveUp   bool // a stalled client hung up before the minute was over
}

func (b *breaker) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		blob, redirect, stall, noRange := b.blob, b.redirect, b.stall, b.noRange
		b.mu.Unlock()
		if r.Method != http.MethodGet || blob == "" {
			next.ServeHTTP(w, r)
			return
		}
		switch {
		case redirect && r.URL.Path == blob:
			http.Redirect(w, r, "/cdn"+blob+"?sig=test", http.StatusTemporaryRedirect)
			return
		case redirect && r.URL.Path == "/cdn"+blob:
			r.URL.Path, r.URL.RawQuery = blob, ""
		case r.URL.Path != blob:
			next.ServeHTTP(w, r)
			return
		}
		b.mu.Lock()
		first := !b.broken
		b.broken = true
		if rg := r.Header.Get("Range"); rg != "" {
			b.ranges = append(b.ranges, rg)
		}
		b.mu.Unlock()
		if !first {
			if noRange {
				r.Header.Del("Range")
			}
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		body := rec.Body.Bytes()
		_, _ = w.Write(body[:len(body)/2])
		_ = http.NewResponseController(w).Flush()
		if stall {
			select {
			case <-r.Context().Done():
				b.mu.Lock()
				b.gaveUp = true
				b.mu.Unlock()
			case <-time.After(time.Minute):
			}
		}
		panic(http.ErrAbortHandler)
	})
}

// TestResumeDownload: a blob whose body breaks half-way is fetched whole,
// byte for byte, by asking for the rest with a Range request.
func TestResumeDownload(t *testing.T) {
	ctx := context.Background()
	b := &breaker{}
	reg := registrytest.New(t, registrytest.WithWrap(b.wrap))
	tests := []struct {
		name     string
		stall    bool
		redirect bool
		noRange  bool
	}{
		{name: "connection cut"},
		{name: "body stalls", stall: true},
		{name: "connection cut after redirect", redirect: true},
		{name: "registry ignores Range", noRange: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idle := time.Duration(0) // the default
			if tt.stall {
				idle = 300 * time.Millisecond
			}
			c, err := client.New(client.Options{
				RegistryConfig:  filepath.Join(t.TempDir(), "config.json"),
				Retry:           client.RetryPolicy{Backoff: time.Millisecond},
				IdleReadTimeout: idle,
			})
			if err != nil {
				t.Fatal(err)
			}
			repo := registrytest.Repository(t, c, reg.Host+"/r/blob")
			data := make([]byte, 1<<20+i)
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
			desc := content.NewDescriptorFromBytes("application/octet-stream", data)
			if err := repo.Push(ctx, desc, bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
			b.mu.Lock()
			b.blob, b.stall, b.redirect, b.noRange, b.broken, b.ranges, b.gaveUp =
				"/v2/r/blob/blobs/"+desc.Digest.String(), tt.stall, tt.redirect, tt.noRange, false, nil, false
			b.mu.Unlock()
			defer func() {
				b.mu.Lock()
				b.blob = ""
				b.mu.Unlock()
			}()

			got, err := fetch(ctx, repo.Blobs(), desc)
			if err != nil {
				t.Fatalf("fetch of a broken download: %v", err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("fetched %d bytes that differ from the %d of the blob", len(got), len(data))
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if !b.broken {
				t.Fatal("the download was never broken")
			}
			// A slow machine may trip the idle timeout again: more resumes
			// are fine, as long as the first starts mid-way.
			var from int
			if len(b.ranges) == 0 {
				t.Fatal("no Range request: the download was not resumed")
			}
			if _, err := fmt.Sscanf(b.ranges[0], "bytes=%d-", &from); err != nil || from <= 0 || from >= len(data) {
				t.Errorf("Range headers %q, want a resume from the middle", b.ranges)
			}
			if tt.stall && !b.gaveUp {
				t.Error("the stalled body was not given up on by the idle timeout")
			}
		})
	}
}

// fetch reads a blob whole through oras-go, which checks size and digest.
func fetch(ctx context.Context, s interface {
	Fetch(context.Context, ocispec.Descriptor) (io.ReadCloser, error)
}, desc ocispec.Descriptor) ([]byte, error) {
	rc, err := s.Fetch(ctx, desc)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return content.ReadAll(rc, desc)
}

// TestMetadataCutShort: a manifest whose answer breaks half-way (cut or
// stalled) is read whole inside the retry loop and asked for again, by
// tag and by digest, so its consumer sees only complete bytes.
func TestMetadataCutShort(t *testing.T) {
	ctx := context.Background()
	b := &breaker{}
	reg := registrytest.New(t, registrytest.WithWrap(b.wrap))
	// Each case reads through a client of its own: a client answers a
	// manifest it has read by digest from its cache (readcache.go), and
	// every case must reach the registry.
	newClient := func(t *testing.T) *client.Client {
		t.Helper()
		c, err := client.New(client.Options{
			RegistryConfig:  filepath.Join(t.TempDir(), "config.json"),
			Retry:           client.RetryPolicy{Backoff: time.Millisecond},
			IdleReadTimeout: 300 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	repo := registrytest.Repository(t, newClient(t), reg.Host+"/r/meta")
	cfg := []byte(`{"architecture":"amd64","os":"linux"}`)
	cfgDesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageConfig, cfg)
	if err := repo.Push(ctx, cfgDesc, bytes.NewReader(cfg)); err != nil {
		t.Fatal(err)
	}
	m := []byte(fmt.Sprintf(`{"schemaVersion":2,"mediaType":%q,"config":{"mediaType":%q,"digest":%q,"size":%d},"layers":[]}`,
		ocispec.MediaTypeImageManifest, ocispec.MediaTypeImageConfig, cfgDesc.Digest, cfgDesc.Size))
	mDesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, m)
	if err := repo.PushReference(ctx, mDesc, bytes.NewReader(m), "v1"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, ref string
		stall     bool
	}{
		{name: "by tag, cut", ref: "v1"},
		{name: "by digest, cut", ref: mDesc.Digest.String()},
		{name: "by tag, stalled", ref: "v1", stall: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b.mu.Lock()
			b.blob, b.stall, b.broken, b.ranges, b.gaveUp = "/v2/r/meta/manifests/"+tt.ref, tt.stall, false, nil, false
			b.mu.Unlock()
			defer func() {
				b.mu.Lock()
				b.blob = ""
				b.mu.Unlock()
			}()
			repo := registrytest.Repository(t, newClient(t), reg.Host+"/r/meta")
			desc, rc, err := repo.FetchReference(ctx, tt.ref)
			if err != nil {
				t.Fatalf("fetch of a broken answer: %v", err)
			}
			defer rc.Close()
			got, err := content.ReadAll(rc, desc)
			if err != nil {
				t.Fatalf("reading: %v", err)
			}
			if !bytes.Equal(got, m) || desc.Digest != mDesc.Digest {
				t.Fatalf("got %s (%d bytes), want %s", desc.Digest, len(got), mDesc.Digest)
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if !b.broken {
				t.Fatal("the answer was never broken")
			}
			if tt.stall && !b.gaveUp {
				t.Error("the stalled answer was not given up on by the idle timeout")
			}
		})
	}
}
