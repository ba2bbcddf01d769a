package mixin

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

func TestFetchLocked(t *testing.T) {
	ctx := context.Background()
	c := registrytest.Client(t)
	hc := c.HTTPClient()
	tests := []struct {
		name     string
		setup    func(fs *mixintest.FeedServer, dir string, l *Locked)
		wantErr  []string
		wantCode int
	}{
		{name: "downloads and verifies"},
		{
			name: "keeps a verified file, replaces a wrong one",
			setup: func(fs *mixintest.FeedServer, dir string, l *Locked) {
				os.WriteFile(filepath.Join(dir, "exec-linux-amd64"), mixintest.Content("v1.2.3", "exec-linux-amd64"), 0o644)
				os.WriteFile(filepath.Join(dir, "exec-darwin-arm64"), []byte("stale"), 0o644)
				fs.NotFound("v1.2.3", "exec-linux-amd64") // must not be asked for
			},
		},
		{
			name:     "digest differs",
			setup:    func(fs *mixintest.FeedServer, dir string, l *Locked) { fs.Swap("v1.2.3", "exec-darwin-arm64", 0) },
			wantErr:  []string{"exec-darwin-arm64", "does not match ferry.lock"},
			wantCode: exitcode.Mismatch,
		},
		{
			name:     "size differs",
			setup:    func(fs *mixintest.FeedServer, dir string, l *Locked) { fs.Swap("v1.2.3", "exec-linux-amd64", -3) },
			wantErr:  []string{"exec-linux-amd64", "does not match ferry.lock"},
			wantCode: exitcode.Mismatch,
		},
		{
			name:     "404",
			setup:    func(fs *mixintest.FeedServer, dir string, l *Locked) { fs.NotFound("v1.2.3", "exec-linux-amd64") },
			wantErr:  []string{"exec-linux-amd64", "404"},
			wantCode: exitcode.Failure,
		},
		{
			name: "a file URL in a lock from an HTTP feed",
			setup: func(fs *mixintest.FeedServer, dir string, l *Locked) {
				b := l.Binaries["exec-linux-amd64"]
				b.URL = "file:///etc/passwd"
				l.Binaries["exec-linux-amd64"] = b
			},
			wantErr:  []string{"may not link to a local file"},
			wantCode: exitcode.Usage,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := mixintest.NewFeed(t)
			feed, err := LoadFeed(ctx, hc, fs.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			locked, err := Fetch(ctx, hc, feed, "exec", "v1.2.3", []string{"darwin/arm64"}, nil, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if tt.setup != nil {
				tt.setup(fs, dir, locked)
			}
			before := entries(t, dir)
			err = FetchLocked(ctx, hc, locked, dir, nil)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range locked.Keys() {
					if got := fileDigest(t, filepath.Join(dir, k)); got != locked.Binaries[k].Digest {
						t.Errorf("%s = %s", k, got)
					}
				}
				if got := entries(t, dir); !slices.Equal(got, locked.Keys()) {
					t.Errorf("dir holds %q", got)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if code := exitcode.Of(err); code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
			if got := entries(t, dir); !slices.Equal(got, before) {
				t.Errorf("dir holds %q after a failure, had %q", got, before)
			}
		})
	}
}

// TestRegistryStoreAnyPrefix serves mixins pushed under several prefixes.
func TestRegistryStoreAnyPrefix(t *testing.T) {
	ctx := context.Background()
	c := registrytest.Client(t)
	hc := c.HTTPClient()
	fs := mixintest.NewFeed(t)
	feed, err := LoadFeed(ctx, hc, fs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := registrytest.New(t)
	push := func(repo, name, version string) *Locked {
		dir := t.TempDir()
		l, err := Fetch(ctx, hc, feed, name, version, []string{"linux/amd64"}, nil, dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Push(ctx, registrytest.Repository(t, c, reg.Host+"/"+repo), l, dir, client.RetryPolicy{}); err != nil {
			t.Fatal(err)
		}
		return l
	}
	push("a/porter-mixins/exec", "exec", "v1.2.3")
	push("b/c/porter-mixins/exec", "exec", "v1.0.0")
	push("b/c/porter-mixins/exec", "exec", "v1.2.3") // same version under another prefix: listed once
	push("porter-mixins/helm3", "helm3", "v1.0.0")
	push("elsewhere/helm3", "helm3", "v1.2.3") // not a mixin repository

	regClient, err := c.Registry(reg.Host)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		store *RegistryStore
		want  []string
	}{
		{"any prefix", &RegistryStore{Registry: regClient, AnyPrefix: true}, []string{"exec@v1.0.0", "exec@v1.2.3", "helm3@v1.0.0"}},
		{"prefix a", &RegistryStore{Registry: regClient, Prefix: "a"}, []string{"exec@v1.2.3"}},
		{"no prefix", &RegistryStore{Registry: regClient}, []string{"helm3@v1.0.0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(NewHandler(tt.store))
			defer srv.Close()
			served, err := LoadFeed(ctx, hc, srv.URL+"/mixins/atom.xml", nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range served.Names() {
				for _, v := range served.Versions(n) {
					got = append(got, n+"@"+v.Version)
					dir := t.TempDir()
					l, err := Fetch(ctx, hc, served, n, v.Version, nil, nil, dir)
					if err != nil {
						t.Fatal(err)
					}
					for k, b := range l.Binaries {
						if want := digestOf(mixintest.Content(v.Version, k)); b.Digest != want {
							t.Errorf("%s %s %s served %s, want %s", n, v.Version, k, b.Digest, want)
						}
					}
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("served %q, want %q", got, tt.want)
			}
		})
	}
}
