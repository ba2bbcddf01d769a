package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
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

// TestE2EImagesSection: ferry.yaml's `images:` locks exact tags, the
// newest tags of a range less those excluded, an image list file and the
// images of a folder of manifests, each by digest; mirror and verify
// follow. A later `ferry lock` keeps the tags it chose although a newer
// one appeared; `ferry lock --update` selects again.
func TestE2EImagesSection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, mirror := registrytest.New(t), registrytest.New(t)
	c := e2eClient(t)
	digests := map[string]string{} // "repo:tag" -> digest
	push := func(repo string, tags ...string) {
		r := e2eRepo(t, c, src.Host+"/"+repo)
		for _, tag := range tags {
			desc, err := fixture.PushImage(ctx, r, "images-section-"+repo+tag, 128)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Tag(ctx, desc, tag); err != nil {
				t.Fatal(err)
			}
			digests[repo+":"+tag] = desc.Digest.String()
		}
	}
	push("lib/nginx", "1.24.0", "1.25.0", "1.25.1", "1.25.2-rc.1", "1.25.2-alpine", "latest")
	push("app/web", "1.0.0", "latest")
	push("app/api", "1.0.0")
	push("app/db", "2.0")
	env := clitest.New(t)
	env.WriteFile("images.txt", "# the demo's images\n"+src.Host+"/app/web\n"+src.Host+"/app/api:1.0.0  # pinned\n")
	if err := os.MkdirAll(env.Path("deploy/db"), 0o755); err != nil {
		t.Fatal(err)
	}
	env.WriteFile("deploy/db/db.yaml", deployment("db", src.Host+"/app/db:2.0"))
	env.WriteFile("ferry.yaml", fmt.Sprintf(`apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
images:
  - ref: %s/lib/nginx
    tags: ["1.24.0", ">=1.25.0-0 <2"]
    exclude: ['-rc', '-alpine']
    newest: 2
  - list: images.txt
  - manifests: deploy
mirror:
  to: %s/m
`, src.Host, mirror.Host))
	locked := func(file string) map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, p := range e2eReadLock(t, env, file).Resolved() {
			for _, tag := range p.AllTags() {
				out[strings.TrimPrefix(p.Source, src.Host+"/")+":"+tag] = p.Digest
			}
		}
		return out
	}
	want := func(keys ...string) map[string]string {
		out := map[string]string{}
		for _, k := range keys {
			out[k] = digests[k]
		}
		return out
	}
	env.MustRun("lock")
	first := env.ReadFile("ferry.lock")
	if got, w := locked("ferry.lock"), want("lib/nginx:1.24.0", "lib/nginx:1.25.1", "lib/nginx:1.25.0", "app/web:latest", "app/api:1.0.0", "app/db:2.0"); !reflect.DeepEqual(got, w) {
		t.Fatalf("locked %v\nwant   %v\n%s", got, w, first)
	}
	env.MustRun("mirror")
	env.MustRun("verify")
	// The mirror alone, and the sources, resolve to the lock again.
	env.MustRun("verify", "--resolve")
	env.MustRun("verify", "--resolve-sources")
	first = env.ReadFile("ferry.lock") // with the mirror recorded

	// A newer tag appears: ferry lock keeps the selection, --update
	// moves it.
	push("lib/nginx", "1.26.0")
	env.MustRun("lock")
	if again := env.ReadFile("ferry.lock"); again != first {
		t.Errorf("a second lock changed:\n%s\n---\n%s", first, again)
	}
	env.MustRun("lock", "--update")
	if got, w := locked("ferry.lock"), want("lib/nginx:1.24.0", "lib/nginx:1.26.0", "lib/nginx:1.25.1", "app/web:latest", "app/api:1.0.0", "app/db:2.0"); !reflect.DeepEqual(got, w) {
		t.Fatalf("updated %v\nwant    %v", got, w)
	}

	// Bad input is exit 2 naming the entry; a selection keeping nothing
	// is exit 1 naming it and the tags.
	env.WriteFile("bad.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nimages:\n  - ref: "+src.Host+"/lib/nginx:1.24.0\n    newest: 2\n")
	env.Expect(2, []string{"lock", "--config", "bad.yaml", "--lock", "bad.lock"}, "images[0]", "without tag or digest")
	env.WriteFile("none.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nimages:\n  - ref: "+src.Host+"/lib/nginx\n    tags: ['>=3']\n")
	env.Expect(1, []string{"lock", "--config", "none.yaml", "--lock", "none.lock"}, src.Host+`/lib/nginx: no tag is selected by tags ">=3"`)
}

// TestE2EImageSelectionFlags: the images: selection as ROOT options:
// `ferry mirror REPO --version RANGE --exclude-tags RE --newest N`, and
// --match alone; a ROOT with a tag is exit 2.
func TestE2EImageSelectionFlags(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, mirror := registrytest.New(t), registrytest.New(t)
	c := e2eClient(t)
	nginx := src.Host + "/lib/nginx"
	r := e2eRepo(t, c, nginx)
	for _, tag := range []string{"1.24.0", "1.25.0", "1.25.1", "1.26.0-rc.1", "1.26.0-alpine", "stable"} {
		desc, err := fixture.PushImage(ctx, r, "selection-flags-"+tag, 128)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Tag(ctx, desc, tag); err != nil {
			t.Fatal(err)
		}
	}
	env := clitest.New(t)
	versions := func(file string) []string {
		t.Helper()
		var out []string
		for _, p := range e2eReadLock(t, env, file).Resolved() {
			out = append(out, p.AllTags()...)
		}
		sort.Strings(out)
		return out
	}
	env.MustRun("mirror", nginx, "--version", ">=1.25.0-0", "--exclude-tags", "-rc", "--exclude-tags", "-alpine", "--newest", "2", "--to", mirror.Host+"/m")
	if got, want := versions("ferry.lock"), []string{"1.25.0", "1.25.1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("mirrored %q, want %q", got, want)
	}
	env.MustRun("verify")
	env.MustRun("lock", nginx, "--match", `^s`, "--lock", "match.lock")
	if got, want := versions("match.lock"), []string{"stable"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("locked %q, want %q", got, want)
	}
	env.Expect(2, []string{"lock", nginx + ":1.24.0", "--newest", "1", "--lock", "x.lock"}, "name it without tag or digest")
	env.Expect(2, []string{"lock", nginx, "--match", "(", "--lock", "x.lock"}, `regular expression "("`)
}

// TestE2EImagePlatform: an images: entry with `platforms: [P]` locks the
// index's manifest for P under the tag, records the platform in the lock
// and warns about digests and signatures; mirror, verify (deep, and
// resolving again) and a second lock agree; without platforms the index
// is copied whole.
func TestE2EImagePlatform(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, mirror := registrytest.New(t), registrytest.New(t)
	c := e2eClient(t)
	multi := src.Host + "/lib/multi"
	r := e2eRepo(t, c, multi)
	idx, children, err := fixture.PushImageIndex(ctx, r, "platform-e2e", "linux/amd64", "linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Tag(ctx, idx, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	env := clitest.New(t)
	env.WriteFile("ferry.yaml", fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nimages:\n  - ref: %s:1.0.0\n    platforms: [linux/arm64]\nmirror:\n  to: %s/m\n", multi, mirror.Host))
	res := env.MustRun("lock")
	if !strings.Contains(res.Stderr, "only linux/arm64 is kept") {
		t.Errorf("lock did not warn:\n%s", res.Stderr)
	}
	first := env.ReadFile("ferry.lock")
	p := e2eReadLock(t, env, "ferry.lock").Package(multi)
	if p == nil || p.Digest != children["linux/arm64"].Digest.String() || p.Version != "1.0.0" || p.Attributes["platform"] != "linux/arm64" {
		t.Fatalf("locked %+v, want linux/arm64's %s:\n%s", p, children["linux/arm64"].Digest, first)
	}
	env.MustRun("lock")
	if again := env.ReadFile("ferry.lock"); again != first {
		t.Errorf("a second lock differs:\n%s\n---\n%s", first, again)
	}
	env.MustRun("mirror")
	mirrored := e2eReadLock(t, env, "ferry.lock").Package(multi).Mirror
	if got, err := e2eRepo(t, c, mirrored).Resolve(ctx, "1.0.0"); err != nil || got.Digest != children["linux/arm64"].Digest {
		t.Fatalf("%s:1.0.0 = %v, %v; want %s", mirrored, got.Digest, err, children["linux/arm64"].Digest)
	}
	env.MustRun("verify")
	env.MustRun("verify", "--deep")
	env.MustRun("verify", "--resolve")
	env.MustRun("install", "--dest", "inst")

	// Without platforms: the index whole.
	env.WriteFile("whole.yaml", fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nimages:\n  - ref: %s:1.0.0\n", multi))
	env.MustRun("lock", "--config", "whole.yaml", "--lock", "whole.lock")
	if p := e2eReadLock(t, env, "whole.lock").Package(multi); p == nil || p.Digest != idx.Digest.String() || p.Attributes["platform"] != "" {
		t.Fatalf("locked %+v, want the index %s", p, idx.Digest)
	}
}
