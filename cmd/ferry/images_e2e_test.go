package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestE2EImageTwoDigests: `ferry mirror R/app/web:1.0.0 R/app/web:1.1.0
// --to M`, two tags of two digests of one plain image, locks both as two
// packages, mirrors, verifies (also deeply, and through an archive) and
// installs both; a chart deploying web:1.1.0 beside a root web:1.0.0
// locks the same way.
func TestE2EImageTwoDigests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, mirror := registrytest.New(t), registrytest.New(t)
	c := e2eClient(t)
	web := src.Host + "/app/web"
	repo := e2eRepo(t, c, web)
	want := map[string]string{} // tag -> digest
	for _, tag := range []string{"1.0.0", "1.1.0"} {
		desc, err := fixture.PushImage(ctx, repo, "images-e2e-web-"+tag, 256)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.Tag(ctx, desc, tag); err != nil {
			t.Fatal(err)
		}
		want[tag] = desc.Digest.String()
	}
	env := clitest.New(t)
	to := mirror.Host + "/m"
	env.MustRun("mirror", web+":1.0.0", web+":1.1.0", "--to", to)
	l := e2eReadLock(t, env, "ferry.lock")
	if n := len(l.Resolved()); n != 2 {
		t.Fatalf("lock holds %d packages, want 2:\n%s", n, env.ReadFile("ferry.lock"))
	}
	var mirrored string
	for tag, d := range want {
		p := l.PackageAt(web, d)
		if p == nil || p.Version != tag || p.Kind != "image" && p.Kind != "oci.artifact" {
			t.Fatalf("%s@%s locked as %+v", web, d, p)
		}
		mirrored = p.Mirror
		got, err := e2eRepo(t, c, p.Mirror).Resolve(ctx, tag)
		if err != nil || got.Digest.String() != d {
			t.Fatalf("%s:%s = %v, %v; want %s", p.Mirror, tag, got.Digest, err, d)
		}
	}
	env.MustRun("verify")
	env.MustRun("verify", "--deep")
	env.MustRun("mirror", "--lock", "ferry.lock", "--to-archive", "web.tar")
	env.MustRun("verify", "--archive", "web.tar")
	mirror2 := registrytest.New(t)
	env.MustRun("mirror", "--from-archive", "web.tar", "--to", mirror2.Host+"/m")
	for tag, d := range want {
		m2 := strings.Replace(mirrored, mirror.Host, mirror2.Host, 1)
		if got, err := e2eRepo(t, c, m2).Resolve(ctx, tag); err != nil || got.Digest.String() != d {
			t.Fatalf("%s:%s from the archive = %v, %v; want %s", m2, tag, got.Digest, err, d)
		}
	}
	// The lock records the last mirror: install from it.
	mirrored = strings.Replace(mirrored, mirror.Host, mirror2.Host, 1)
	env.MustRun("install", "--dest", "inst")
	var relocation map[string]string
	e2eJSONFile(t, filepath.Join(env.Path("inst"), install.RelocationFile), &relocation)
	for tag, d := range want {
		if got, w := relocation[web+":"+tag], mirrored+"@"+d; got != w {
			t.Errorf("relocation %s:%s = %q, want %q", web, tag, got, w)
		}
	}
	var plan install.Plan
	e2eJSONFile(t, filepath.Join(env.Path("inst"), install.PlanFile), &plan)
	if len(plan.Steps) != 2 {
		t.Errorf("plan steps %+v", plan.Steps)
	}

	// A chart pinning web:1.1.0 beside the root web:1.0.0.
	tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "web", Version: "1.0.0", Templates: map[string]string{
		"a.yaml": deployment("a", web+":1.1.0"),
	}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := charttest.PushChart(tgz, src.Host+"/charts", chartCreated); err != nil {
		t.Fatal(err)
	}
	env2 := clitest.New(t)
	env2.MustRun("lock", src.Host+"/charts/web:1.0.0", web+":1.0.0")
	l = e2eReadLock(t, env2, "ferry.lock")
	for tag, d := range want {
		if p := l.PackageAt(web, d); p == nil || p.Version != tag {
			t.Errorf("%s@%s locked as %+v:\n%s", web, d, p, env2.ReadFile("ferry.lock"))
		}
	}
	env2.MustRun("mirror", "--to", mirror.Host+"/m2")
	env2.MustRun("verify")
}

// TestE2EUntaggedImageMeansLatest: `ferry lock R/app/web` locks
// app/web:latest, as docker pull would pull it, beside its semver tags; a
// repository without `latest` is exit 1 listing its tags and suggesting a
// range, which `--version` then takes.
func TestE2EUntaggedImageMeansLatest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := registrytest.New(t)
	c := e2eClient(t)
	push := func(repo string, tags ...string) map[string]string {
		r := e2eRepo(t, c, src.Host+"/"+repo)
		out := map[string]string{}
		for _, tag := range tags {
			desc, err := fixture.PushImage(ctx, r, "untagged-e2e-"+repo+tag, 128)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Tag(ctx, desc, tag); err != nil {
				t.Fatal(err)
			}
			out[tag] = desc.Digest.String()
		}
		return out
	}
	web := push("app/web", "1.0.0", "2.0.0", "latest")
	push("app/api", "1.0.0", "1.4.2")
	env := clitest.New(t)
	env.MustRun("lock", src.Host+"/app/web")
	if p := e2eReadLock(t, env, "ferry.lock").Package(src.Host + "/app/web"); p == nil || p.Version != "latest" || p.Digest != web["latest"] {
		t.Fatalf("locked %+v, want latest at %s", p, web["latest"])
	}
	env.Expect(1, []string{"lock", src.Host + "/app/api", "--lock", "api.lock"},
		src.Host+"/app/api: an untagged image reference means latest", "(tags: 1.0.0 1.4.2)", "--version '^1.4'")
	env.MustRun("lock", src.Host+"/app/api", "--version", "^1.4", "--lock", "api.lock")
	if p := e2eReadLock(t, env, "api.lock").Package(src.Host + "/app/api"); p == nil || p.Version != "1.4.2" {
		t.Fatalf("locked %+v, want 1.4.2", p)
	}
}
