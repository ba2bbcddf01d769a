package crossplane

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/resolve"
	"github.com/ferryhq/ferry/sourcemirror"
)

// upboundDir holds upbound's configurations (platform-ref-*,
// configuration-*), unchanged (testdata/realworld/README.md).
const upboundDir = "../testdata/realworld/crossplane/upbound"

// readRealworldMeta reads a vendored file as ferry reads a ROOT: an
// upbound.yaml as the Configuration `up project build` makes of it, a
// crossplane.yaml as it is.
func readRealworldMeta(t *testing.T, file string) *Meta {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(upboundDir, file))
	if err != nil {
		t.Fatal(err)
	}
	var m *Meta
	if strings.HasSuffix(file, ProjectFileName) {
		m, err = ProjectMeta(data)
	} else {
		m, err = ParsePackageYAML(data)
	}
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m
}

// TestRealworldConfigurations reads every vendored configuration as ROOT
// (ReadInput) and checks platform-ref-aws's roots: its dependsOn in order,
// apiDependencies (schemas, not packages) left out.
func TestRealworldConfigurations(t *testing.T) {
	ents, err := os.ReadDir(upboundDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) < 10 {
		t.Fatalf("%d files, want at least 10", len(ents))
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(upboundDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		// Under its upstream name: upbound.yaml or crossplane.yaml.
		base := ProjectFileName
		if strings.HasSuffix(e.Name(), ".crossplane.yaml") {
			base = "crossplane.yaml"
		}
		m, ok, err := Format{}.ReadInput(filepath.Join("x", base), data, nil)
		if !ok || err != nil {
			t.Errorf("%s: ReadInput = %v, %v", e.Name(), ok, err)
			continue
		}
		if len(m.Packages) == 0 {
			t.Errorf("%s: no roots", e.Name())
		}
		// By content too, under another name.
		if _, ok, err := (Format{}).ReadInput("project.yaml", data, nil); !ok || err != nil {
			t.Errorf("%s by content: %v, %v", e.Name(), ok, err)
		}
	}
	data, err := os.ReadFile(filepath.Join(upboundDir, "platform-ref-aws.upbound.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	roots, err := ReadProjectRoots(data, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range roots {
		got = append(got, r.Kind+" "+r.Ref+" "+r.Constraint)
	}
	want := []string{
		"Configuration xpkg.upbound.io/upbound/configuration-aws-lb-controller v2.0.1",
		"Configuration xpkg.upbound.io/upbound/configuration-aws-network v2.0.0",
		"Configuration xpkg.upbound.io/upbound/configuration-aws-database v2.0.0",
		"Configuration xpkg.upbound.io/upbound/configuration-aws-eks v2.0.1",
		"Configuration xpkg.upbound.io/upbound/configuration-app v2.0.0",
		"Configuration xpkg.upbound.io/upbound/configuration-observability-oss v2.0.0",
		"Configuration xpkg.upbound.io/upbound/configuration-gitops-flux v2.0.0",
		"Function xpkg.upbound.io/crossplane-contrib/function-auto-ready >=v0.0.0",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("roots:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestProjectMeta pins what ferry reads of an Upbound project: a
// project without repository is refused as `up` refuses it
// (validate.go), an unknown version says how to build the package.
func TestProjectMeta(t *testing.T) {
	tests := []struct{ name, in, wantErr string }{
		{"no repository", "apiVersion: meta.dev.upbound.io/v1alpha1\nkind: Project\nmetadata: {name: p}\nspec: {}\n", "no spec.repository"},
		{"no name", "apiVersion: meta.dev.upbound.io/v2alpha1\nkind: Project\nspec: {repository: x}\n", "no metadata.name"},
		{"unknown version", "apiVersion: meta.dev.upbound.io/v9\nkind: Project\nmetadata: {name: p}\nspec: {repository: x}\n", "up project build"},
		{"bad dependency", "apiVersion: meta.dev.upbound.io/v2alpha1\nkind: Project\nmetadata: {name: p}\nspec: {repository: x, dependsOn: [{version: v1}]}\n", "names no package"},
		{"v1alpha1", "apiVersion: meta.dev.upbound.io/v1alpha1\nkind: Project\nmetadata: {name: p}\nspec:\n  repository: x\n  crossplane: {version: '>=v1.17'}\n  dependsOn: [{provider: xpkg.upbound.io/upbound/provider-aws-s3, version: v1}]\n", ""},
	}
	for _, tt := range tests {
		m, err := ProjectMeta([]byte(tt.in))
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.wantErr == "" && (m.Kind != KindConfiguration || m.Crossplane != ">=v1.17" || len(m.DependsOn) != 1):
			t.Errorf("%s: %+v", tt.name, m)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

// leafTags are the versions each provider and function of the closure is
// published at: every constraint of the real configurations is met by
// one of them, and several are met by more than one.
var leafTags = []string{"v0.9.0", "v0.12.1", "v1.20.0", "v1.23.0", "v2.0.0", "v2.1.0"}

// TestRealworldResolve publishes platform-ref-aws's closure on a loopback
// registry, built by code in the real xpkg format: each configuration
// from its vendored upbound.yaml (or crossplane.yaml) as `up project
// build` makes it, tagged with the version platform-ref-aws asks, and
// each provider and function as a minimal package at leafTags; the
// registry mirrors xpkg.upbound.io at /upbound (ferry.yaml `mirrors:`),
// read offline. It resolves the upbound.yaml ROOT and compares the
// closure, named xpkg.upbound.io/..., with Crossplane's rule computed
// here: one version per package, the highest that satisfies every
// constraint on it (internal/controller/pkg/resolver, Format.Policy).
func TestRealworldResolve(t *testing.T) {
	metas := map[string]*Meta{}
	ents, err := os.ReadDir(upboundDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".crossplane.yaml") && strings.HasPrefix(e.Name(), "configuration-observability-oss") {
			continue // its upbound.yaml is the current form
		}
		m := readRealworldMeta(t, e.Name())
		metas["xpkg.upbound.io/upbound/"+m.Name] = m
	}
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	ctx := context.Background()
	table, err := sourcemirror.New([]sourcemirror.Entry{{Prefix: "xpkg.upbound.io", Locations: []string{reg.Host + "/upbound"}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	regs := sourcemirror.Registries{Inner: c, Table: table}
	redirect := func(repo string) string {
		return reg.Host + "/upbound/" + strings.TrimPrefix(repo, "xpkg.upbound.io/")
	}
	deps := func(m *Meta) []fixture.XpkgDependency {
		var out []fixture.XpkgDependency
		for _, d := range m.DependsOn {
			out = append(out, fixture.XpkgDependency{APIVersion: d.APIVersion, Kind: d.Kind, Package: d.Package, Version: d.Version})
		}
		return out
	}
	// Walk the closure by the packages' dependsOn: configurations at the
	// version asked, leaves collecting their constraints.
	constraints := map[string][]string{}
	kinds := map[string]string{}
	pushed := map[string]string{}
	var walk func(m *Meta)
	walk = func(m *Meta) {
		for _, d := range m.DependsOn {
			if cm, ok := metas[d.Package]; ok && d.Kind == KindConfiguration {
				if v, done := pushed[d.Package]; done {
					if v != d.Version {
						t.Fatalf("%s asked at %s and %s", d.Package, v, d.Version)
					}
					continue
				}
				pushed[d.Package] = d.Version
				p := fixture.Xpkg{Kind: KindConfiguration, Name: cm.Name, DependsOn: deps(cm), Crossplane: cm.Crossplane, Tags: []string{d.Version}}
				if _, err := fixture.PushXpkg(ctx, registrytest.Repository(t, c, redirect(d.Package)), p); err != nil {
					t.Fatal(err)
				}
				walk(cm)
				continue
			}
			constraints[d.Package] = append(constraints[d.Package], d.Version)
			kinds[d.Package] = d.Kind
		}
	}
	root := metas["xpkg.upbound.io/upbound/platform-ref-aws"]
	walk(root)
	want := []string{}
	for pkg, v := range pushed {
		want = append(want, pkg+":"+v)
	}
	var conflicts []string
	for pkg, cs := range constraints {
		to := redirect(pkg)
		tags := append([]string(nil), leafTags...)
		for _, c := range cs {
			// A configuration not vendored here, asked at one version.
			if exactVersion.MatchString(c) && !slices.Contains(tags, c) {
				tags = append(tags, c)
			}
		}
		for _, tag := range tags {
			p := fixture.Xpkg{Kind: kinds[pkg], Name: filepathBase(pkg), Tags: []string{tag}}
			if _, err := fixture.PushXpkg(ctx, registrytest.Repository(t, c, to), p); err != nil {
				t.Fatal(err)
			}
		}
		best := ""
		for _, tag := range tags {
			v := semver.MustParse(tag)
			ok := true
			for _, cs := range cs {
				con, err := semver.NewConstraint(cs)
				if err != nil {
					t.Fatalf("%s: %v", cs, err)
				}
				if !con.Check(v) {
					ok = false
				}
			}
			if ok && (best == "" || v.GreaterThan(semver.MustParse(best))) {
				best = tag
			}
		}
		if best == "" {
			conflicts = append(conflicts, filepathBase(pkg))
			continue
		}
		want = append(want, pkg+":"+best)
	}
	sort.Strings(want)

	data, err := os.ReadFile(filepath.Join(upboundDir, "platform-ref-aws.upbound.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	in, _, err := Format{}.ReadInput(ProjectFileName, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	var roots []resolve.Root
	for _, p := range in.Packages {
		roots = append(roots, resolve.Root{Ref: p.Ref, Constraint: p.Version})
	}
	g, err := resolve.Resolve(ctx, roots, resolve.Options{Registry: regs, Formats: []format.Format{Format{}}})
	if len(conflicts) > 0 {
		// The configurations vendored are each repository's newest, not
		// the v2.0.x platform-ref-aws pins: some ask provider-helm "v0",
		// others "v1". Crossplane's resolver, one version per package,
		// cannot install both; neither may ferry.
		if err == nil {
			t.Fatalf("resolved despite %v asked at versions no one tag meets", conflicts)
		}
		for _, n := range conflicts {
			if !strings.Contains(err.Error(), n) {
				t.Fatalf("error does not name %s: %v", n, err)
			}
		}
		t.Logf("as Crossplane: %v", err)
		return
	}
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	var got []string
	for _, p := range g.Packages {
		got = append(got, p.Source+":"+p.Version)
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("closure (%d):\n%s\nwant (%d):\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	t.Logf("%d packages", len(got))
}

var exactVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

func filepathBase(ref string) string { return ref[strings.LastIndexByte(ref, '/')+1:] }
