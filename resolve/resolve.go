// Package resolve computes a dependency closure: it reads each package's
// metadata from its registry, qualifies partial references relative to the
// parent, picks the highest tag satisfying every constraint on a
// repository, honours `use` and `replaces`, and reports cycles and
// conflicts with the chain that caused them.
package resolve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/ociref"
)

// Repositories opens registry repositories; *client.Client implements it.
type Repositories interface {
	Repository(repo string) (*remote.Repository, error)
}

// Root is a package the closure starts from.
type Root struct {
	// Ref is a fully qualified reference: HOST/PATH[:TAG][@DIGEST].
	Ref string
	// Constraint, when set, chooses the version among the repository's tags.
	Constraint string
}

// Locked is a version an earlier lock chose for a source.
type Locked struct {
	Version string
	Digest  digest.Digest
}

// Options configures a resolution.
type Options struct {
	// Registry opens repositories.
	Registry Repositories
	// Formats are the package formats, tried in order.
	Formats []format.Reader
	// Concurrency bounds parallel registry reads (default 8).
	Concurrency int
	// Use maps a dependency name to the reference that satisfies it.
	Use map[string]string
	// Replace maps a source repository to the repository replacing it.
	Replace map[string]string
	// Locked holds versions to keep while they satisfy every constraint.
	Locked map[string]Locked
	// Update reports whether a source's locked version may change; nil
	// means none may.
	Update func(source string) bool
	// Replaced holds package-declared replacements known from an earlier
	// lock (old source -> replacing source), so a replaced source is not
	// read before its replacer is. They are re-checked as packages are read.
	Replaced map[string]string
}

// maxManifestBytes bounds a manifest read into memory.
const maxManifestBytes = 4 << 20

// Resolve computes the closure of roots.
func Resolve(ctx context.Context, roots []Root, opts Options) (*Graph, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	r := &resolver{opts: opts, fetches: map[string]*fetchEntry{}, tags: map[string]*tagEntry{}}
	var rootReqs []struct {
		source string
		req    requirement
	}
	for _, root := range roots {
		ref, err := ociref.Parse(root.Ref)
		if err != nil {
			return nil, badInput(err)
		}
		req := requirement{from: "root " + root.Ref, ref: root.Ref, constraint: root.Constraint, tag: ref.Tag, digest: ref.Digest}
		if root.Constraint != "" && strings.HasPrefix(root.Constraint, "sha256:") {
			req.digest, req.constraint = digest.Digest(root.Constraint), ""
		}
		src := ref.Repo()
		if to, ok := opts.Replace[src]; ok {
			src = to
		}
		rootReqs = append(rootReqs, struct {
			source string
			req    requirement
		}{src, req})
	}
	hints := map[string][]requirement{}
	pkgReplace := map[string]string{}
	for old, nw := range opts.Replaced {
		pkgReplace[old] = nw
	}
	var lastErr error
	for round := 0; round < 25; round++ {
		rs := &roundState{
			r:          r,
			hints:      hints,
			pkgReplace: pkgReplace,
			reqs:       map[string][]requirement{},
			graph:      &Graph{Packages: map[string]*Package{}, Replaced: map[string]string{}},
			replacing:  map[string]string{},
		}
		var level []string
		for _, rr := range rootReqs {
			rs.addReq(rr.source, rr.req)
			level = appendUnique(level, rr.source)
			rs.graph.Roots = appendUnique(rs.graph.Roots, rr.source)
		}
		if err := rs.run(ctx, level); err != nil {
			// A round chooses each version from the constraints known when
			// it gets there; one placed later (deeper in the closure) can
			// rule out the version that caused this error. Only a round
			// that saw nothing new reports it.
			if sameReqs(rs.reqs, hints) && sameMap(rs.replacing, pkgReplace) {
				return nil, err
			}
			hints, pkgReplace, lastErr = rs.reqs, rs.replacing, err
			continue
		}
		if err := checkReplaceCycles(rs.replacing, opts.Replace); err != nil {
			return nil, err
		}
		if sameReqs(rs.reqs, hints) && sameMap(rs.replacing, pkgReplace) {
			g := rs.graph
			for old, nw := range opts.Replace {
				if _, ok := g.Packages[nw]; ok {
					g.Replaced[old] = nw
				}
			}
			for old, nw := range rs.replacing {
				if _, user := opts.Replace[old]; !user {
					g.Replaced[old] = nw
				}
			}
			if err := g.checkCycles(); err != nil {
				return nil, err
			}
			return g, nil
		}
		hints, pkgReplace = rs.reqs, rs.replacing
	}
	if lastErr != nil {
		return nil, lastErr
	}
	return nil, errors.New("resolution does not converge: constraints keep changing the chosen versions")
}

type resolver struct {
	opts    Options
	mu      sync.Mutex
	fetches map[string]*fetchEntry // "REPO@OBJECT"
	tags    map[string]*tagEntry   // "REPO"
}

type fetchEntry struct {
	once sync.Once
	desc ocispec.Descriptor
	meta *format.Metadata
	err  error
}

type tagEntry struct {
	once sync.Once
	tags []string
	err  error
}

// fetch reads a package's manifest and metadata once per repo and object.
func (r *resolver) fetch(ctx context.Context, source string, c choice) (ocispec.Descriptor, *format.Metadata, error) {
	key := source + "@" + c.object()
	if c.digest != "" {
		key = source + "@" + c.digest.String()
	}
	r.mu.Lock()
	e := r.fetches[key]
	if e == nil {
		e = &fetchEntry{}
		r.fetches[key] = e
	}
	r.mu.Unlock()
	e.once.Do(func() {
		e.desc, e.meta, e.err = r.read(ctx, source, c.object())
		if e.err == nil {
			r.mu.Lock()
			if _, ok := r.fetches[source+"@"+e.desc.Digest.String()]; !ok {
				r.fetches[source+"@"+e.desc.Digest.String()] = e
			}
			r.mu.Unlock()
		}
	})
	return e.desc, e.meta, e.err
}

func (r *resolver) read(ctx context.Context, source, object string) (ocispec.Descriptor, *format.Metadata, error) {
	repo, err := r.opts.Registry.Repository(source)
	if err != nil {
		return ocispec.Descriptor{}, nil, err
	}
	desc, rc, err := repo.FetchReference(ctx, object)
	if err != nil {
		return ocispec.Descriptor{}, nil, fmt.Errorf("fetching %s: %w", refString(source, object), err)
	}
	defer rc.Close()
	if desc.Size > maxManifestBytes {
		return desc, nil, fmt.Errorf("fetching %s: manifest of %d bytes is too large", refString(source, object), desc.Size)
	}
	raw, err := io.ReadAll(io.LimitReader(rc, maxManifestBytes+1))
	if err != nil {
		return desc, nil, fmt.Errorf("fetching %s: %w", refString(source, object), err)
	}
	if digest.FromBytes(raw) != desc.Digest && desc.Digest.Algorithm() == digest.SHA256 {
		return desc, nil, fmt.Errorf("fetching %s: manifest content does not match digest %s", refString(source, object), desc.Digest)
	}
	for _, f := range r.opts.Formats {
		if !f.Match(desc, raw) {
			continue
		}
		meta, err := f.Read(ctx, repo, desc, raw)
		if errors.Is(err, format.ErrNotPackage) {
			continue
		}
		if err != nil {
			return desc, nil, fmt.Errorf("reading %s: %w", refString(source, object), err)
		}
		return desc, meta, nil
	}
	return desc, &format.Metadata{Kind: format.KindArtifact}, nil
}

func refString(source, object string) string {
	if strings.HasPrefix(object, "sha256:") {
		return source + "@" + object
	}
	return source + ":" + object
}

// listTags lists a repository's tags once.
func (r *resolver) listTags(ctx context.Context, source string) ([]string, error) {
	r.mu.Lock()
	e := r.tags[source]
	if e == nil {
		e = &tagEntry{}
		r.tags[source] = e
	}
	r.mu.Unlock()
	e.once.Do(func() {
		repo, err := r.opts.Registry.Repository(source)
		if err != nil {
			e.err = err
			return
		}
		e.err = repo.Tags(ctx, "", func(tags []string) error {
			e.tags = append(e.tags, tags...)
			return nil
		})
		if e.err != nil {
			e.err = fmt.Errorf("listing tags of %s: %w", source, e.err)
		}
	})
	return e.tags, e.err
}

// roundState is one pass over the closure with fixed version hints.
type roundState struct {
	r          *resolver
	hints      map[string][]requirement // requirements seen in the last round
	pkgReplace map[string]string        // package replaces seen in the last round
	reqs       map[string][]requirement
	graph      *Graph
	replacing  map[string]string // replaces declared in this round
}

func (rs *roundState) addReq(source string, req requirement) {
	rs.reqs[source] = append(rs.reqs[source], req)
}

type levelResult struct {
	source string
	choice choice
	desc   ocispec.Descriptor
	meta   *format.Metadata
	err    error
}

// run visits the closure breadth first, a level at a time, reading each
// level's packages in parallel.
func (rs *roundState) run(ctx context.Context, level []string) error {
	var unread []levelResult
	for len(level) > 0 {
		sort.Strings(level)
		results := make([]levelResult, len(level))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(rs.r.opts.Concurrency)
		for i, src := range level {
			g.Go(func() error {
				results[i] = rs.visit(gctx, src)
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
			deps, err := rs.addPackage(res)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, d := range deps {
				if _, seen := rs.graph.Packages[d]; !seen {
					next = appendUnique(next, d)
				}
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		var fresh []string
		for _, d := range next {
			if _, seen := rs.graph.Packages[d]; !seen {
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

// requirementsFor returns the requirements to choose a source's version by.
func (rs *roundState) requirementsFor(source string) []requirement {
	if h, ok := rs.hints[source]; ok {
		return h
	}
	return rs.reqs[source]
}

// visit chooses a source's version and reads its metadata.
func (rs *roundState) visit(ctx context.Context, source string) levelResult {
	reqs := rs.requirementsFor(source)
	res := levelResult{source: source}
	c, err := rs.choose(ctx, source, reqs)
	if err != nil {
		res.err = err
		return res
	}
	res.choice = c
	res.desc, res.meta, res.err = rs.r.fetch(ctx, source, c)
	if res.err != nil {
		res.err = withChain(reqs, source, res.err)
		return res
	}
	if c.tag == "" && res.meta.Version != "" {
		res.choice.tag = rs.r.tagOf(ctx, source, c.digest, res.meta.Version)
	}
	return res
}

// tagOf finds the tag of a digest-pinned package from the version its
// metadata records, trying the usual spellings ("v1.2.3", "1.2.3", "+" as
// "_"), so the mirror can carry the tag too. It returns "" when none of
// them points at the digest.
func (r *resolver) tagOf(ctx context.Context, source string, d digest.Digest, version string) string {
	repo, err := r.opts.Registry.Repository(source)
	if err != nil {
		return ""
	}
	v := strings.ReplaceAll(strings.TrimPrefix(version, "v"), "+", "_")
	for _, tag := range []string{"v" + v, v} {
		if desc, err := repo.Resolve(ctx, tag); err == nil && desc.Digest == d {
			return tag
		}
	}
	return ""
}

func withChain(reqs []requirement, source string, err error) error {
	var chain []string
	if len(reqs) > 0 {
		chain = reqs[0].chain
	}
	var ue *UnsatisfiableError
	if errors.As(err, &ue) {
		return err
	}
	prefix := strings.Join(append(append([]string(nil), chain...), source), " -> ")
	return &ChainError{Chain: prefix, Err: err}
}

// ChainError is an error reached through a chain of dependencies.
type ChainError struct {
	Chain string
	Err   error
}

func (e *ChainError) Error() string { return e.Chain + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ChainError) Unwrap() error { return e.Err }

// choose picks the tag or digest to fetch for a source.
func (rs *roundState) choose(ctx context.Context, source string, reqs []requirement) (choice, error) {
	pin, err := pinOf(source, reqs)
	if err != nil {
		return choice{}, withChain(reqs, source, err)
	}
	if pin != "" {
		return rs.choosePinned(ctx, source, pin, reqs)
	}
	if l, ok := rs.r.opts.Locked[source]; ok && l.Digest != "" && (rs.r.opts.Update == nil || !rs.r.opts.Update(source)) && satisfies(l.Version, reqs) {
		return choice{tag: l.Version, digest: l.Digest}, nil
	}
	if !needsTags(reqs) {
		for _, r := range reqs {
			if r.tag != "" {
				return choice{tag: r.tag}, nil
			}
		}
		// Only "any" requirements: a replaced edge whose replacement was
		// not reached otherwise; take the highest release.
	}
	tags, err := rs.r.listTags(ctx, source)
	if err != nil {
		return choice{}, withChain(reqs, source, err)
	}
	tag, err := pickTag(source, reqs, tags)
	if err != nil {
		return choice{}, err
	}
	return choice{tag: tag}, nil
}

// choosePinned checks a digest pin against the other requirements on the
// same source: when some parent constrains the version instead, the pinned
// digest must be the digest of a tag satisfying those constraints.
func (rs *roundState) choosePinned(ctx context.Context, source string, pin digest.Digest, reqs []requirement) (choice, error) {
	tag := ""
	var others []requirement
	for _, r := range reqs {
		switch {
		case r.digest == pin:
			if r.tag != "" {
				tag = r.tag
			}
		case !r.any:
			others = append(others, r)
		}
	}
	if len(others) == 0 {
		return choice{tag: tag, digest: pin}, nil
	}
	tags, err := rs.r.listTags(ctx, source)
	if err != nil {
		return choice{}, withChain(reqs, source, err)
	}
	repo, err := rs.r.opts.Registry.Repository(source)
	if err != nil {
		return choice{}, err
	}
	for _, t := range candidates(others, tags) {
		desc, err := repo.Resolve(ctx, t)
		if err != nil {
			return choice{}, withChain(reqs, source, fmt.Errorf("resolving %s:%s: %w", source, t, err))
		}
		if desc.Digest == pin {
			return choice{tag: t, digest: pin}, nil
		}
	}
	e := unsatisfiable(source, reqs, tags).(*UnsatisfiableError)
	e.Pinned = pin
	return choice{}, e
}

// satisfies reports whether a locked tag still meets every requirement.
func satisfies(tag string, reqs []requirement) bool {
	v := ParseTag(tag)
	for _, r := range reqs {
		switch {
		case r.any:
		case r.constraint != "":
			c, ok, err := constraintOf(r)
			if err != nil || !ok || v == nil || !c.Check(v) {
				return false
			}
		case r.tag != "":
			if r.tag != tag {
				return false
			}
		}
	}
	return true
}

// addPackage records a visited package and its edges, and returns the
// sources its edges lead to.
func (rs *roundState) addPackage(res levelResult) ([]string, error) {
	reqs := rs.requirementsFor(res.source)
	if len(rs.reqs[res.source]) > 0 {
		reqs = rs.reqs[res.source]
	}
	p := &Package{
		Source:     res.source,
		Kind:       res.meta.Kind,
		Version:    res.choice.tag,
		Descriptor: res.desc,
		Meta:       res.meta,
	}
	if len(reqs) > 0 {
		p.Ref = reqs[0].ref
		p.Chain = reqs[0].chain
	}
	rs.graph.Packages[res.source] = p
	for _, w := range res.meta.Warnings {
		rs.graph.Warnings = append(rs.graph.Warnings, p.Label()+": "+w)
	}
	parentRef, err := ociref.Parse(res.source)
	if err != nil {
		return nil, err
	}
	chain := append(append([]string(nil), p.Chain...), p.Label())
	for _, old := range res.meta.Replaces {
		oldRef, err := ociref.Qualify(old, parentRef)
		if err != nil {
			return nil, fmt.Errorf("%s: replaces %q: %w", strings.Join(chain, " -> "), old, err)
		}
		if prev, ok := rs.replacing[oldRef.Repo()]; ok && prev != res.source {
			return nil, fmt.Errorf("%s: replaces %s, which %s also replaces", strings.Join(chain, " -> "), oldRef.Repo(), prev)
		}
		rs.replacing[oldRef.Repo()] = res.source
		p.Replaces = appendUnique(p.Replaces, oldRef.Repo())
	}
	var targets []string
	for _, d := range res.meta.Dependencies {
		edge, req, err := rs.edge(p, parentRef, chain, d)
		if err != nil {
			return nil, err
		}
		p.Dependencies = append(p.Dependencies, edge)
		rs.addReq(edge.Target, req)
		targets = append(targets, edge.Target)
	}
	return targets, nil
}

// edge resolves one declared dependency to its target source.
func (rs *roundState) edge(p *Package, parent ociref.Reference, chain []string, d format.Dependency) (Edge, requirement, error) {
	where := strings.Join(chain, " -> ")
	declared := d.Ref
	constraint := d.Constraint
	if use, ok := rs.r.opts.Use[d.Name]; ok && d.Name != "" {
		declared, constraint = use, ""
	} else if declared == "" {
		if d.Interface {
			return Edge{}, requirement{}, (fmt.Errorf("%s: dependency %q declares only an interface and no bundle; choose an implementation with `use: {%s: REF}` in ferry.yaml", where, d.Name, d.Name))
		}
		return Edge{}, requirement{}, badInput(fmt.Errorf("%s: dependency %q has no reference", where, d.Name))
	}
	ref, err := ociref.Qualify(declared, parent)
	if err != nil {
		return Edge{}, requirement{}, badInput(fmt.Errorf("%s: dependency %q: %w", where, d.Name, err))
	}
	req := requirement{
		from:        p.Label(),
		chain:       chain,
		ref:         ref.String(),
		constraint:  constraint,
		prereleases: d.Prereleases,
		tag:         ref.Tag,
		digest:      ref.Digest,
	}
	if strings.HasPrefix(constraint, "sha256:") {
		req.digest, req.constraint = digest.Digest(constraint), ""
	}
	target := ref.Repo()
	if to, ok := rs.r.opts.Replace[target]; ok {
		target = to
	} else if to, ok := rs.pkgReplace[target]; ok && to != p.Source {
		target = to
		req = requirement{from: p.Label(), chain: chain, ref: req.ref, any: true}
	}
	return Edge{Name: d.Name, Ref: d.Ref, Constraint: d.Constraint, Target: target, After: d.After}, req, nil
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

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
