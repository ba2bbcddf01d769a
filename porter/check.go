package porter

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/resolve"
)

// CheckGraph checks every `use:` choice against the interface its
// dependency declares (PEP003 "Bundle Interfaces", getporter/proposals
// pep/003-advanced-dependencies.md): the chosen bundle must declare every
// parameter, credential and output the interface document, or the bundle
// its `interface.reference` names, requires, matched by name and type or
// by `$id`. A dependency the bundle names itself is Porter's to check at
// install; a user's substitute is ferry's to check before it is locked.
//
// It also adds to g.Warnings every tag version strategy exact locked
// outside its declared range (outsideRange).
func (r Reader) CheckGraph(g *resolve.Graph) error {
	for _, w := range r.outside.warnings(g) {
		if !slices.Contains(g.Warnings, w) {
			g.Warnings = append(g.Warnings, w)
		}
	}
	var errs []string
	for _, id := range g.Sources() {
		p := g.Packages[id]
		for _, e := range p.Dependencies {
			if e.Use == "" || e.Role != "" {
				continue
			}
			iface, err := interfaceOf(g, p, e)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: dependency %q: %v", p.Label(), e.Name, err))
				continue
			}
			if iface == nil || iface.IsEmpty() {
				continue
			}
			impl := g.Packages[e.Target]
			if impl == nil {
				continue
			}
			decl, ok := impl.Meta.Data.(*Declarations)
			if !ok {
				errs = append(errs, fmt.Sprintf("%s: dependency %q: `use: {%s: …}` chose %s, which is not a Porter bundle, and the dependency requires an interface", p.Label(), e.Name, e.Use, impl.Label()))
				continue
			}
			if missing := decl.Missing(iface); len(missing) > 0 {
				errs = append(errs, fmt.Sprintf("%s: dependency %q: `use: {%s: …}` chose %s, which lacks what the dependency's interface requires: %s", p.Label(), e.Name, e.Use, impl.Label(), strings.Join(missing, ", ")))
			}
		}
	}
	errs = append(errs, r.checkRoots(g)...)
	if len(errs) == 0 {
		return nil
	}
	sort.Strings(errs)
	return errors.New(strings.Join(errs, "\n"))
}

// checkRoots checks each root a porter.yaml dependency became against
// the interface document the dependency declares, with `document:` or
// without (PEP003's short form), as CheckGraph checks a `use:` choice.
func (r Reader) checkRoots(g *resolve.Graph) []string {
	if r.roots == nil {
		return nil
	}
	var errs []string
	for _, ri := range *r.roots {
		ref, err := ociref.Parse(ri.Ref)
		if err != nil {
			continue
		}
		iface, err := InterfaceFromDocument([]byte(ri.Document))
		if err != nil {
			errs = append(errs, fmt.Sprintf("porter.yaml: dependency %q: %v", ri.Name, err))
			continue
		}
		for _, id := range g.Roots {
			p := g.Packages[id]
			if p == nil || p.Source != ref.Repo() || p.Meta == nil {
				continue
			}
			decl, ok := p.Meta.Data.(*Declarations)
			if !ok {
				continue
			}
			if missing := decl.Missing(iface); len(missing) > 0 {
				errs = append(errs, fmt.Sprintf("porter.yaml: dependency %q resolved to %s, which lacks what its interface requires: %s", ri.Name, p.Label(), strings.Join(missing, ", ")))
			}
		}
	}
	return errs
}

// interfaceOf returns what edge e's interface requires: its inline
// document merged with the declarations of the bundle its interface
// reference names (an edge of the same name with the interface role).
func interfaceOf(g *resolve.Graph, p *resolve.Package, e resolve.Edge) (*Declarations, error) {
	var out *Declarations
	if len(e.InterfaceDocument) > 0 {
		d, err := InterfaceFromDocument(e.InterfaceDocument)
		if err != nil {
			return nil, err
		}
		out = d
	}
	for _, ie := range p.Dependencies {
		if ie.Role != resolve.RoleInterface || ie.Name != e.Name {
			continue
		}
		t := g.Packages[ie.Target]
		if t == nil {
			continue
		}
		d, ok := t.Meta.Data.(*Declarations)
		if !ok {
			return nil, fmt.Errorf("interface reference %s is not a Porter bundle", t.Label())
		}
		if out == nil {
			out = &Declarations{}
		}
		out = &Declarations{
			Parameters:  append(append([]Declared(nil), out.Parameters...), d.Parameters...),
			Credentials: append(append([]Declared(nil), out.Credentials...), d.Credentials...),
			Outputs:     append(append([]Declared(nil), out.Outputs...), d.Outputs...),
		}
	}
	return out, nil
}
