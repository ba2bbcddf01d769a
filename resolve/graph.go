package resolve

import (
	"fmt"
	"sort"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/format"
)

// Graph is a resolved dependency closure: one package per source repository.
type Graph struct {
	// Roots are the sources of the root packages, in the order given.
	Roots []string
	// Packages maps a source repository to its resolved package.
	Packages map[string]*Package
	// Replaced maps each replaced source to the source that replaces it.
	Replaced map[string]string
	// Warnings are non-fatal findings collected while resolving.
	Warnings []string
}

// Package is one resolved package.
type Package struct {
	// Source is the repository as resolved: "HOST/PATH".
	Source string
	// Ref is the reference as first declared (by a root or a parent).
	Ref string
	// Kind is the package kind (format.Kind*).
	Kind string
	// Version is the tag chosen, or empty for a digest-only pin.
	Version string
	// Descriptor is the package's root manifest.
	Descriptor ocispec.Descriptor
	// Meta is what the package's format reader found.
	Meta *format.Metadata
	// Dependencies are the package's resolved dependency edges.
	Dependencies []Edge
	// Replaces lists the sources this package replaces in the closure.
	Replaces []string
	// Chain is the first path from a root that led to this package.
	Chain []string
}

// Edge is one resolved dependency.
type Edge struct {
	// Name is the dependency's name in its parent.
	Name string
	// Ref is the reference as declared.
	Ref string
	// Constraint is the declared version constraint, if any.
	Constraint string
	// Target is the source of the package satisfying the edge, after
	// qualification, `use` and replaces.
	Target string
	// After names sibling dependencies installed before this one.
	After []string
}

// Resolved returns "SOURCE@DIGEST" of the package satisfying e.
func (g *Graph) Resolved(e Edge) string {
	if p := g.Packages[e.Target]; p != nil {
		return p.Source + "@" + p.Descriptor.Digest.String()
	}
	return e.Target
}

// Label returns "SOURCE:VERSION" (or "SOURCE@DIGEST") for messages.
func (p *Package) Label() string {
	if p.Version != "" {
		return p.Source + ":" + p.Version
	}
	return p.Source + "@" + p.Descriptor.Digest.String()
}

// Pinned returns "SOURCE[:VERSION]@DIGEST".
func (p *Package) Pinned() string {
	s := p.Source
	if p.Version != "" {
		s += ":" + p.Version
	}
	return s + "@" + p.Descriptor.Digest.String()
}

// Sources returns every package source in the graph, sorted.
func (g *Graph) Sources() []string {
	out := make([]string, 0, len(g.Packages))
	for s := range g.Packages {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Plan returns the install order: every package after its dependencies,
// and a Porter dependency after the siblings whose outputs it uses. Roots
// are visited in order, dependencies in declared order.
func (g *Graph) Plan() ([]*Package, error) {
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var order []*Package
	var stack []string
	var visit func(src string) error
	visit = func(src string) error {
		p := g.Packages[src]
		if p == nil {
			return nil
		}
		switch state[src] {
		case done:
			return nil
		case visiting:
			return &CycleError{Cycle: cycleFrom(stack, src, g)}
		}
		state[src] = visiting
		stack = append(stack, src)
		for _, e := range orderedEdges(p.Dependencies) {
			if err := visit(e.Target); err != nil {
				return err
			}
		}
		stack = stack[:len(stack)-1]
		state[src] = done
		order = append(order, p)
		return nil
	}
	for _, r := range g.Roots {
		if err := visit(r); err != nil {
			return nil, err
		}
	}
	for _, s := range g.Sources() {
		if err := visit(s); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// orderedEdges orders sibling edges so that an edge comes after the
// siblings named in its After list, keeping declared order otherwise.
func orderedEdges(edges []Edge) []Edge {
	byName := map[string]int{}
	for i, e := range edges {
		byName[e.Name] = i
	}
	placed := make([]bool, len(edges))
	var out []Edge
	var place func(i int, depth int)
	place = func(i int, depth int) {
		if placed[i] || depth > len(edges) {
			return
		}
		for _, a := range edges[i].After {
			if j, ok := byName[a]; ok {
				place(j, depth+1)
			}
		}
		if !placed[i] {
			placed[i] = true
			out = append(out, edges[i])
		}
	}
	for i := range edges {
		place(i, 0)
	}
	return out
}

func cycleFrom(stack []string, src string, g *Graph) []string {
	start := 0
	for i, s := range stack {
		if s == src {
			start = i
		}
	}
	var out []string
	for _, s := range stack[start:] {
		out = append(out, g.Packages[s].Label())
	}
	return append(out, g.Packages[src].Label())
}

// CycleError reports a dependency cycle.
type CycleError struct {
	// Cycle lists the packages on the cycle; the first is repeated last.
	Cycle []string
}

func (e *CycleError) Error() string {
	return "dependency cycle: " + strings.Join(e.Cycle, " -> ")
}

// checkCycles returns a CycleError if the graph has a cycle.
func (g *Graph) checkCycles() error {
	_, err := g.Plan()
	return err
}

// Paths returns every path from a root to target, each as a list of
// package labels, sorted.
func (g *Graph) Paths(target string) [][]string {
	var out [][]string
	var walk func(src string, path []string, seen map[string]bool)
	walk = func(src string, path []string, seen map[string]bool) {
		p := g.Packages[src]
		if p == nil || seen[src] {
			return
		}
		path = append(path, p.Label())
		if src == target {
			out = append(out, append([]string(nil), path...))
			return
		}
		seen[src] = true
		for _, e := range p.Dependencies {
			walk(e.Target, path, seen)
		}
		delete(seen, src)
	}
	for _, r := range g.Roots {
		walk(r, nil, map[string]bool{})
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return out
}
