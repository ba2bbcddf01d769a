package resolve

import (
	"fmt"
	"strings"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/ociref"
)

// Planning edges. A package's declared dependency is qualified against its
// parent by the format's rules and turned into the node keys it leads to.

// plannedEdge is an edge and the requirement it places on its target.
type plannedEdge struct {
	edge Edge
	req  requirement
}

// edges resolves one declared dependency to the node keys it leads to:
// the package that satisfies it and, for a Porter dependency with an
// interface reference, the bundle that defines the interface.
func (rs *roundState) edges(p *Package, parent ociref.Reference, chain []string, d format.Dependency, rules Rules) ([]plannedEdge, error) {
	where := strings.Join(chain, " -> ")
	path := d.Name
	if p.path != "" {
		path = p.path + "/" + d.Name
	}
	declared := d.Ref
	constraint := d.Constraint
	useKey := ""
	use, ok := rs.r.opts.Use[path]
	if ok {
		useKey = path
	} else if use, ok = rs.r.opts.Use[d.Name]; ok && d.Name != "" {
		useKey = d.Name
	}
	var out []plannedEdge
	if useKey != "" {
		useRef, err := rules.Qualify(use.Ref, parent)
		if err != nil {
			return nil, badInput(fmt.Errorf("use %s: %w", useKey, err))
		}
		if useRef.Tag != "" && constraint != "" {
			req := requirement{from: p.Label(), constraint: constraint, prereleases: d.Prereleases}
			if c, ok, err := constraintOf(req); err == nil && ok {
				if v := ParseTag(useRef.Tag); (v == nil || !c.Check(v)) && !use.Force {
					return nil, badInput(fmt.Errorf("%s: dependency %q requires %q, and `use: {%s: %s}` gives %s, which does not satisfy it; choose a version in range, or write `use: {%s: {ref: %s, force: true}}` to override the parent's constraint", where, d.Name, constraint, useKey, use.Ref, useRef.Tag, useKey, use.Ref))
				}
			}
		}
		declared = use.Ref
		if useRef.Tag != "" || useRef.Digest != "" {
			constraint = ""
		}
	} else if declared == "" && !d.Interface {
		return nil, badInput(fmt.Errorf("%s: dependency %q has no reference", where, d.Name))
	} else if declared == "" {
		iface := ""
		if d.InterfaceRef != "" {
			iface = " (" + d.InterfaceRef + ")"
		}
		return nil, fmt.Errorf("%s: dependency %q declares only an interface%s and no bundle; choose an implementation with `use: {%s: REF}` in ferry.yaml", where, d.Name, iface, d.Name)
	}
	e, err := rs.edge(p, parent, chain, d, rules, declared, constraint, path)
	if err != nil {
		return nil, err
	}
	e.edge.Use = useKey
	out = append(out, e)
	if d.InterfaceRef != "" {
		ie, err := rs.edge(p, parent, chain, format.Dependency{Name: d.Name, Ref: d.InterfaceRef}, rules, d.InterfaceRef, "", path)
		if err != nil {
			return nil, err
		}
		ie.edge.Role = RoleInterface
		out = append(out, ie)
	}
	return out, nil
}

// edge resolves one reference declared by p to its node key.
func (rs *roundState) edge(p *Package, parent ociref.Reference, chain []string, d format.Dependency, rules Rules, declared, constraint, path string) (plannedEdge, error) {
	where := strings.Join(chain, " -> ")
	ref, err := rules.Qualify(declared, parent)
	if err != nil {
		return plannedEdge{}, badInput(fmt.Errorf("%s: dependency %q: %w", where, d.Name, err))
	}
	req := requirement{
		from:        p.Label(),
		chain:       chain,
		path:        path,
		name:        d.Name,
		ref:         ref.String(),
		constraint:  constraint,
		prereleases: d.Prereleases,
		tag:         ref.Tag,
		digest:      ref.Digest,
		group:       d.SharingGroup,
		kind:        d.Kind,
	}
	if strings.HasPrefix(constraint, "sha256:") {
		req.digest, req.constraint = digest.Digest(constraint), ""
	}
	policy := rules.Policy()
	target := ref.Repo()
	key := ""
	switch {
	case rs.r.opts.Replace[target] != "":
		target = rs.r.opts.Replace[target]
	case rs.pkgReplace[target] != "" && rs.pkgReplace[target] != p.Source:
		target = rs.pkgReplace[target]
		req = requirement{from: p.Label(), chain: chain, path: path, ref: req.ref, any: true}
	}
	if policy.Unshared && !req.any {
		if d.SharingGroup != "" {
			key = "group:" + d.SharingGroup
		} else {
			key = "req:" + req.canonical()
		}
	}
	return plannedEdge{
		edge: Edge{Name: d.Name, Ref: d.Ref, Constraint: d.Constraint, Target: nodeKey(target, key), After: d.After, Group: d.SharingGroup, InterfaceDocument: d.InterfaceDocument},
		req:  req,
	}, nil
}
