package resolve

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/format"
)

// Graph is a resolved dependency closure. A package is identified by its
// source repository, or by SOURCE@DIGEST when the closure holds several
// versions of one repository (unshared Porter dependencies, two roots).
type Graph struct {
	// Roots are the IDs of the root packages, in the order given.
	Roots []string
	// Packages maps a package ID to its resolved package.
	Packages map[string]*Package
	// Replaced maps each replaced source to the source that replaces it.
	Replaced map[string]string
	// Warnings are non-fatal findings collected while resolving.
	Warnings []string

	// rootIDs maps each root Resolve was given to the ID of the package
	// it resolved to (see RootID).
	rootIDs map[Root]string
	// inputPlanners are the formats of Resolve's options that plan
	// instances of packages of their inputs that are not in the graph
	// (see InputPlanner).
	inputPlanners []InputPlanner
}

// RootID returns the ID of the package root resolved to, for a graph
// Resolve returned (false for a root it was not given, and for a graph
// rebuilt from a lock). Roots alike are one root of Roots, and two roots
// that chose one package share its ID, so Roots alone cannot say which
// package a given root became; a format that records per root what its
// input said about it (a local KUDO package's task) asks here.
func (g *Graph) RootID(root Root) (string, bool) {
	id, ok := g.rootIDs[root]
	return id, ok
}

// Package is one resolved package.
type Package struct {
	// ID identifies the package in its graph: its source, or
	// SOURCE@DIGEST when the graph holds several versions of the source.
	ID string
	// Source is the repository as resolved: "HOST/PATH".
	Source string
	// Ref is the reference as first declared (by a root or a parent).
	Ref string
	// Kind is the package kind (format.Kind*).
	Kind string
	// Version is the tag chosen, or empty for a digest-only pin.
	Version string
	// Tags are the other tags requested for the package's digest, besides
	// Version, sorted: two requests by different tags (two roots
	// app:1.0.0 and app:1.0, or a chart's images nginx:1.25 and
	// nginx:1.25.3) that resolve to one digest are one package, and every
	// tag asked for is locked and mirrored.
	Tags []string
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
	// ReadFrom is where the package's manifest was read when that is not
	// Source: a mirror of the source (ferry.yaml `mirrors:`). Reports
	// show it; the lock does not record it.
	ReadFrom string

	path  string // the first path of dependency names from a root
	rules Rules  // the rules of the format that read the package
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
	// Role is RoleInterface for the bundle that defines a dependency's
	// interface (mirrored, never installed), else empty.
	Role string
	// Use is the ferry.yaml `use` key that chose the target, if any.
	Use string
	// Group is the sharing group of the dependency, if any.
	Group string
	// InterfaceDocument is the dependency's inline interface document.
	InterfaceDocument []byte
}

// PackageID identifies a package of source at digest d in a graph: its
// source, or SOURCE@DIGEST when the graph holds several versions of
// the source.
func PackageID(source, d string, versions int) string {
	if versions > 1 {
		return source + "@" + d
	}
	return source
}

// RoleInterface marks an edge to the bundle that defines a dependency's
// interface (Porter PEP003 `interface.reference`).
const RoleInterface = "interface"

// hasSource reports whether some package of g comes from source.
func (g *Graph) hasSource(source string) bool {
	for _, p := range g.Packages {
		if p.Source == source {
			return true
		}
	}
	return false
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

// AllTags returns every tag of the package: Version first, then Tags.
// It is empty for a digest-only pin.
func (p *Package) AllTags() []string {
	return allTags(p.Version, p.Tags)
}

// allTags returns version followed by tags, leaving out empty ones.
func allTags(version string, tags []string) []string {
	var out []string
	if version != "" {
		out = append(out, version)
	}
	for _, t := range tags {
		if t != "" && t != version {
			out = append(out, t)
		}
	}
	return out
}

// Pinned returns "SOURCE[:VERSION]@DIGEST".
func (p *Package) Pinned() string {
	s := p.Source
	if p.Version != "" {
		s += ":" + p.Version
	}
	return s + "@" + p.Descriptor.Digest.String()
}

// Sources returns every package ID in the graph, sorted.
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
// are visited in order, dependencies in declared order. A bundle that only
// defines an interface is mirrored but not installed: it is not in the
// plan.
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
		edges, err := orderedEdges(p)
		if err != nil {
			return err
		}
		for _, e := range edges {
			if e.Role == RoleInterface {
				continue
			}
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
	interfaceOnly := g.interfaceOnly()
	for _, s := range g.Sources() {
		if interfaceOnly[s] {
			continue
		}
		if err := visit(s); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// interfaceOnly returns the packages that only define interfaces: targets
// of interface edges that no root or other edge needs.
func (g *Graph) interfaceOnly() map[string]bool {
	out := map[string]bool{}
	needed := map[string]bool{}
	for _, r := range g.Roots {
		needed[r] = true
	}
	for _, p := range g.Packages {
		for _, e := range p.Dependencies {
			if e.Role == RoleInterface {
				out[e.Target] = true
			} else {
				needed[e.Target] = true
			}
		}
	}
	for id := range needed {
		delete(out, id)
	}
	return out
}

// orderedEdges orders a package's sibling edges so that an edge comes
// after the siblings named in its After list (Porter v2 output wiring),
// keeping declared order otherwise. A wiring cycle is an error.
func orderedEdges(p *Package) ([]Edge, error) {
	edges := p.Dependencies
	byName := map[string]int{}
	for i, e := range edges {
		if e.Role == "" {
			byName[e.Name] = i
		}
	}
	const (
		visiting = 1
		done     = 2
	)
	state := make([]int, len(edges))
	var out []Edge
	var stack []string
	var place func(i int) error
	place = func(i int) error {
		switch state[i] {
		case done:
			return nil
		case visiting:
			start := slices.Index(stack, edges[i].Name)
			cycle := append(append([]string(nil), stack[start:]...), edges[i].Name)
			return &CycleError{Cycle: cycle, Wiring: p.Label()}
		}
		state[i] = visiting
		stack = append(stack, edges[i].Name)
		for _, a := range edges[i].After {
			if j, ok := byName[a]; ok && j != i {
				if err := place(j); err != nil {
					return err
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = done
		out = append(out, edges[i])
		return nil
	}
	for i := range edges {
		if err := place(i); err != nil {
			return nil, err
		}
	}
	return out, nil
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

// CycleError reports a dependency cycle, or a cycle in the output wiring
// between the dependencies of one bundle.
type CycleError struct {
	// Cycle lists the packages (or, for wiring, the dependency names) on
	// the cycle; the first is repeated last.
	Cycle []string
	// Wiring is the bundle whose dependencies' outputs feed each other in
	// a cycle; empty for a dependency cycle.
	Wiring string
}

func (e *CycleError) Error() string {
	if e.Wiring != "" {
		return fmt.Sprintf("%s: output wiring cycle between its dependencies: %s", e.Wiring, strings.Join(e.Cycle, " -> "))
	}
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
