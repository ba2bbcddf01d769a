package mixin

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

// TestLockedStore: `ferry serve --lock` serves Porter's mirror protocol
// from a real registry, but only the mixin versions and binaries the lock
// holds, each only with the lock's digest; everything else is a 404 that
// says why, with a log line, and a binary whose stored bytes were altered
// is cut off before its end.
func TestLockedStore(t *testing.T) {
	ctx := context.Background()
	fs := mixintest.NewFeed(t)
	c := registrytest.Client(t)
	hc := c.HTTPClient()
	feed, err := LoadFeed(ctx, hc, fs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := registrytest.New(t)
	repo := registrytest.Repository(t, c, reg.Host+"/mirror/porter-mixins/exec")
	// mirror fetches a version from the feed and pushes it to the mirror.
	mirror := func(version string, platforms ...string) *Locked {
		t.Helper()
		dir := t.TempDir()
		l, err := Fetch(ctx, hc, feed, "exec", version, platforms, nil, dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Push(ctx, repo, l, dir, client.RetryPolicy{}); err != nil {
			t.Fatal(err)
		}
		return l
	}
	cur := mirror("v1.2.3", "darwin/arm64") // linux/amd64 always comes with it
	mirror("v1.0.0")
	regClient, err := c.Registry(reg.Host)
	if err != nil {
		t.Fatal(err)
	}
	store := &RegistryStore{Registry: regClient, Prefix: "mirror", Names: []string{"exec"}}
	other := digest.FromString("other content").String()
	linux, darwin := "exec-linux-amd64", "exec-darwin-arm64"

	// only returns cur's entry with the binaries named.
	only := func(files ...string) Locked {
		l := *cur
		l.Binaries = map[string]Binary{}
		for _, f := range files {
			l.Binaries[f] = cur.Binaries[f]
		}
		return l
	}
	swapped := only(linux, darwin)
	swapped.Binaries[darwin] = Binary{Digest: other, Size: cur.Binaries[darwin].Size}
	resized := only(linux)
	resized.Binaries[linux] = Binary{Digest: cur.Binaries[linux].Digest, Size: cur.Binaries[linux].Size + 1}
	plus := only(linux)
	plus.Version = "v1.2.3+build.1"

	type get struct {
		path   string
		status int
		body   []string // what a 404's body says, or nothing for 200
	}
	tests := []struct {
		name string
		lock []Locked
		feed []string // "VERSION:FILES" of the served feed
		gets []get
		logs []string
	}{
		{
			name: "every locked binary is served; the rest of the mirror is not",
			lock: []Locked{only(linux, darwin)},
			feed: []string{"v1.2.3:exec-darwin-arm64 exec-linux-amd64"},
			gets: []get{
				{"/mixins/v1.2.3/" + linux, http.StatusOK, nil},
				{"/mixins/v1.2.3/" + darwin, http.StatusOK, nil},
				{"/mixins/v1.0.0/" + linux, http.StatusNotFound, []string{"exec v1.0.0", "the lock holds"}},
			},
			logs: []string{"leaving out exec v1.0.0: not in the lock", "refused: exec v1.0.0 is not in the lock"},
		},
		{
			name: "a binary the lock does not hold",
			lock: []Locked{only(linux)},
			feed: []string{"v1.2.3:exec-linux-amd64"},
			gets: []get{
				{"/mixins/v1.2.3/" + linux, http.StatusOK, nil},
				{"/mixins/v1.2.3/" + darwin, http.StatusNotFound, []string{darwin, "the lock holds"}},
			},
			logs: []string{"leaving out exec v1.2.3 " + darwin + ": not in the lock", "refused: exec v1.2.3 " + darwin + " is not in the lock"},
		},
		{
			name: "a binary whose digest differs from the lock",
			lock: []Locked{swapped},
			feed: []string{"v1.2.3:exec-linux-amd64"},
			gets: []get{
				{"/mixins/v1.2.3/" + linux, http.StatusOK, nil},
				{"/mixins/v1.2.3/" + darwin, http.StatusNotFound, []string{darwin, cur.Binaries[darwin].Digest, other}},
			},
			logs: []string{"refused: exec v1.2.3 " + darwin + ": the mirror holds " + cur.Binaries[darwin].Digest + ", the lock " + other},
		},
		{
			name: "a binary whose size differs from the lock",
			lock: []Locked{resized},
			// The feed compares digests only; the download checks both.
			feed: []string{"v1.2.3:exec-linux-amd64"},
			gets: []get{{"/mixins/v1.2.3/" + linux, http.StatusNotFound, []string{"bytes"}}},
			logs: []string{"refused: exec v1.2.3 " + linux},
		},
		{
			name: "another version spelling is another version",
			lock: []Locked{plus},
			gets: []get{{"/mixins/v1.2.3/" + linux, http.StatusNotFound, []string{"exec v1.2.3 is not served"}}},
		},
		{
			name: "an empty lock serves nothing",
			gets: []get{{"/mixins/v1.2.3/" + linux, http.StatusNotFound, []string{"not served"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var logs []string
			ls := &LockedStore{Store: store, Locked: tt.lock, Log: func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				logs = append(logs, fmt.Sprintf(format, args...))
			}}
			srv := httptest.NewServer(NewHandler(ls))
			defer srv.Close()
			served, err := LoadFeed(ctx, http.DefaultClient, srv.URL+"/mixins/atom.xml", nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range served.Versions("exec") {
				got = append(got, v.Version+":"+fileNames(v.Files))
			}
			if !slices.Equal(got, tt.feed) {
				t.Errorf("served feed %q, want %q", got, tt.feed)
			}
			for _, g := range tt.gets {
				resp, err := http.Get(srv.URL + g.path)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatalf("GET %s: %v", g.path, err)
				}
				if resp.StatusCode != g.status {
					t.Errorf("GET %s: %d, want %d: %s", g.path, resp.StatusCode, g.status, body)
					continue
				}
				if g.status == http.StatusOK {
					file := filepath.Base(g.path)
					if d := digest.FromBytes(body).String(); d != cur.Binaries[file].Digest {
						t.Errorf("GET %s: %s, locked %s", g.path, d, cur.Binaries[file].Digest)
					}
				}
				for _, w := range g.body {
					if !strings.Contains(string(body), w) {
						t.Errorf("GET %s: body lacks %q: %s", g.path, w, body)
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, w := range tt.logs {
				if !slices.ContainsFunc(logs, func(l string) bool { return strings.Contains(l, w) }) {
					t.Errorf("no log line with %q in %q", w, logs)
				}
			}
		})
	}

	// Bytes altered in the registry's storage, under the locked digest:
	// the download stops before its last byte.
	t.Run("stored bytes altered under the locked digest", func(t *testing.T) {
		d := digest.Digest(cur.Binaries[darwin].Digest)
		blob := filepath.Join(reg.Root, "docker", "registry", "v2", "blobs", "sha256", d.Encoded()[:2], d.Encoded(), "data")
		evil := make([]byte, cur.Binaries[darwin].Size)
		if _, err := rand.Read(evil); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(blob, evil, 0o644); err != nil {
			t.Fatal(err)
		}
		var logs []string
		ls := &LockedStore{Store: store, Locked: []Locked{only(linux, darwin)}, Log: func(format string, args ...any) {
			logs = append(logs, fmt.Sprintf(format, args...))
		}}
		// Through the store: the reader fails and never returns the end.
		rc, _, err := ls.Open(ctx, "exec", "v1.2.3", darwin)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if !errors.Is(err, ErrNotLocked) || int64(len(got)) >= cur.Binaries[darwin].Size {
			t.Errorf("read %d of %d bytes, err %v; want fewer, and ErrNotLocked", len(got), cur.Binaries[darwin].Size, err)
		}
		// Through HTTP: the client sees a truncated body.
		srv := httptest.NewServer(NewHandler(ls))
		defer srv.Close()
		resp, err := http.Get(srv.URL + "/mixins/v1.2.3/" + darwin)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil || int64(len(body)) >= cur.Binaries[darwin].Size {
			t.Errorf("GET: %d, %d of %d bytes, err %v; want a truncated download", resp.StatusCode, len(body), cur.Binaries[darwin].Size, err)
		}
		if !slices.ContainsFunc(logs, func(l string) bool { return strings.Contains(l, "cut off: exec v1.2.3 "+darwin) }) {
			t.Errorf("no cut-off log line in %q", logs)
		}
	})
}
