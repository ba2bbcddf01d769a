package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/verify"
)

// TestE2ETagsOfOneDigest: two roots app/web:1.0.0 and app/web:1.0 of one
// digest are one package that keeps both tags: the lock records the
// second in `tags:` (byte-identical on a second run), every way of
// mirroring pushes both (registry, archive out and in, mirror to mirror,
// sharded), a pull by either tag from the mirror gets the locked digest,
// install's relocation mapping and plan name both, and verify and install
// exit 3 naming the tag when one is deleted from the mirror or moved to
// other content. Adding a tag to the inputs makes the lock stale; locked again,
// diff reports the tag added.
func TestE2ETagsOfOneDigest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, mirror := registrytest.New(t), registrytest.New(t)
	c := e2eClient(t)
	web := src.Host + "/app/web"
	srcRepo := e2eRepo(t, c, web)
	desc, err := fixture.PushImage(ctx, srcRepo, "tags-e2e-web", 512)
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"1.0.0", "1.0", "latest"} {
		if err := srcRepo.Tag(ctx, desc, tag); err != nil {
			t.Fatal(err)
		}
	}
	env := clitest.New(t)
	to := mirror.Host + "/m"
	ferryYAML := func(tags ...string) {
		var b strings.Builder
		b.WriteString("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n")
		for _, tag := range tags {
			fmt.Fprintf(&b, "  - ref: %s:%s\n", web, tag)
		}
		fmt.Fprintf(&b, "mirror:\n  to: %s\n", to)
		env.WriteFile("ferry.yaml", b.String())
	}
	ferryYAML("1.0.0", "1.0")

	// Lock: one package, both tags.
	env.MustRun("lock")
	first := env.ReadFile("ferry.lock")
	l := e2eReadLock(t, env, "ferry.lock")
	if n := len(l.Resolved()); n != 1 {
		t.Fatalf("lock holds %d packages, want 1:\n%s", n, first)
	}
	p := l.Package(web)
	if p == nil || p.Digest != desc.Digest.String() || !slices.Equal(p.AllTags(), []string{"1.0", "1.0.0"}) {
		t.Fatalf("locked %+v, want %s at tags 1.0 and 1.0.0:\n%s", p, desc.Digest, first)
	}
	if !strings.Contains(first, "    version: \"1.0\"\n    tags:\n      - 1.0.0\n") {
		t.Errorf("lock lacks tags: after version:\n%s", first)
	}
	// -o json of resolve and lock match their schemas with the tags.
	outJSON(t, env, "resolve", nil, "resolve")
	outJSON(t, env, "lock", nil, "lock")
	if again := env.ReadFile("ferry.lock"); again != first {
		t.Fatalf("second lock differs:\n%s\n---\n%s", first, again)
	}

	// pulled checks that every tag pulls the locked digest from repo.
	pulled := func(repo string, tags ...string) {
		t.Helper()
		r := e2eRepo(t, c, repo)
		for _, tag := range tags {
			got, rc, err := r.FetchReference(ctx, tag)
			if err != nil {
				t.Fatalf("pulling %s:%s: %v", repo, tag, err)
			}
			rc.Close()
			if got.Digest != desc.Digest {
				t.Fatalf("%s:%s is %s, want %s", repo, tag, got.Digest, desc.Digest)
			}
		}
	}

	// Mirror to a registry: both tags.
	r := outJSON(t, env, "mirror", nil, "mirror")
	if !strings.Contains(r.Stdout, `"tags": [`) {
		t.Errorf("mirror -o json lists no tags:\n%s", r.Stdout)
	}
	l = e2eReadLock(t, env, "ferry.lock")
	mirrored := l.Package(web).Mirror
	pulled(mirrored, "1.0", "1.0.0")
	env.MustRun("verify")
	env.MustRun("verify", "--deep")

	// Through an archive, and mirror to mirror.
	mirror2, mirror3 := registrytest.New(t), registrytest.New(t)
	env.MustRun("mirror", "--lock", "ferry.lock", "--to-archive", "web.tar")
	env.MustRun("verify", "--archive", "web.tar")
	r = outJSON(t, env, "mirror", nil, "mirror", "--from-archive", "web.tar", "--to", mirror2.Host+"/m")
	if strings.Contains(r.Stdout, `"ignored"`) {
		t.Errorf("import ignored a tag of the lock:\n%s", r.Stdout)
	}
	pulled(strings.Replace(mirrored, mirror.Host, mirror2.Host, 1), "1.0", "1.0.0")
	env.MustRun("mirror", "--lock", "ferry.lock", "--from", to, "--to", mirror3.Host+"/m")
	pulled(strings.Replace(mirrored, mirror.Host, mirror3.Host, 1), "1.0", "1.0.0")
	mirror4 := registrytest.New(t)
	env.MustRun("mirror", "--lock", "ferry.lock", "--to", mirror4.Host+"/m", "--shard", "1/1")
	pulled(strings.Replace(mirrored, mirror.Host, mirror4.Host, 1), "1.0", "1.0.0")
	env.MustRun("verify", "--mirror", mirror3.Host+"/m")
	// The lock records the last mirror: mirror to the first again.
	env.MustRun("mirror")
	if got := e2eReadLock(t, env, "ferry.lock").Package(web).Mirror; got != mirrored {
		t.Fatalf("lock records mirror %s, want %s", got, mirrored)
	}

	// Install: the relocation mapping and the plan name both tags.
	outJSON(t, env, "install", nil, "install", "--dest", "inst")
	var relocation map[string]string
	e2eJSONFile(t, filepath.Join(env.Path("inst"), install.RelocationFile), &relocation)
	for _, tag := range []string{"1.0", "1.0.0"} {
		if got, want := relocation[web+":"+tag], mirrored+"@"+desc.Digest.String(); got != want {
			t.Errorf("relocation %s:%s = %q, want %q", web, tag, got, want)
		}
	}
	var plan install.Plan
	e2eJSONFile(t, filepath.Join(env.Path("inst"), install.PlanFile), &plan)
	if len(plan.Steps) != 1 || plan.Steps[0].Version != "1.0" || !slices.Equal(plan.Steps[0].Tags, []string{"1.0.0"}) {
		t.Errorf("plan steps %+v", plan.Steps)
	}

	// The extra tag deleted from the mirror: verify and install exit 3
	// naming it.
	tagDir := filepath.Join(mirror.Root, "docker", "registry", "v2", "repositories", strings.TrimPrefix(mirrored, mirror.Host+"/"), "_manifests", "tags", "1.0.0")
	if _, err := os.Stat(tagDir); err != nil {
		t.Fatalf("the mirror's tag: %v", err)
	}
	if err := os.RemoveAll(tagDir); err != nil {
		t.Fatal(err)
	}
	env.Expect(3, []string{"verify"}, mirrored+":1.0.0", "tag 1.0.0 is missing from the mirror")
	r = env.Expect(3, []string{"verify", "-o", "json"})
	var vrep verify.Report
	if err := json.Unmarshal([]byte(r.Stdout), &vrep); err != nil {
		t.Fatalf("verify -o json: %v\n%s", err, r.Stdout)
	}
	if len(vrep.Problems) != 1 || vrep.Problems[0].Kind != verify.ProblemTag || vrep.Problems[0].Ref != mirrored+":1.0.0" {
		t.Errorf("verify problems %+v", vrep.Problems)
	}
	env.Expect(3, []string{"install", "--dest", "inst2"}, "tag "+mirrored+":1.0.0 is missing from the mirror")

	// Moved to other content: exit 3 naming it.
	mirrorRepo := e2eRepo(t, c, mirrored)
	other, err := fixture.PushImage(ctx, mirrorRepo, "tags-e2e-other", 512)
	if err != nil {
		t.Fatal(err)
	}
	if err := mirrorRepo.Tag(ctx, other, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	env.Expect(3, []string{"verify"}, mirrored+":1.0.0", "tag 1.0.0 points at "+other.Digest.String())
	env.Expect(3, []string{"install", "--dest", "inst2"}, "tag "+mirrored+":1.0.0 points at "+other.Digest.String())
	// Mirrored again, the tag is put back.
	env.MustRun("mirror")
	env.MustRun("verify")

	// A tag added to the inputs: the lock is stale; locked again, the
	// new tag is locked, and diff says so.
	if err := os.WriteFile(env.Path("old.lock"), []byte(env.ReadFile("ferry.lock")), 0o644); err != nil {
		t.Fatal(err)
	}
	ferryYAML("1.0.0", "1.0", "latest")
	env.Expect(3, []string{"verify"}, "changed since the lock was written")
	env.MustRun("lock")
	if p := e2eReadLock(t, env, "ferry.lock").Package(web); !slices.Equal(p.AllTags(), []string{"1.0", "1.0.0", "latest"}) {
		t.Fatalf("relocked tags %q", p.AllTags())
	}
	env.Expect(0, []string{"diff", "old.lock", "ferry.lock"}, "+ tag "+web+" latest "+desc.Digest.String())
	var d diffJSON
	outJSON(t, env, "diff", &d, "diff", "old.lock", "ferry.lock")
	if want := (lock.Change{Op: lock.OpAdded, Kind: "tag", Name: web, NewVersion: "latest", NewDigest: desc.Digest.String()}); len(d.Changes) != 1 || d.Changes[0] != want || d.Identical {
		t.Errorf("diff -o json %+v, want %+v", d, want)
	}
	env.MustRun("mirror")
	pulled(mirrored, "1.0", "1.0.0", "latest")
	env.MustRun("verify")
}

// TestE2EChartImageTags: a chart deploying one image by two tags of one
// digest (nginx:1.25 and nginx:1.25.3) locks the image once with both
// tags, and the mirror answers both.
func TestE2EChartImageTags(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, mirror := registrytest.New(t), registrytest.New(t)
	c := e2eClient(t)
	nginx := src.Host + "/library/nginx"
	repo := e2eRepo(t, c, nginx)
	desc, err := fixture.PushImage(ctx, repo, "tags-e2e-nginx", 512)
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"1.25", "1.25.3"} {
		if err := repo.Tag(ctx, desc, tag); err != nil {
			t.Fatal(err)
		}
	}
	tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "two", Version: "1.0.0", Templates: map[string]string{
		"a.yaml": deployment("a", nginx+":1.25"),
		"b.yaml": deployment("b", nginx+":1.25.3"),
	}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := charttest.PushChart(tgz, src.Host+"/charts", chartCreated); err != nil {
		t.Fatal(err)
	}
	env := clitest.New(t)
	env.MustRun("lock", src.Host+"/charts/two:1.0.0")
	l := e2eReadLock(t, env, "ferry.lock")
	var images []*lock.Package
	for _, p := range l.Resolved() {
		if p.Source == nginx {
			images = append(images, p)
		}
	}
	if len(images) != 1 || images[0].Digest != desc.Digest.String() || !slices.Equal(images[0].AllTags(), []string{"1.25", "1.25.3"}) {
		t.Fatalf("nginx locked as %+v, want one package at tags 1.25 and 1.25.3", images)
	}
	env.MustRun("mirror", "--to", mirror.Host+"/m")
	mirrored := e2eReadLock(t, env, "ferry.lock").Package(nginx).Mirror
	r := e2eRepo(t, c, mirrored)
	for _, tag := range []string{"1.25", "1.25.3"} {
		got, err := r.Resolve(ctx, tag)
		if err != nil || got.Digest != desc.Digest {
			t.Fatalf("%s:%s = %v, %v; want %s", mirrored, tag, got.Digest, err, desc.Digest)
		}
	}
	env.MustRun("verify")
}
