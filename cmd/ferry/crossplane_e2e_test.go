package main

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

// crossplaneWorld is a source registry seeded with the Porter and
// Crossplane catalogs, and an empty mirror.
type crossplaneWorld struct {
	src, mirror *registrytest.Registry
	porter      *fixture.Catalog
	xp          *fixture.CrossplaneCatalog
	client      *client.Client
}

func newCrossplaneWorld(t *testing.T) *crossplaneWorld {
	t.Helper()
	ctx := context.Background()
	w := &crossplaneWorld{src: registrytest.New(t), mirror: registrytest.New(t)}
	c := registrytest.Client(t)
	w.client = c
	var err error
	if w.porter, err = fixture.Seed(ctx, c, w.src.Host); err != nil {
		t.Fatal(err)
	}
	if w.xp, err = fixture.SeedCrossplane(ctx, c, w.src.Host); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestCrossplaneMixedClosure: one ferry.yaml whose roots are a Porter bundle
// and Crossplane Configurations gives one lock, one mirror run (after the
// layout check refuses a prefix that breaks partial references) and one
// install, with the source registry stopped.
func TestCrossplaneMixedClosure(t *testing.T) {
	t.Parallel()
	w := newCrossplaneWorld(t)
	feed := mixintest.NewFeed(t)
	env := clitest.New(t)
	// The diamond bundle was built with the exec mixin: its feed is local.
	env.WriteFile("ferry.yaml", `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: `+w.porter.Diamond+`
  - ref: `+w.xp.Transitive+`
  - ref: `+w.xp.Moved+`
mixins:
  - name: exec
    version: v1.2.3
    feed: `+feed.URL+`
platforms: [linux/amd64]
`)
	env.MustRun("lock")
	l, err := lock.Read(env.Path("ferry.lock"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, p := range l.Resolved() {
		kinds[p.Kind]++
	}
	if kinds["porter.bundle"] != 4 || kinds["crossplane.configuration"] == 0 || kinds["crossplane.provider"] == 0 || kinds["crossplane.function"] == 0 {
		t.Fatalf("kinds in the lock: %v", kinds)
	}
	// The replaced provider is recorded, not resolved.
	old := l.Package(w.xp.MovedOld)
	if old == nil || old.ReplacedBy != w.xp.MovedNew || old.Digest != "" {
		t.Fatalf("replaced source entry: %+v", old)
	}
	if nw := l.Package(w.xp.MovedNew); nw == nil || len(nw.Replaces) != 1 || nw.Replaces[0] != w.xp.MovedOld {
		t.Fatalf("replacing entry: %+v", nw)
	}
	why := env.MustRun("why", w.xp.MovedOld)
	if !strings.Contains(why.Stdout, "replaced by "+w.xp.MovedNew) || !strings.Contains(why.Stdout, "uses-old") || strings.Contains(why.Stdout, "uses-new") {
		t.Fatalf("why %s:\n%s", w.xp.MovedOld, why.Stdout)
	}

	// A prefix breaks the org/name references of platform-org: refused
	// before anything is copied, with a --to that works.
	w.mirror.Reset()
	env.Expect(2, []string{"mirror", "--to", w.mirror.Host + "/prefix"}, "breaks", `"xp/provider-sql"`, "use --to "+w.mirror.Host)
	for _, r := range w.mirror.Requests() {
		if r.Method != "GET" && r.Method != "HEAD" {
			t.Fatalf("refused mirror wrote to the registry: %s %s", r.Method, r.Path)
		}
	}
	env.MustRun("mirror", "--to", w.mirror.Host)
	env.MustRun("verify", "--deep")

	// Byte-exact: every package has the source digest in the mirror, and
	// the replaced source was not mirrored.
	ctx := context.Background()
	l, _ = lock.Read(env.Path("ferry.lock"))
	for _, p := range l.Resolved() {
		repo, err := w.client.Repository(p.Mirror)
		if err != nil {
			t.Fatal(err)
		}
		desc, err := repo.Resolve(ctx, p.Version)
		if err != nil || desc.Digest.String() != p.Digest {
			t.Fatalf("%s:%s in the mirror: %v %v, want %s", p.Mirror, p.Version, desc.Digest, err, p.Digest)
		}
	}
	oldRepo, _ := w.client.Repository(w.mirror.Host + "/xp/old-org/provider-x")
	if err := oldRepo.Tags(ctx, "", func([]string) error { return nil }); err == nil {
		t.Errorf("the replaced source was mirrored")
	}

	w.src.Stop()
	env.MustRun("install", "--dest", "out")
	checkCrossplaneInstall(t, env.Path("out/crossplane"), l, w.mirror.Host)
}

// checkCrossplaneInstall parses every document back into the upstream
// shapes and checks the pins against the lock.
func checkCrossplaneInstall(t *testing.T, dir string, l *lock.Lock, mirrorHost string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	byMirror := map[string]*lock.Package{}
	for _, p := range l.Resolved() {
		byMirror[p.Mirror+"@"+p.Digest] = p
	}
	var pkgs int
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
			Spec struct {
				Package                  string `yaml:"package"`
				SkipDependencyResolution *bool  `yaml:"skipDependencyResolution"`
				MatchImages              []struct {
					Type   string `yaml:"type"`
					Prefix string `yaml:"prefix"`
				} `yaml:"matchImages"`
				RewriteImage struct {
					Prefix string `yaml:"prefix"`
				} `yaml:"rewriteImage"`
			} `yaml:"spec"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if doc.Metadata.Name == "" {
			t.Errorf("%s: no metadata.name", n)
		}
		switch doc.Kind {
		case "ImageConfig":
			if doc.APIVersion != "pkg.crossplane.io/v1beta1" || len(doc.Spec.MatchImages) == 0 || !strings.HasPrefix(doc.Spec.RewriteImage.Prefix, mirrorHost) {
				t.Errorf("%s: %+v", n, doc)
			}
		case "Configuration", "Provider", "Function":
			pkgs++
			p := byMirror[doc.Spec.Package]
			if doc.APIVersion != "pkg.crossplane.io/v1" || p == nil || doc.Spec.SkipDependencyResolution == nil || !*doc.Spec.SkipDependencyResolution {
				t.Errorf("%s: %+v (pinned package in lock: %v)", n, doc, p != nil)
			}
		default:
			t.Errorf("%s: unexpected kind %q", n, doc.Kind)
		}
	}
	want := 0
	for _, p := range l.Resolved() {
		if strings.HasPrefix(p.Kind, "crossplane.") {
			want++
		}
	}
	if pkgs != want {
		t.Errorf("%d package manifests, want %d (%v)", pkgs, want, names)
	}
}

// TestCrossplaneUserReplace: a user replace in ferry.yaml redirects every
// edge to the replaced source, which is neither resolved nor mirrored.
func TestCrossplaneUserReplace(t *testing.T) {
	t.Parallel()
	w := newCrossplaneWorld(t)
	env := clitest.New(t)
	env.WriteFile("ferry.yaml", `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: `+w.xp.UsesOld+`
replace:
  - from: `+w.xp.MovedOld+`
    to: `+w.xp.MovedNew+`
`)
	env.MustRun("lock")
	l, err := lock.Read(env.Path("ferry.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if p := l.Package(w.xp.MovedOld); p == nil || p.ReplacedBy != w.xp.MovedNew {
		t.Fatalf("replaced entry: %+v", p)
	}
	if p := l.Package(w.xp.MovedNew); p == nil || p.Digest == "" {
		t.Fatalf("replacement not resolved: %+v", p)
	}
	env.Expect(0, []string{"why", w.xp.MovedOld, "-o", "json"}, `"replacedBy"`)
}

// TestCrossplaneBadInput: each malformed package gets a clear error that
// names the package chain, a non-zero exit, and no lock.
func TestCrossplaneBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := registrytest.New(t)
	c := registrytest.Client(t)
	push := func(repo string, p fixture.Xpkg) string {
		t.Helper()
		r, err := c.Repository(src.Host + "/bad/" + repo)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Tags) == 0 {
			p.Tags = []string{"v1.0.0"}
		}
		if _, err := fixture.PushXpkg(ctx, r, p); err != nil {
			t.Fatal(err)
		}
		return src.Host + "/bad/" + repo + ":" + p.Tags[0]
	}
	parent := func(repo, dep string) string {
		return push(repo, fixture.Xpkg{Kind: "Configuration", Name: repo, DependsOn: []fixture.XpkgDependency{{Configuration: src.Host + "/bad/" + dep, Version: ">=v1.0.0"}}})
	}
	push("no-meta", fixture.Xpkg{Name: "no-meta", PackageYAML: []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\n")})
	push("unknown-kind", fixture.Xpkg{Name: "unknown-kind", PackageYAML: []byte("apiVersion: meta.pkg.crossplane.io/v1\nkind: Widget\nmetadata: {name: w}\n")})
	push("both", fixture.Xpkg{Name: "both", PackageYAML: []byte("apiVersion: meta.pkg.crossplane.io/v1\nkind: Configuration\nmetadata: {name: both}\nspec:\n  dependsOn:\n    - package: " + src.Host + "/bad/x\n      provider: " + src.Host + "/bad/x\n      version: '>=v1.0.0'\n")})
	push("loop-a", fixture.Xpkg{Kind: "Provider", Name: "loop-a", Replaces: []string{src.Host + "/bad/loop-b"}})
	push("loop-b", fixture.Xpkg{Kind: "Provider", Name: "loop-b", Replaces: []string{src.Host + "/bad/loop-a"}})
	loops := push("loops", fixture.Xpkg{Kind: "Configuration", Name: "loops", DependsOn: []fixture.XpkgDependency{
		{Provider: src.Host + "/bad/loop-a", Version: ">=v1.0.0"},
		{Provider: src.Host + "/bad/loop-b", Version: ">=v1.0.0"},
	}})

	xp, err := fixture.SeedCrossplane(ctx, c, src.Host)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		root string
		want []string
	}{
		{"no meta object", parent("p1", "no-meta"), []string{"bad/p1:v1.0.0 -> ", "bad/no-meta", "meta"}},
		{"unknown kind", parent("p2", "unknown-kind"), []string{"bad/p2:v1.0.0 -> ", "bad/unknown-kind", "Widget"}},
		{"package and provider", parent("p3", "both"), []string{"bad/p3:v1.0.0 -> ", "bad/both", "provider"}},
		{"digest pins disagree", xp.DigestConflict, []string{"function-patch", "pins sha256:", ">=v0.2.0 <v0.3.0", "acme/conflict:v1.0.0 -> "}},
		{"replaces cycle", loops, []string{"replaces cycle", "bad/loop-a", "bad/loop-b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := clitest.New(t)
			r := env.Run("lock", tt.root)
			if r.Code == 0 {
				t.Fatalf("lock %s succeeded:\n%s", tt.root, r.Stdout)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("error lacks %q:\n%s", w, r.Stderr)
				}
			}
			if _, err := os.Stat(env.Path("ferry.lock")); !os.IsNotExist(err) {
				t.Errorf("a lock was written after a failure")
			}
		})
	}
}

// TestCrossplanePrefixInstallByDigest: `--to HOST/PREFIX` breaks the
// org/name references of platform-org (relocate.BrokenEdges, by the
// one-pager's rule in crossplane/qualify.go); --install-by-digest allows
// it, naming each broken reference, because `ferry install` pins every
// package to MIRROR@DIGEST with spec.skipDependencyResolution: true and
// Crossplane then never qualifies a dependency (crossplane
// internal/controller/pkg/revision/reconciler.go: r.lock.Resolve runs only
// when GetSkipDependencyResolution() is false). With the source stopped,
// every manifest names a digest the mirror holds under the prefix.
func TestCrossplanePrefixInstallByDigest(t *testing.T) {
	t.Parallel()
	w := newCrossplaneWorld(t)
	env := clitest.New(t)
	env.WriteFile("ferry.yaml", `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: `+w.xp.Transitive+`
`)
	env.MustRun("lock")
	to := w.mirror.Host + "/prefix"
	// Without the flag: refused, naming the flag that allows it.
	env.Expect(2, []string{"mirror", "--to", to}, "breaks", `"xp/provider-sql"`, "--install-by-digest")
	res := env.MustRun("mirror", "--to", to, "--install-by-digest")
	if !strings.Contains(res.Stderr, "warning: --install-by-digest") || !strings.Contains(res.Stderr, `"xp/provider-sql"`) {
		t.Fatalf("mirror --install-by-digest names no broken reference:\n%s", res.Stderr)
	}
	l, err := lock.Read(env.Path("ferry.lock"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Resolved() {
		if !strings.HasPrefix(p.Mirror, to+"/") {
			t.Errorf("%s mirrored at %s, not under %s", p.Source, p.Mirror, to)
		}
	}
	w.src.Stop()
	env.MustRun("verify")
	env.MustRun("install", "--dest", "out")
	checkCrossplaneInstall(t, env.Path("out/crossplane"), l, to)
	// Every pin is a manifest the mirror serves by digest.
	ctx := context.Background()
	files, _ := filepath.Glob(env.Path("out/crossplane/[0-9]*.yaml"))
	if len(files) == 0 {
		t.Fatal("no package manifests")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Spec struct {
				Package string `yaml:"package"`
			} `yaml:"spec"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		repoName, dg, ok := strings.Cut(doc.Spec.Package, "@")
		if !ok || !strings.HasPrefix(repoName, to+"/") {
			t.Fatalf("%s: package %q is not MIRROR/PREFIX/...@DIGEST", f, doc.Spec.Package)
		}
		repo, err := w.client.Repository(repoName)
		if err != nil {
			t.Fatal(err)
		}
		if desc, err := repo.Resolve(ctx, dg); err != nil || desc.Digest.String() != dg {
			t.Errorf("%s: %s not in the mirror: %v", f, doc.Spec.Package, err)
		}
	}
}

// TestCrossplaneVersionQualifies: a local crossplane.yaml's
// spec.crossplane.version selects the default registry its
// dependencies without one take (crossplane.RegistryEras, after
// crossplane/crossplane internal/xpkg/name.go DefaultRegistry before and
// after v1.20.0 and v2.0.0); the locked source is that registry's name,
// read through `mirrors:`, and the install pins the mirrored copy with
// the source stopped. A range spanning two rules is bad input.
func TestCrossplaneVersionQualifies(t *testing.T) {
	t.Parallel()
	w := newCrossplaneWorld(t)
	env := clitest.New(t)
	env.WriteFile("ferry.yaml", `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - path: crossplane.yaml
mirrors:
  xpkg.upbound.io: `+w.src.Host+`/xp
  xpkg.crossplane.io: `+w.src.Host+`/xp
  docker.io: `+w.src.Host+`/xp
`)
	write := func(version string) {
		env.WriteFile("crossplane.yaml", `apiVersion: meta.pkg.crossplane.io/v1
kind: Configuration
metadata:
  name: platform
spec:
  crossplane:
    version: "`+version+`"
  dependsOn:
    - provider: crossplane-contrib/provider-nop
      version: ">=v0.3.0 <v1.0.0"
`)
	}
	for _, tt := range []struct{ version, source string }{
		{">=v1.14.1-0 <v1.20.0", "xpkg.upbound.io/crossplane-contrib/provider-nop"},
		{">=v2.0.0", "docker.io/crossplane-contrib/provider-nop"},
		{"^v1.20.0", "xpkg.crossplane.io/crossplane-contrib/provider-nop"},
	} {
		write(tt.version)
		env.MustRun("lock", "--offline")
		l, err := lock.Read(env.Path("ferry.lock"))
		if err != nil {
			t.Fatal(err)
		}
		if p := l.Package(tt.source); p == nil || p.Version != "v0.4.0" || len(l.Resolved()) != 1 {
			t.Fatalf("crossplane.version %q: lock %+v, want %s at v0.4.0", tt.version, l.Resolved(), tt.source)
		}
	}
	// ferry.yaml's mirrors: do not reach the copy of a closure whose
	// root is a local crossplane.yaml (its MirrorSet is the file's); the flag does.
	env.MustRun("mirror", "--to", w.mirror.Host+"/mirror", "--offline", "--mirror-source", "xpkg.crossplane.io="+w.src.Host+"/xp")
	w.src.Stop()
	env.MustRun("install", "--dest", "out")
	l, _ := lock.Read(env.Path("ferry.lock"))
	checkCrossplaneInstall(t, env.Path("out/crossplane"), l, w.mirror.Host+"/mirror")

	write(">=v1.14.0")
	env.Expect(2, []string{"lock", "--offline"}, `"crossplane-contrib/provider-nop" names no registry`, "xpkg.upbound.io before v1.20.0", "crossplane.defaultRegistry")
}
