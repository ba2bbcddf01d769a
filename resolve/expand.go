package resolve

import (
	"context"
	"fmt"
	"slices"

	"github.com/ferryhq/ferry/format"
)

// Expander is a format whose packages declare more once the closure
// around them is resolved. Helm is one: the images a chart deploys are
// those its templates render with its dependencies in place and the
// parent's values passed down, as `helm template` renders after `helm
// dependency build` (helm's pkg/action/install.go renders the chart tree
// as loaded from charts/), so they are known only once the chart's
// dependencies are chosen.
//
// Resolve calls Expand on a converged graph; what it returns is added to
// the packages (and roots) named, and the closure is resolved again with
// it, until Expand adds nothing new. Expand must be deterministic for a
// given graph and must only ever add.
type Expander interface {
	format.Format
	// Expand returns what the resolved graph g adds.
	Expand(ctx context.Context, g *Graph) (Expansion, error)
}

// Expansion is what an Expander adds to a resolved closure.
type Expansion struct {
	// Dependencies maps the ID of a package of the graph to dependencies
	// it declares in addition to those its reader returned.
	Dependencies map[string][]format.Dependency
	// Roots are packages to add as roots (the images a local chart,
	// which is not itself a package, deploys).
	Roots []Root
	// Warnings are findings to report with the graph's.
	Warnings []string
}

// maxExpansions bounds how many times a closure is expanded: each
// expansion can only add, and an expansion that adds what needs expanding
// again (a chart whose rendered images are themselves charts) is not a
// real closure's shape.
const maxExpansions = 8

// expand asks every Expander for what g adds, and records what is new:
// dependencies under the package's SOURCE@DIGEST in r.extra, roots in
// roots. It reports whether anything was added.
func (r *resolver) expand(ctx context.Context, g *Graph, roots *[]Root) (bool, error) {
	added := false
	for _, f := range r.opts.Formats {
		x, ok := f.(Expander)
		if !ok {
			continue
		}
		exp, err := x.Expand(ctx, g)
		if err != nil {
			return false, err
		}
		ids := make([]string, 0, len(exp.Dependencies))
		for id := range exp.Dependencies {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			p := g.Packages[id]
			if p == nil {
				return false, fmt.Errorf("%s expands package %s, which is not in the closure", f.Name(), id)
			}
			key := p.Source + "@" + p.Descriptor.Digest.String()
			r.mu.Lock()
			for _, d := range exp.Dependencies[id] {
				if !containsDependency(p.Meta.Dependencies, d) && !containsDependency(r.extra[key], d) {
					r.extra[key] = append(r.extra[key], d)
					added = true
				}
			}
			r.mu.Unlock()
		}
		r.mu.Lock()
		for _, w := range exp.Warnings {
			if !slices.Contains(r.expandWarnings, w) {
				r.expandWarnings = append(r.expandWarnings, w)
			}
		}
		r.mu.Unlock()
		for _, root := range exp.Roots {
			if !slices.Contains(*roots, root) {
				*roots = append(*roots, root)
				added = true
			}
		}
	}
	return added, nil
}

// extraDependencies returns what expansions added to the package read
// from source at the entry's digest.
func (r *resolver) extraDependencies(source string, e *fetchEntry) []format.Dependency {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.extra[source+"@"+e.desc.Digest.String()]
}

// containsDependency reports whether deps holds d (same name, reference,
// constraint and kind).
func containsDependency(deps []format.Dependency, d format.Dependency) bool {
	return slices.ContainsFunc(deps, func(x format.Dependency) bool {
		return x.Name == d.Name && x.Ref == d.Ref && x.Constraint == d.Constraint && x.Kind == d.Kind
	})
}
