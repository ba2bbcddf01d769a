package resolve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/ociref"
)

// Rounds. A round reads the closure breadth first, a level at a time, with
// the version hints the last round left; rounds repeat until the
// requirements on every node settle (settled, sameReqs), then finish builds
// the graph.

// roundState is one pass over the closure with fixed version hints.
type roundState struct {
	r          *resolver
	hints      map[string][]requirement // requirements seen in the last round
	pkgReplace map[string]string        // package replaces seen in the last round
	reqs       map[string][]requirement // by node key
	policies   map[string]Policy        // by node key
	nodes      map[string]*Package      // by node key
	order      []string                 // node keys in the order they were read
	graph      *Graph
	replacing  map[string]string // replaces declared in this round
	// chosenBy holds, for each node read, how many requirements its
	// version was chosen from (settled reads it only in a round without
	// hints, where they are the round's own).
	chosenBy map[string]int
	// rootIDs maps the node key of each root to its package ID, once
	// finish has run.
	rootIDs map[string]string
}

// settled reports whether every node's version was chosen from all the
// requirements the round ended up placing on it: none came after the
// node was read (every edge into it is from a shallower level). The next
// round would then choose every version from the same requirements, in
// the same order, and so repeat this one exactly; it need not run. A
// round that had hints is checked the usual way (sameReqs).
func (rs *roundState) settled() bool {
	if len(rs.hints) > 0 {
		return false
	}
	for key, reqs := range rs.reqs {
		if n, ok := rs.chosenBy[key]; !ok || n != len(reqs) {
			return false
		}
	}
	return true
}

func (rs *roundState) addReq(key string, req requirement, p Policy) {
	rs.reqs[key] = append(rs.reqs[key], req)
	if _, ok := rs.policies[key]; !ok {
		rs.policies[key] = p
	}
}

type levelResult struct {
	key    string
	source string
	choice choice
	entry  *fetchEntry
	err    error
	// chosenBy is how many requirements the version was chosen from.
	chosenBy int
}

// run visits the closure breadth first, a level at a time, reading each
// level's packages in parallel.
func (rs *roundState) run(ctx context.Context, level []string) error {
	var unread []levelResult
	for len(level) > 0 {
		sort.Strings(level)
		rs.r.queue(level)
		results := make([]levelResult, len(level))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(rs.r.opts.Concurrency)
		for i, key := range level {
			g.Go(func() error {
				results[i] = rs.visit(gctx, key)
				rs.r.visited(key, results[i])
				return nil
			})
		}
		_ = g.Wait()
		var errs []error
		var next []string
		for _, res := range results {
			if res.err != nil {
				unread = append(unread, res)
				continue
			}
			rs.chosenBy[res.key] = res.chosenBy
			deps, err := rs.addPackage(res)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, d := range deps {
				if _, seen := rs.nodes[d]; !seen {
					next = appendUnique(next, d)
				}
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		var fresh []string
		for _, d := range next {
			if _, seen := rs.nodes[d]; !seen {
				fresh = append(fresh, d)
			}
		}
		level = fresh
	}
	// A source that a package of this round replaces need not exist (a
	// moved package's old repository may be gone), wherever in the closure
	// the replacer was found: the next round sends its edges to the
	// replacer without reading it. Any other unreadable source fails.
	var errs []error
	for _, res := range unread {
		if _, replaced := rs.replacing[res.source]; !replaced {
			errs = append(errs, res.err)
		}
	}
	return errors.Join(errs...)
}

// requirementsFor returns the requirements to choose a node's version by.
func (rs *roundState) requirementsFor(key string) []requirement {
	if h, ok := rs.hints[key]; ok {
		return h
	}
	return rs.reqs[key]
}

// visit chooses a node's version and reads its metadata.
func (rs *roundState) visit(ctx context.Context, key string) levelResult {
	source := sourceOf(key)
	reqs := rs.requirementsFor(key)
	res := levelResult{key: key, source: source, chosenBy: len(reqs)}
	c, err := rs.choose(ctx, source, reqs, rs.policies[key])
	if err != nil {
		res.err = err
		return res
	}
	res.choice = c
	res.entry, res.err = rs.r.fetch(ctx, source, c)
	if res.err != nil {
		res.err = withChain(reqs, source, res.err)
		return res
	}
	if err := rs.checkRelease(ctx, source, c, reqs, res.entry); err != nil {
		res.err = withChain(reqs, source, err)
		return res
	}
	if c.noLatest && res.entry.meta.Kind == format.KindArtifact {
		// An untagged image means `latest`, which the repository lacks:
		// the highest release is not what docker would pull.
		tags, _ := rs.r.listTags(ctx, source)
		res.err = withChain(reqs, source, &NoLatestError{Source: source, Tags: tags})
		return res
	}
	if c.tag == "" && res.entry.meta.Version != "" {
		res.choice.tag = rs.r.tagOf(ctx, source, c.digest, res.entry.meta.Version)
	}
	if p := platformOf(reqs); p != "" {
		res.entry, res.choice, res.err = rs.forPlatform(ctx, source, res.choice, res.entry, p)
		if res.err != nil {
			res.err = withChain(reqs, source, res.err)
			return res
		}
	}
	// Read ahead with the requirements addPackage will take (rs.reqs is
	// not written while the level reads).
	if own := rs.reqs[key]; len(own) > 0 {
		reqs = own
	}
	rs.readAhead(source, res.choice, res.entry, reqs)
	return res
}

// addPackage records a visited package and its edges, and returns the
// node keys its edges lead to.
func (rs *roundState) addPackage(res levelResult) ([]string, error) {
	reqs := rs.requirementsFor(res.key)
	if len(rs.reqs[res.key]) > 0 {
		reqs = rs.reqs[res.key]
	}
	meta := res.entry.meta
	p := &Package{
		Source:     res.source,
		Kind:       meta.Kind,
		Version:    res.choice.tag,
		Descriptor: res.entry.desc,
		Meta:       meta,
		rules:      res.entry.rules,
	}
	if len(reqs) > 0 {
		p.Ref = reqs[0].ref
		p.Chain = reqs[0].chain
		p.path = reqs[0].path
	}
	if p.Kind == format.KindArtifact {
		for _, r := range reqs {
			if r.kind != "" {
				p.Kind = r.kind
				break
			}
		}
	}
	rs.nodes[res.key] = p
	rs.order = append(rs.order, res.key)
	parentRef, err := ociref.Parse(res.source)
	if err != nil {
		return nil, err
	}
	rules := res.entry.rules
	chain := append(append([]string(nil), p.Chain...), p.Label())
	for _, old := range meta.Replaces {
		oldRef, err := rules.Qualify(old, parentRef)
		if err != nil {
			return nil, fmt.Errorf("%s: replaces %q: %w", strings.Join(chain, " -> "), old, err)
		}
		if prev, ok := rs.replacing[oldRef.Repo()]; ok && prev != res.source {
			return nil, fmt.Errorf("%s: replaces %s, which %s also replaces", strings.Join(chain, " -> "), oldRef.Repo(), prev)
		}
		rs.replacing[oldRef.Repo()] = res.source
		p.Replaces = appendUnique(p.Replaces, oldRef.Repo())
	}
	policy := rules.Policy()
	var targets []string
	for _, d := range slices.Concat(meta.Dependencies, rs.r.extraDependencies(res.source, res.entry)) {
		edges, err := rs.edges(p, parentRef, chain, d, rules)
		if err != nil {
			return nil, err
		}
		for _, e := range edges {
			p.Dependencies = append(p.Dependencies, e.edge)
			rs.addReq(e.edge.Target, e.req, policy)
			targets = append(targets, e.edge.Target)
		}
	}
	return targets, nil
}

// finish turns the round's nodes into the graph: nodes that chose the
// same digest of one source become one package, identified by its source
// when the source has one package in the closure, else by SOURCE@DIGEST.
// The package keeps the first node's version (the first tag, when the
// first node pinned a digest without one) and every other node's tag in
// Tags, so that no tag asked for is lost.
func (rs *roundState) finish(rootKeys []string) (*Graph, error) {
	g := rs.graph
	digests := map[string][]string{}
	for _, key := range rs.order {
		p := rs.nodes[key]
		d := p.Descriptor.Digest.String()
		if !slices.Contains(digests[p.Source], d) {
			digests[p.Source] = append(digests[p.Source], d)
		}
	}
	ids := map[string]string{} // node key -> package ID
	for _, key := range rs.order {
		p := rs.nodes[key]
		id := PackageID(p.Source, p.Descriptor.Digest.String(), len(digests[p.Source]))
		ids[key] = id
		if first, ok := g.Packages[id]; ok {
			// Another request of the same digest by another tag: the
			// package keeps every tag asked for.
			first.addTag(p.Version)
			continue
		}
		p.ID = id
		g.Packages[id] = p
		for _, w := range p.Meta.Warnings {
			g.Warnings = append(g.Warnings, p.Label()+": "+w)
		}
	}
	for _, p := range g.Packages {
		for i := range p.Dependencies {
			if id, ok := ids[p.Dependencies[i].Target]; ok {
				p.Dependencies[i].Target = id
			} else {
				p.Dependencies[i].Target = sourceOf(p.Dependencies[i].Target)
			}
		}
	}
	for _, k := range rootKeys {
		if id, ok := ids[k]; ok {
			g.Roots = appendUnique(g.Roots, id)
		}
	}
	rs.rootIDs = ids
	// A format whose tool installs one version of a package (Crossplane)
	// cannot install two: roots at two versions of such a package, or a
	// root and a dependency that disagree, are a conflict. Every other
	// package (an image, an opaque artifact, a chart, a bundle) may be
	// locked at several tags and digests of one repository.
	var errs []error
	for src, ds := range digests {
		if len(ds) < 2 {
			continue
		}
		var labels []string
		oneVersion := ""
		for _, d := range ds {
			p := g.Packages[src+"@"+d]
			if p.rules.Policy().OneVersion {
				oneVersion = p.rules.Name()
			}
			labels = append(labels, p.Label()+" (via "+strings.Join(append(p.Chain, p.Label()), " -> ")+")")
		}
		if oneVersion != "" {
			sort.Strings(labels)
			errs = append(errs, fmt.Errorf("%s is needed at %d versions, and the %s format installs one version of a package: %s", src, len(ds), oneVersion, strings.Join(labels, "; ")))
		}
	}
	if len(errs) > 0 {
		sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
		return nil, errors.Join(errs...)
	}
	return g, nil
}

// addTag records tag, requested for p's digest, on p: as its Version when
// it has none, else in Tags (sorted, each once).
func (p *Package) addTag(tag string) {
	switch {
	case tag == "" || tag == p.Version || slices.Contains(p.Tags, tag):
	case p.Version == "":
		p.Version = tag
	default:
		p.Tags = append(p.Tags, tag)
		sort.Strings(p.Tags)
	}
}

func checkReplaceCycles(pkg, user map[string]string) error {
	all := map[string]string{}
	for k, v := range pkg {
		all[k] = v
	}
	for k, v := range user {
		all[k] = v
	}
	for start := range all {
		seen := []string{start}
		cur := start
		for {
			nxt, ok := all[cur]
			if !ok {
				break
			}
			seen = append(seen, nxt)
			if nxt == start {
				return fmt.Errorf("replaces cycle: %s", strings.Join(seen, " -> "))
			}
			if len(seen) > len(all)+1 {
				break
			}
			cur = nxt
		}
	}
	return nil
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func sameReqs(a, b map[string][]requirement) bool {
	if len(a) != len(b) {
		return false
	}
	for k, ra := range a {
		rb, ok := b[k]
		if !ok || len(ra) != len(rb) {
			return false
		}
		for i := range ra {
			if ra[i].describe() != rb[i].describe() || ra[i].ref != rb[i].ref {
				return false
			}
		}
	}
	return true
}
