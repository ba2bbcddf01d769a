package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/relocate"
)

// TestE2EMirrorMountsSharedBlobs: two bundles whose invocation images share
// a layer (and config); mirrored one package at a time, the second
// repository mounts them from the first instead of receiving them again.
func TestE2EMirrorMountsSharedBlobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := registrytest.New(t)
	var log e2eRequestLog
	mirror := registrytest.New(t, registrytest.WithWrap(log.wrap))
	h := src.Host
	c := e2eClient(t)
	var layer string
	for _, name := range []string{"one", "two"} {
		repoName := h + "/shared/" + name
		repo := e2eRepo(t, c, repoName)
		inv, err := fixture.PushImage(ctx, repo, "shared-invocation", 4096)
		if err != nil {
			t.Fatal(err)
		}
		layer = e2eLayer(t, repo, inv).Digest.String()
		b := fixture.Bundle{Name: name, Version: "1.0.0"}
		bj, err := b.BundleJSON(repoName, inv, nil)
		if err != nil {
			t.Fatal(err)
		}
		e2ePushRaw(t, repo, "v1.0.0", bj, inv)
	}
	env := e2eEnv(t)
	to := mirror.Host + "/m"
	out := env.MustRun("mirror", h+"/shared/one:v1.0.0", h+"/shared/two:v1.0.0", "--to", to, "-j", "1", "-o", "json")
	var rep relocate.Report
	if err := json.Unmarshal([]byte(out.Stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out.Stdout)
	}
	var mounted, copied int64
	for _, p := range rep.Packages {
		mounted += p.Mounted
		copied += p.Copied
	}
	// The layer and the image config are shared.
	if mounted != 2 {
		t.Errorf("mounted %d blobs, want 2 (shared layer and config): %+v", mounted, rep.Packages)
	}
	var mounts, layerUploads int
	for _, r := range log.all() {
		if strings.HasPrefix(r, "POST ") && strings.Contains(r, "mount="+layer) {
			mounts++
		}
		if strings.HasPrefix(r, "PUT ") && strings.Contains(r, "/blobs/uploads/") && strings.Contains(r, "digest="+layer) {
			layerUploads++
		}
	}
	if mounts != 1 || layerUploads != 1 {
		t.Errorf("shared layer: %d mount requests, %d uploads; want 1 and 1\n%s", mounts, layerUploads, strings.Join(log.all(), "\n"))
	}
	// The lock written by mirror records both mirror locations.
	l := e2eReadLock(t, env, "ferry.lock")
	for _, p := range l.Resolved() {
		if p.Mirror != to+strings.TrimPrefix(p.Source, h) {
			t.Errorf("%s mirrored as %q", p.Source, p.Mirror)
		}
	}
	env.Expect(0, []string{"verify", "--deep"})
}

// TestE2EMirrorClash: two sources that map to one mirror path fail with
// exit 2 before anything is copied or written.
func TestE2EMirrorClash(t *testing.T) {
	t.Parallel()
	a := registrytest.New(t)
	b := registrytest.New(t)
	mirror := registrytest.New(t)
	for _, reg := range []*registrytest.Registry{a, b} {
		e2ePush(t, reg.Host, map[string][]fixture.Bundle{"acme/app": {e2eBundle("app", "1.0.0")}})
	}
	env := e2eEnv(t)
	mirror.Reset()
	srcs := []string{a.Host + "/acme/app", b.Host + "/acme/app"}
	slices.Sort(srcs)
	r := env.Expect(2, []string{"mirror", a.Host + "/acme/app:v1.0.0", b.Host + "/acme/app:v1.0.0", "--to", mirror.Host + "/m"},
		mirror.Host+"/m/acme/app <- "+strings.Join(srcs, ", "), "nothing was copied")
	if reqs := mirror.Requests(); len(reqs) > 0 {
		t.Errorf("the mirror was contacted: %v", reqs)
	}
	e2eAbsent(t, env.Path("ferry.lock"))
	if strings.Contains(r.Stdout+r.Stderr, "mirrored ") {
		t.Errorf("progress claims a copy:\n%s", r.Stderr)
	}
	// The same through a lock.
	env.MustRun("lock", a.Host+"/acme/app:v1.0.0", b.Host+"/acme/app:v1.0.0")
	before := env.ReadFile("ferry.lock")
	env.Expect(2, []string{"mirror", "--lock", "ferry.lock", "--to", mirror.Host + "/m"}, "maps several sources to one repository")
	if len(mirror.Requests()) > 0 {
		t.Errorf("the mirror was contacted: %v", mirror.Requests())
	}
	if env.ReadFile("ferry.lock") != before {
		t.Errorf("the lock changed")
	}
}

func TestMappingTable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		to, source, want string
	}{
		{"mirror.internal/m", "ghcr.io/acme/app", "mirror.internal/m/acme/app"},
		{"mirror.internal", "ghcr.io/acme/app", "mirror.internal/acme/app"},
		{"localhost:5000/a/b/", "ghcr.io/acme/app", "localhost:5000/a/b/acme/app"},
		{"127.0.0.1:5000/m", "127.0.0.1:6000/fixtures/diamond/db", "127.0.0.1:5000/m/fixtures/diamond/db"},
	}
	for _, tt := range tests {
		m, err := relocate.ParseMapping(tt.to)
		if err != nil {
			t.Fatalf("ParseMapping(%q): %v", tt.to, err)
		}
		if got := m.Repo(tt.source); got != tt.want {
			t.Errorf("%s: Repo(%s) = %s, want %s", tt.to, tt.source, got, tt.want)
		}
	}
	for _, bad := range []string{"", "https://mirror.internal/m", "mirror/m", "user:pw@mirror.internal/m"} {
		if _, err := relocate.ParseMapping(bad); err == nil {
			t.Errorf("ParseMapping(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("ParseMapping(%q) echoes the password: %v", bad, err)
		}
	}
	m, _ := relocate.ParseMapping("m.io/x")
	err := m.Check([]string{"a.io/p/q", "b.io/p/q", "a.io/r"})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("m.io/x/p/q <- %s, %s", "a.io/p/q", "b.io/p/q")) {
		t.Errorf("Check = %v", err)
	}
	if err := m.Check([]string{"a.io/p/q", "a.io/r"}); err != nil {
		t.Errorf("Check of distinct paths: %v", err)
	}
}
