package resolve

import (
	"context"
	"fmt"
	"strings"

	"github.com/ferryhq/ferry/ociref"
)

// Reading ahead.
//
// A round visits the closure a level at a time (roundState.run): every
// package of a level is read before any of the next. Each read is a few
// round trips one after the other (a tag list, a manifest, what the
// format reads after it), so waiting for the slowest package of a level
// before starting the next would cost a level's worth of round trips per
// level, and leave the reads in flight few while a level drains.
//
// Instead, as soon as a package is read, the reads its children will
// need are started: for each edge, the version the edge chooses on its
// own (or, from the second round on, with every requirement the last
// round placed on it) is chosen (listing the source's tags) and read,
// and so on down from that child as soon as it is read. The reads go
// into the resolver's caches (fetch, listTags), where the level finds
// them. The levels still decide everything, in the same order, from the
// same answers: reading ahead only changes when a read is made, never
// which version is chosen or which error is reported, so the result does
// not depend on timing. A read ahead that fails is ignored; the level
// that needs the same read reports the failure, as it would have.
//
// Reads ahead share the resolver's slots (Options.Concurrency) with the
// levels' own reads. They make no request a level would not make while
// every edge to a package asks for the version the package's other edges
// do (a closure of ranges resolving to one version each); when edges
// disagree, a version read ahead may go unused. Reads that cost requests
// of their own which the cache does not keep (a digest pin checked
// against another edge's range, the tag of a package pinned by digest)
// are not made ahead.

// aheadTarget is a child to read ahead: its node key, the requirements
// its version is chosen by, and its parent's policy.
type aheadTarget struct {
	key    string
	reqs   []requirement
	policy Policy
}

// readAhead starts reading, in the background, what the children of a
// package the level just read will need. reqs are the requirements the
// package was chosen by, as addPackage takes them.
func (rs *roundState) readAhead(source string, c choice, e *fetchEntry, reqs []requirement) {
	for _, t := range rs.children(source, c, e, reqs) {
		rs.startAhead(t)
	}
}

// startAhead reads t ahead, on the resolver's pool (aheadpool.go).
func (rs *roundState) startAhead(t aheadTarget) {
	rs.r.aheadPool.run(func() { rs.prefetch(rs.r.ahead, t) })
}

// prefetch chooses t's version as the level will, reads it, and goes on to
// its children. Every failure stops it silently.
func (rs *roundState) prefetch(ctx context.Context, t aheadTarget) {
	if ctx.Err() != nil {
		return
	}
	source := sourceOf(t.key)
	pin, err := pinOf(source, t.reqs)
	if err != nil {
		return
	}
	if pin != "" {
		for _, r := range t.reqs {
			if r.digest != pin && !r.any {
				// choosePinned would resolve tags: requests no cache keeps.
				return
			}
		}
	}
	// Many edges may lead to one package: choose its version once for
	// the same requirements (who placed them aside), and read it once.
	var sig strings.Builder
	sig.WriteString(t.key)
	for _, r := range t.reqs {
		fmt.Fprintf(&sig, "\x00%s any=%t group=%s", r.canonical(), r.any, r.group)
	}
	if !rs.r.claim(sig.String()) {
		return
	}
	c, err := rs.choose(ctx, source, t.reqs, t.policy)
	if err != nil || !rs.r.claim(t.key+"\x00"+c.object()) {
		return
	}
	e, err := rs.r.fetch(ctx, source, c)
	if err != nil || checkDeclared(source, c, t.reqs, e.meta) != nil {
		return
	}
	if c.tag == "" && e.meta.Version != "" {
		// The level looks up the tag of a digest-pinned package (tagOf),
		// which its children's requirements name; leave them to it.
		return
	}
	for _, child := range rs.children(source, c, e, t.reqs) {
		rs.startAhead(child)
	}
}

// children returns the children of a package read as c of source, the
// way addPackage will place its edges, each with the requirements its
// version will be chosen by: the last round's when it has them (the
// level uses those), else the one edge's. It reads only what stays
// unchanged during a round (hints, package replacements, options), so it
// may run beside the level.
func (rs *roundState) children(source string, c choice, e *fetchEntry, reqs []requirement) []aheadTarget {
	meta := e.meta
	if meta == nil || len(meta.Dependencies) == 0 {
		return nil
	}
	p := &Package{Source: source, Kind: meta.Kind, Version: c.tag, Descriptor: e.desc, Meta: meta, rules: e.rules}
	if len(reqs) > 0 {
		p.Ref, p.Chain, p.path = reqs[0].ref, reqs[0].chain, reqs[0].path
	}
	parentRef, err := ociref.Parse(source)
	if err != nil {
		return nil
	}
	chain := append(append([]string(nil), p.Chain...), p.Label())
	policy := e.rules.Policy()
	var out []aheadTarget
	for _, d := range meta.Dependencies {
		edges, err := rs.edges(p, parentRef, chain, d, e.rules)
		if err != nil {
			continue
		}
		for _, pe := range edges {
			t := aheadTarget{key: pe.edge.Target, reqs: []requirement{pe.req}, policy: policy}
			if h, ok := rs.hints[t.key]; ok {
				t.reqs = h
			}
			out = append(out, t)
		}
	}
	return out
}

// claim reports whether id was not claimed yet, and claims it.
func (r *resolver) claim(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.prefetched[id] {
		return false
	}
	r.prefetched[id] = true
	return true
}
