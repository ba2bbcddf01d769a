package main_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

// TestServeLock: `ferry serve --lock ferry.lock` answers Porter's mixin
// protocol only with the binaries the lock holds, by digest: a version
// the lock does not hold, and a binary re-pushed under a locked version
// with other bytes, are 404s that say why, with a log line. Without
// --lock, both are served (README: what is served unchecked).
func TestServeLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fs := mixintest.NewFeed(t)
	mirror := registrytest.New(t)
	env := mxEnv(t, fs)
	env.WriteFile("ferry.yaml", `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
mixins:
  - name: exec
    version: v1.2.3
  - name: helm3
    version: v1.2.3
platforms: [linux/amd64]
`)
	env.MustRun("lock")
	to := mirror.Host + "/mirror"
	env.MustRun("mirror", "--to", to)
	l := mxMixins(t, mxReadLock(t, env, "ferry.lock"))
	if len(l) != 2 {
		t.Fatalf("locked %+v", l)
	}
	execLocked, helmLocked := l[0], l[1]

	// Into the mirror, behind the lock's back: exec v1.0.0, and helm3
	// v1.2.3 re-pushed with other bytes (the feed re-published it).
	c := mxClient(t)
	push := func(name, version string) *mixin.Locked {
		t.Helper()
		feed, err := mixin.LoadFeed(ctx, c.HTTPClient(), fs.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		m, err := mixin.Fetch(ctx, c.HTTPClient(), feed, name, version, []string{"linux/amd64"}, nil, dir)
		if err != nil {
			t.Fatal(err)
		}
		repo, err := c.Repository(to + "/porter-mixins/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mixin.Push(ctx, repo, m, dir, client.RetryPolicy{}); err != nil {
			t.Fatal(err)
		}
		return m
	}
	push("exec", "v1.0.0")
	fs.Swap("v1.2.3", "helm3-linux-amd64", 0)
	swapped := push("helm3", "v1.2.3")
	helmFile := "helm3-linux-amd64"
	if swapped.Binaries[helmFile].Digest == helmLocked.Binaries[helmFile].Digest {
		t.Fatal("the swapped helm3 binary has the locked digest")
	}
	mirror.Stop()

	type get struct {
		path   string
		status int
		digest string   // of a 200's body
		body   []string // what a 404's body says
	}
	tests := []struct {
		name string
		args []string
		feed []string // NAME@VERSION the served feed lists
		gets []get
		logs []string
	}{
		{
			name: "--lock",
			args: []string{"--lock", env.Path("ferry.lock")},
			feed: []string{"exec@v1.2.3"},
			gets: []get{
				{"/mixins/v1.2.3/exec-linux-amd64", http.StatusOK, execLocked.Binaries["exec-linux-amd64"].Digest, nil},
				{"/mixins/v1.2.3/" + helmFile, http.StatusNotFound, "", []string{helmFile, swapped.Binaries[helmFile].Digest, helmLocked.Binaries[helmFile].Digest}},
				{"/mixins/v1.0.0/exec-linux-amd64", http.StatusNotFound, "", []string{"exec v1.0.0", "not served"}},
			},
			logs: []string{"refused: helm3 v1.2.3 " + helmFile, "refused: exec v1.0.0 is not in the lock"},
		},
		{
			name: "without --lock, unchecked",
			feed: []string{"exec@v1.0.0", "exec@v1.2.3", "helm3@v1.2.3"},
			gets: []get{
				{"/mixins/v1.2.3/exec-linux-amd64", http.StatusOK, execLocked.Binaries["exec-linux-amd64"].Digest, nil},
				{"/mixins/v1.2.3/" + helmFile, http.StatusOK, swapped.Binaries[helmFile].Digest, nil},
				{"/mixins/v1.0.0/exec-linux-amd64", http.StatusOK, mxDigest(mixintest.Content("v1.0.0", "exec-linux-amd64")), nil},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, stderr := clitest.Serve(t, mirror.Root, tt.args...)
			base := "http://" + addr
			feed, err := mixin.LoadFeed(ctx, http.DefaultClient, base+"/mixins/atom.xml", nil)
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, n := range feed.Names() {
				for _, v := range feed.Versions(n) {
					listed = append(listed, n+"@"+v.Version)
				}
			}
			if strings.Join(listed, " ") != strings.Join(tt.feed, " ") {
				t.Errorf("served feed %q, want %q", listed, tt.feed)
			}
			for _, g := range tt.gets {
				resp, err := http.Get(base + g.path)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatalf("GET %s: %v", g.path, err)
				}
				if resp.StatusCode != g.status {
					t.Errorf("GET %s: %d, want %d: %.200s", g.path, resp.StatusCode, g.status, body)
					continue
				}
				if g.digest != "" && mxDigest(body) != g.digest {
					t.Errorf("GET %s: %s, want %s", g.path, mxDigest(body), g.digest)
				}
				for _, w := range g.body {
					if !strings.Contains(string(body), w) {
						t.Errorf("GET %s: body lacks %q: %s", g.path, w, body)
					}
				}
			}
			// The OCI API is served as it is: clients check digests.
			resp, err := http.Get(base + "/v2/mirror/porter-mixins/helm3/tags/list")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("/v2/ tags/list: %d", resp.StatusCode)
			}
			for _, w := range tt.logs {
				if !strings.Contains(stderr(), w) {
					t.Errorf("serve logged no %q:\n%s", w, stderr())
				}
			}
		})
	}

	t.Run("a lock that cannot be read", func(t *testing.T) {
		env := clitest.New(t)
		env.Expect(2, []string{"serve", "--root", env.Path("reg"), "--lock", env.Path("nope.lock")}, "nope.lock")
	})
}
