package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/crossplane"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
)

// realworldUpboundDir holds upbound's configurations (platform-ref-*,
// configuration-*), unchanged (testdata/realworld/README.md).
var realworldUpboundDir = filepath.Join("..", "..", "testdata", "realworld", "crossplane", "upbound")

// realworldXpkgLeafTags are the versions every provider and function is
// published at, beside the exact versions a configuration asks: each
// constraint of the real configurations is met by one of them, several
// by more than one.
var realworldXpkgLeafTags = []string{"v0.9.0", "v0.12.1", "v1.20.0", "v1.23.0", "v2.0.0", "v2.1.0"}

// realworldXpkgBaseTag is a version every vendored configuration is
// published at besides those the others ask of it.
const realworldXpkgBaseTag = "v0.1.0"

// realworldXpkgConflicts are the roots whose closure holds no version of
// some package satisfying every constraint on it, by Crossplane's rule as
// by ferry's. The vendored configurations are each repository's newest,
// published at the versions the platforms pin: configuration-app and
// configuration-observability-oss ask provider-helm "v0",
// configuration-gitops-flux (and configuration-aws-eks) "v1", and every
// platform installs both. Crossplane's resolver, one version per package,
// cannot install them; ferry refuses them naming the package.
var realworldXpkgConflicts = map[string][]string{
	"platform-ref-aws":   {"provider-helm", "provider-kubernetes"},
	"platform-ref-azure": {"provider-helm"},
	"platform-ref-gcp":   {"provider-helm"},
}

// xpkgWorld is what the test publishes: every package's tags, and the
// dependsOn of each configuration by package name.
type xpkgWorld struct {
	tags map[string][]string
	deps map[string][]crossplane.Dependency
}

// crossplaneClosure is Crossplane's rule for root at tag
// (internal/controller/pkg/resolver/reconciler.go with
// internal/dag: a cluster holds one version of each package, the
// highest valid version satisfying every constraint the installed
// packages put on it; crossplane/format.go Policy cites it): the
// closure's packages as PACKAGE:VERSION, sorted, or the packages no
// published version satisfies. Every published version of a
// configuration has the same dependsOn here, so the closure's packages
// do not depend on the versions chosen.
func (w xpkgWorld) crossplaneClosure(t *testing.T, root, tag string) (closure, conflicts []string) {
	t.Helper()
	constraints := map[string][]string{root: {tag}}
	seen := map[string]bool{root: true}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, d := range w.deps[p] {
			constraints[d.Package] = append(constraints[d.Package], d.Version)
			if !seen[d.Package] {
				seen[d.Package] = true
				queue = append(queue, d.Package)
			}
		}
	}
	for p, cs := range constraints {
		var best *semver.Version
		for _, tag := range w.tags[p] {
			v := semver.MustParse(tag)
			ok := true
			for _, c := range cs {
				con, err := semver.NewConstraint(c)
				if err != nil {
					t.Fatalf("%s: %v", c, err)
				}
				ok = ok && con.Check(v)
			}
			if ok && (best == nil || v.GreaterThan(best)) {
				best = v
			}
		}
		if best == nil {
			conflicts = append(conflicts, p)
			continue
		}
		closure = append(closure, p+":"+best.Original())
	}
	sort.Strings(closure)
	sort.Strings(conflicts)
	return closure, conflicts
}

// TestRealworldCrossplaneLockOffline publishes upbound's real
// configurations as xpkgs built by code from the vendored files (an
// upbound.yaml as the Configuration `up project build` makes of it, a
// crossplane.yaml as its package.yaml, byte for byte), at
// xpkg.upbound.io/... names served only through ferry.yaml `mirrors:` by
// a loopback registry, with every configuration they ask that is not
// vendored as a package without dependencies at the version asked, and
// every provider and function as a minimal xpkg at versions meeting the
// constraints. Each configuration is then locked ALONE as ROOT with
// `ferry lock --offline`; the older crossplane.yaml of
// configuration-observability-oss as a local ROOT. The lock names
// xpkg.upbound.io/..., never the mirror, and holds exactly the closure
// Crossplane's rule gives (crossplaneClosure); a root whose closure
// Crossplane cannot install (realworldXpkgConflicts) fails naming the
// package.
func TestRealworldCrossplaneLockOffline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const upbound = "xpkg.upbound.io/upbound/"
	ents, err := os.ReadDir(realworldUpboundDir)
	if err != nil {
		t.Fatal(err)
	}
	type vendored struct {
		file string
		meta *crossplane.Meta
		raw  []byte // a crossplane.yaml: package.yaml as it is
	}
	configs := map[string]vendored{} // by package
	var localRoot string             // the older form of a configuration also vendored as upbound.yaml
	w := xpkgWorld{tags: map[string][]string{}, deps: map[string][]crossplane.Dependency{}}
	kinds := map[string]string{}
	addTag := func(p, tag string) {
		if !slices.Contains(w.tags[p], tag) {
			w.tags[p] = append(w.tags[p], tag)
		}
	}
	exact := regexp.MustCompile(`^v\d+\.\d+\.\d+$`)
	var all []*crossplane.Meta
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(realworldUpboundDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var m *crossplane.Meta
		if strings.HasSuffix(e.Name(), ".crossplane.yaml") {
			m, err = crossplane.ParsePackageYAML(data)
		} else {
			m, err = crossplane.ProjectMeta(data)
		}
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		all = append(all, m)
		p := upbound + m.Name
		if _, twice := configs[p]; twice || (strings.HasSuffix(e.Name(), ".crossplane.yaml") && fileExists(filepath.Join(realworldUpboundDir, m.Name+".upbound.yaml"))) {
			localRoot = e.Name()
			continue
		}
		v := vendored{file: e.Name(), meta: m}
		if strings.HasSuffix(e.Name(), ".crossplane.yaml") {
			v.raw = data
		}
		configs[p] = v
		w.deps[p] = m.DependsOn
		kinds[p] = crossplane.KindConfiguration
		addTag(p, realworldXpkgBaseTag)
	}
	// Every version asked: exact ones are published, ranges met by
	// realworldXpkgLeafTags.
	for _, m := range all {
		for _, d := range m.DependsOn {
			if kinds[d.Package] == "" {
				kinds[d.Package] = d.Kind
			}
			if exact.MatchString(d.Version) {
				addTag(d.Package, d.Version)
			}
			if _, ok := configs[d.Package]; !ok && d.Kind != crossplane.KindConfiguration {
				for _, tag := range realworldXpkgLeafTags {
					addTag(d.Package, tag)
				}
			}
		}
	}

	mir := registrytest.New(t)
	c := registrytest.Client(t)
	for p, tags := range w.tags {
		repo := registrytest.Repository(t, c, mir.Host+"/upbound/"+strings.TrimPrefix(p, "xpkg.upbound.io/"))
		x := fixture.Xpkg{Kind: kinds[p], Name: p[strings.LastIndexByte(p, '/')+1:], Tags: tags}
		if v, ok := configs[p]; ok {
			x.Crossplane = v.meta.Crossplane
			x.PackageYAML = v.raw
			for _, d := range v.meta.DependsOn {
				x.DependsOn = append(x.DependsOn, fixture.XpkgDependency{APIVersion: d.APIVersion, Kind: d.Kind, Package: d.Package, Version: d.Version})
			}
		}
		// One release per tag, each recording its version as
		// docker/metadata-action does: one digest under several version
		// tags is an older release moved under a newer tag, which ferry
		// refuses.
		for _, tag := range tags {
			x.Tags, x.ManifestAnnotations = []string{tag}, map[string]string{ocispec.AnnotationVersion: tag}
			if _, err := fixture.PushXpkg(ctx, repo, x); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
	}

	env := clitest.New(t)
	env.WriteFile("ferry.yaml", fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nmirrors:\n  xpkg.upbound.io: %s/upbound\n", mir.Host))
	type rootCase struct{ name, arg, pkg, tag string }
	var roots []rootCase
	for p := range configs {
		tags := slices.Clone(w.tags[p])
		slices.SortFunc(tags, func(a, b string) int { return semver.MustParse(a).Compare(semver.MustParse(b)) })
		tag := tags[len(tags)-1]
		roots = append(roots, rootCase{name: p[len(upbound):], arg: p + ":" + tag, pkg: p, tag: tag})
	}
	sort.Slice(roots, func(i, j int) bool { return roots[i].name < roots[j].name })
	if localRoot == "" {
		t.Fatal("no configuration vendored in two forms")
	}
	// The local crossplane.yaml is no published package: its dependsOn
	// are the roots, so the closure is theirs (the root itself at a
	// version of its own, not published).
	raw, err := os.ReadFile(filepath.Join(realworldUpboundDir, localRoot))
	if err != nil {
		t.Fatal(err)
	}
	env.WriteFile(filepath.Join("local", "crossplane.yaml"), string(raw))
	lm, err := crossplane.ParsePackageYAML(raw)
	if err != nil {
		t.Fatal(err)
	}
	w.deps["local"] = lm.DependsOn
	w.tags["local"] = []string{"v0.0.0"}
	roots = append(roots, rootCase{name: localRoot, arg: filepath.Join("local", "crossplane.yaml"), pkg: "local", tag: "v0.0.0"})
	if len(roots) < 10 {
		t.Fatalf("%d roots, want at least 10", len(roots))
	}

	var conflicting []string
	for _, rc := range roots {
		want, conflicts := w.crossplaneClosure(t, rc.pkg, rc.tag)
		if rc.pkg == "local" {
			want = slices.DeleteFunc(want, func(s string) bool { return strings.HasPrefix(s, "local:") })
		}
		os.Remove(env.Path("ferry.lock"))
		r := env.Run("lock", rc.arg, "--offline", "--config", "ferry.yaml")
		if len(conflicts) > 0 {
			conflicting = append(conflicting, rc.name)
			if r.Code == 0 {
				t.Errorf("%s: locked despite %v, which no version satisfies", rc.name, conflicts)
				continue
			}
			for _, p := range conflicts {
				if !strings.Contains(r.Stderr, p) {
					t.Errorf("%s: the error does not name %s:\n%s", rc.name, p, r.Stderr)
				}
			}
			var names []string
			for _, p := range conflicts {
				names = append(names, p[strings.LastIndexByte(p, '/')+1:])
			}
			if !slices.Equal(names, realworldXpkgConflicts[rc.name]) {
				t.Errorf("%s: Crossplane's rule finds no version of %v, want %v", rc.name, names, realworldXpkgConflicts[rc.name])
			}
			t.Logf("%s: as Crossplane, no version of %v", rc.name, names)
			continue
		}
		if r.Code != 0 {
			t.Errorf("%s: ferry lock exit %d:\n%s", rc.name, r.Code, r.Stderr)
			continue
		}
		l, err := lock.Read(env.Path("ferry.lock"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range l.Packages {
			if strings.Contains(p.Source, "127.0.0.1") || !strings.HasPrefix(p.Source, "xpkg.upbound.io/") {
				t.Errorf("%s: the lock names %s, not xpkg.upbound.io/...", rc.name, p.Source)
			}
			got = append(got, p.Source+":"+p.Version)
		}
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: locked (%d):\n  %s\nwant, Crossplane's rule (%d):\n  %s", rc.name, len(got), strings.Join(got, "\n  "), len(want), strings.Join(want, "\n  "))
		}
		t.Logf("%s: %d packages, as Crossplane: %s", rc.name, len(got), strings.Join(got, " "))
	}
	var wantConflicts []string
	for n := range realworldXpkgConflicts {
		wantConflicts = append(wantConflicts, n)
	}
	sort.Strings(wantConflicts)
	if !slices.Equal(conflicting, wantConflicts) {
		t.Errorf("roots Crossplane cannot install: %v, want %v", conflicting, wantConflicts)
	}
}
