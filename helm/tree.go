package helm

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	chart "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2"
	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/loader"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/resolve"
)

// Charts render as `helm template` renders them: after `helm dependency
// build` has put every dependency in charts/ (helm's
// pkg/downloader/manager.go Build), with the parent's values, globals,
// conditions, tags, aliases and import-values applied by Helm's own
// chartutil.ProcessDependencies and values coalescing (Images). A chart
// read from a registry therefore declares no image when it is read: its
// images are found once the closure is resolved (Expand), by rendering
// the tree of the chart with the versions of its dependencies the
// resolver chose, and they are dependencies of the chart at the top of
// that tree (the one `helm install` is run on). A chart that only another
// chart of the closure depends on is rendered inside its parent, with
// the parent's values, and not on its own: `helm template` of the parent
// never renders it with its bare defaults.

var _ resolve.Expander = Format{}

var _ mirrorset.RefOwner = Format{}

// chartData is what the Helm reader keeps of a chart for Expand: the
// chart as loaded (with what it vendors in charts/), and the Chart.yaml
// dependencies it resolves from a repository, with the reference and
// constraint each became.
type chartData struct {
	chart *chart.Chart
	deps  []declaredDependency
}

// declaredDependency is one Chart.yaml dependency that is not vendored.
type declaredDependency struct {
	dep *chart.Dependency
	// ref and constraint are the format.Dependency it became.
	ref, constraint string
}

// Expand renders every chart at the top of a tree of charts in g (a root,
// or a chart no other chart of g depends on) with its dependencies in
// place, and every local chart named in `charts:` by path, and returns
// the images they deploy: as dependencies of the chart, or as roots for
// a local chart (which is not itself a package).
func (f Format) Expand(_ context.Context, g *resolve.Graph) (resolve.Expansion, error) {
	exp := resolve.Expansion{Dependencies: map[string][]format.Dependency{}}
	childOfChart := map[string]bool{}
	for _, p := range g.Packages {
		if _, ok := p.Meta.Data.(*chartData); !ok {
			continue
		}
		for _, e := range p.Dependencies {
			childOfChart[e.Target] = true
		}
	}
	roots := map[string]bool{}
	for _, id := range g.Roots {
		roots[id] = true
	}
	ids := make([]string, 0, len(g.Packages))
	for id := range g.Packages {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		p := g.Packages[id]
		cd, ok := p.Meta.Data.(*chartData)
		if !ok || (childOfChart[id] && !roots[id]) {
			continue
		}
		vals := f.values[cd.chart.Name()]
		key := treeKey(g, p, 0) + "\x00" + fmt.Sprint(vals, f.Settings.ImagePaths, f.Settings.Exclude)
		deps, warnings, err := f.renders.get(key, func() ([]format.Dependency, []string, error) {
			tree, err := f.assemble(g, p, nil)
			if err != nil {
				return nil, nil, err
			}
			return f.images(tree, vals)
		})
		if err != nil {
			return exp, err
		}
		exp.Warnings = append(exp.Warnings, warnings...)
		if len(deps) > 0 {
			exp.Dependencies[id] = deps
		}
	}
	for i, c := range f.Settings.Charts {
		if c.Path == "" {
			continue
		}
		// A local chart is an input file: what is wrong with it is bad
		// input (exit 2), as every input file's errors are.
		ch, err := loadLocal(c.Path)
		if err != nil {
			return exp, errkind.Markf(errkind.BadInput, "%s[%d]: chart %s: %w", KeyCharts, i, c.Path, err)
		}
		tree, err := f.assembleLocal(g, ch, localDir(c.Path), nil)
		if err != nil {
			return exp, errkind.Markf(errkind.BadInput, "%s: %w", c.Path, err)
		}
		deps, warnings, err := f.images(tree, f.values[localValuesKey(c.Path)])
		if err != nil {
			return exp, errkind.Markf(errkind.BadInput, "%s: %w", c.Path, err)
		}
		exp.Warnings = append(exp.Warnings, warnings...)
		for _, d := range deps {
			exp.Roots = append(exp.Roots, resolve.Root{Ref: d.Ref, Format: f.Name(), Kind: format.KindImage})
		}
	}
	return exp, nil
}

// assemble returns a copy of the chart p with the charts its
// non-vendored dependencies resolved to added as subcharts, each
// assembled the same way, as `helm dependency build` leaves it in
// charts/. chain lists the charts above, for messages and to stop a
// cycle.
func (f Format) assemble(g *resolve.Graph, p *resolve.Package, chain []string) (*chart.Chart, error) {
	cd := p.Meta.Data.(*chartData)
	chain = append(chain, p.Label())
	if len(chain) > 32 {
		return nil, fmt.Errorf("%s: charts nest too deep", strings.Join(chain, " -> "))
	}
	out := copyChartTree(cd.chart)
	added := map[string]bool{}
	for _, d := range cd.deps {
		target := resolvedDependency(g, p, d)
		if target == nil {
			// Replaced by a package that is not a chart, or left out by
			// `use`: nothing of it can be rendered here.
			continue
		}
		if _, ok := target.Meta.Data.(*chartData); !ok {
			return nil, fmt.Errorf("%s: dependency %q resolved to %s, which is not a Helm chart", strings.Join(chain, " -> "), d.dep.Name, target.Label())
		}
		if added[target.ID] {
			continue
		}
		added[target.ID] = true
		sub, err := f.assemble(g, target, chain)
		if err != nil {
			return nil, err
		}
		out.AddDependency(sub)
	}
	return out, nil
}

// assembleLocal is assemble for a local chart ch (in dir, or "" for a
// .tgz): its file:// dependencies are read from disk and assembled the
// same way, as `helm dependency build` packages them into charts/; the
// others are the roots SectionRoots made of them, found in g by source
// and version.
func (f Format) assembleLocal(g *resolve.Graph, ch *chart.Chart, dir string, chain []string) (*chart.Chart, error) {
	chain = append(chain, ch.Name())
	if len(chain) > 32 {
		return nil, fmt.Errorf("%s: file:// dependencies nest too deep", strings.Join(chain, " -> "))
	}
	out := copyChartTree(ch)
	deps, err := f.lockedDependencies(ch)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(chain, " -> "), err)
	}
	vendored := map[string]bool{}
	for _, sub := range ch.Dependencies() {
		vendored[sub.Name()] = true
	}
	added := map[string]bool{}
	for _, d := range deps {
		if d == nil || vendored[d.Name] {
			continue
		}
		if strings.HasPrefix(d.Repository, "file://") {
			sub, subDir, err := loadFileDependency(ch, dir, d, chain)
			if err != nil {
				return nil, err
			}
			tree, err := f.assembleLocal(g, sub, subDir, chain)
			if err != nil {
				return nil, err
			}
			out.AddDependency(tree)
			continue
		}
		fd, err := f.dependency(ch.Name(), d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", strings.Join(chain, " -> "), err)
		}
		target := findResolved(g, fd)
		if target == nil {
			return nil, fmt.Errorf("%s: dependency %q (%s %s) is not in the resolved closure", strings.Join(chain, " -> "), d.Name, fd.Ref, fd.Constraint)
		}
		if added[target.ID] {
			continue
		}
		added[target.ID] = true
		sub, err := f.assemble(g, target, chain)
		if err != nil {
			return nil, err
		}
		out.AddDependency(sub)
	}
	return out, nil
}

// findResolved returns the chart of g a local chart's dependency d
// resolved to: a chart of d's repository at the tag d pins, or the
// highest satisfying d's constraint (the root SectionRoots made of d was
// resolved to it by the same rule).
func findResolved(g *resolve.Graph, d format.Dependency) *resolve.Package {
	r, err := ociref.Parse(d.Ref)
	if err != nil {
		return nil
	}
	var con *semver.Constraints
	if d.Constraint != "" {
		if con, err = semver.NewConstraint(d.Constraint); err != nil {
			return nil
		}
	}
	var best *resolve.Package
	var bestV *semver.Version
	for _, p := range g.Packages {
		if p.Source != r.Repo() {
			continue
		}
		if _, ok := p.Meta.Data.(*chartData); !ok {
			continue
		}
		if r.Digest != "" {
			if p.Descriptor.Digest == r.Digest {
				return p
			}
			continue
		}
		if r.Tag != "" && con == nil {
			if p.Version == r.Tag {
				return p
			}
			continue
		}
		v, err := semver.NewVersion(p.Meta.Version)
		if err != nil || (con != nil && !con.Check(v)) {
			continue
		}
		if bestV == nil || v.GreaterThan(bestV) {
			best, bestV = p, v
		}
	}
	return best
}

// loadFileDependency loads the chart a file:// dependency d of ch (in
// dir) points to, as helm's internal/resolver GetLocalPath finds it
// (relative to the chart), and checks its version against d's range.
func loadFileDependency(ch *chart.Chart, dir string, d *chart.Dependency, chain []string) (*chart.Chart, string, error) {
	if dir == "" {
		return nil, "", fmt.Errorf("%s: dependency %q is at %s and is not in charts/ of the packaged chart", strings.Join(chain, " -> "), d.Name, d.Repository)
	}
	p := strings.TrimPrefix(d.Repository, "file://")
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	sub, err := loader.LoadDir(p)
	if err != nil {
		return nil, "", fmt.Errorf("%s: dependency %q at %s: %w", strings.Join(chain, " -> "), d.Name, d.Repository, err)
	}
	if c, err := semver.NewConstraint(d.Version); err == nil {
		if v, err := semver.NewVersion(sub.Metadata.Version); err == nil && !c.Check(v) {
			return nil, "", fmt.Errorf("%s: dependency %q at %s is version %s, which does not satisfy %q", strings.Join(chain, " -> "), d.Name, d.Repository, sub.Metadata.Version, d.Version)
		}
	}
	return sub, p, nil
}

// localDir returns the directory of a local chart path (a chart
// directory, or its Chart.yaml), or "" for a packaged .tgz.
func localDir(path string) string {
	base := strings.ToLower(filepath.Base(path))
	switch {
	case base == "chart.yaml" || base == "chart.yml":
		return filepath.Dir(path)
	case strings.HasSuffix(base, ".tgz") || strings.HasSuffix(base, ".tar.gz"):
		return ""
	}
	return path
}

// localValuesKey is the key of a local chart's values in Format.values.
func localValuesKey(path string) string { return "path:" + path }

// loadLocal loads a local chart: a chart directory, its Chart.yaml, or a
// packaged .tgz.
func loadLocal(path string) (*chart.Chart, error) {
	if dir := localDir(path); dir != "" {
		return loader.LoadDir(dir)
	}
	return loader.LoadFile(path)
}

// renderCache holds the images of chart trees rendered in this process,
// by treeKey and the settings they were rendered with.
type renderCache struct {
	mu sync.Mutex
	m  map[string]renderResult
}

type renderResult struct {
	deps     []format.Dependency
	warnings []string
}

// get returns the result cached under key, or renders it; a failure is
// not kept. A nil cache renders every time.
func (c *renderCache) get(key string, render func() ([]format.Dependency, []string, error)) ([]format.Dependency, []string, error) {
	if c == nil {
		return render()
	}
	c.mu.Lock()
	r, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return r.deps, r.warnings, nil
	}
	deps, warnings, err := render()
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]renderResult{}
	}
	c.m[key] = renderResult{deps, warnings}
	c.mu.Unlock()
	return deps, warnings, nil
}

// treeKey names the tree assemble builds for p: every chart in it by
// source and digest, nested as assemble nests them.
func treeKey(g *resolve.Graph, p *resolve.Package, depth int) string {
	key := p.Source + "@" + p.Descriptor.Digest.String()
	cd, ok := p.Meta.Data.(*chartData)
	if !ok || depth > 32 {
		return key
	}
	var subs []string
	for _, d := range cd.deps {
		if t := resolvedDependency(g, p, d); t != nil {
			subs = append(subs, treeKey(g, t, depth+1))
		}
	}
	return key + "(" + strings.Join(subs, ",") + ")"
}

// resolvedDependency returns the package of g the Chart.yaml dependency
// d of chart p resolved to (the edge its reader declared for it), or nil.
func resolvedDependency(g *resolve.Graph, p *resolve.Package, d declaredDependency) *resolve.Package {
	for _, e := range p.Dependencies {
		if e.Name == d.dep.Name && e.Ref == d.ref && e.Constraint == d.constraint {
			return g.Packages[e.Target]
		}
	}
	return nil
}
