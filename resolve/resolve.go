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
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/manifest"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/progress"
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
	// Format, when set, names the format whose version policy chooses
	// among the tags (a porter.yaml's dependencies); empty: the highest
	// tag satisfying Constraint.
	Format string
	// Kind, when set, is the kind the root is locked as when no format
	// claims its manifest (format.Dependency.Kind).
	Kind string
}

// Locked is a version an earlier lock chose for a source.
type Locked struct {
	Version string
	Digest  digest.Digest
}

// Use is a user-chosen implementation of a named dependency.
type Use struct {
	// Ref is the reference that satisfies the dependency.
	Ref string
	// Force accepts a Ref whose tag breaks the parent's constraint.
	Force bool
}

// Options configures a resolution.
type Options struct {
	// Registry opens repositories.
	Registry Repositories
	// Formats are the package formats; those that are format.Readers are
	// tried in order on every manifest, and the Rules of the one that
	// reads a package apply to the dependencies it declares.
	Formats []format.Format
	// Concurrency bounds the registry reads resolution has in flight
	// (default DefaultConcurrency). It is resolution's own: reading
	// metadata is many small round trips, each a package's path to its
	// children, so it needs more in flight than copying blobs does.
	Concurrency int
	// Use maps a dependency name, or a path of names from a root
	// ("svc-a/db"), to the reference that satisfies it. A path wins over
	// a name.
	Use map[string]Use
	// Replace maps a source repository to the repository replacing it.
	Replace map[string]string
	// Locked holds, per source, versions to keep while they satisfy the
	// requests on them.
	Locked map[string][]Locked
	// Update reports whether a source's locked version may change; nil
	// means none may.
	Update func(source string) bool
	// Replaced holds package-declared replacements known from an earlier
	// lock (old source -> replacing source), so a replaced source is not
	// read before its replacer is. They are re-checked as packages are read.
	Replaced map[string]string
	// Progress, when set, is told of the resolution as it goes: the
	// packages of a level as they are queued (AddPackages), each package
	// version as it is read (PackageDone, nil error: a failure is the
	// resolution's to report; AddPackages(-1) for a queued edge that
	// chose a version already read), each once however many rounds visit
	// it, and the bytes of every manifest read (BlobBytes). A source
	// resolved at two versions counts twice. Resolve never closes it.
	Progress progress.Reporter

	// rounds, when set, counts the rounds Resolve runs (tests).
	rounds *int
}

// DefaultConcurrency is Options.Concurrency's default: enough reads in
// flight for a closure of a thousand packages, eight levels deep, to
// resolve within a few times depth × round trips per package × latency.
// W2 in BENCHMARKS.md (1,000 bundles, 20 ms per request) has its widest
// level ask for about 120 at once; with 64 it spent most of its time
// waiting for a slot (2.4–2.5 s, against 2.0–2.1 s with 128; 192 gained
// nothing more). Each read is small: 128 of them are a burst of small GETs,
// not of bandwidth.
const DefaultConcurrency = 128

// maxManifestBytes bounds a manifest read into memory.
const maxManifestBytes = 4 << 20

// Resolve computes the closure of roots.
func Resolve(ctx context.Context, roots []Root, opts Options) (*Graph, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	opts.Progress = progress.Or(opts.Progress)
	r := &resolver{opts: opts, fetches: map[string]*fetchEntry{}, tags: map[string]*tagEntry{}, queued: map[string]bool{}, done: map[string]bool{},
		slots: make(chan struct{}, opts.Concurrency), prefetched: map[string]bool{}}
	// Reads ahead (prefetch.go) end with the resolution: none is left
	// running, or sending requests, once Resolve returns.
	var cancel context.CancelFunc
	r.ahead, cancel = context.WithCancel(ctx)
	r.aheadPool = newAheadPool(opts.Concurrency)
	defer func() {
		cancel()
		r.aheadPool.close()
	}()
	type rootReq struct {
		key    string
		req    requirement
		policy Policy
	}
	var rootReqs []rootReq
	for _, root := range roots {
		ref, err := ociref.Parse(root.Ref)
		if err != nil {
			return nil, badInput(err)
		}
		req := requirement{from: "root " + root.Ref, ref: root.Ref, constraint: root.Constraint, tag: ref.Tag, digest: ref.Digest, kind: root.Kind}
		if root.Constraint != "" && strings.HasPrefix(root.Constraint, "sha256:") {
			req.digest, req.constraint = digest.Digest(root.Constraint), ""
		}
		src := ref.Repo()
		if to, ok := opts.Replace[src]; ok {
			src = to
		}
		// Every root is resolved on its own: two roots may be two
		// versions of one repository.
		rootReqs = append(rootReqs, rootReq{nodeKey(src, "root:"+req.canonical()), req, rulesNamed(opts.Formats, root.Format).Policy()})
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
			policies:   map[string]Policy{},
			nodes:      map[string]*Package{},
			graph:      &Graph{Packages: map[string]*Package{}, Replaced: map[string]string{}},
			replacing:  map[string]string{},
			chosenBy:   map[string]int{},
		}
		if opts.rounds != nil {
			*opts.rounds++
		}
		var level, rootKeys []string
		for _, rr := range rootReqs {
			rs.addReq(rr.key, rr.req, rr.policy)
			level = appendUnique(level, rr.key)
			rootKeys = appendUnique(rootKeys, rr.key)
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
		if (sameReqs(rs.reqs, hints) || rs.settled()) && sameMap(rs.replacing, pkgReplace) {
			g, err := rs.finish(rootKeys)
			if err != nil {
				return nil, err
			}
			for old, nw := range opts.Replace {
				if g.hasSource(nw) {
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
			if err := r.check(g); err != nil {
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

// nodeKey names one package to resolve: a source, and for edges resolved
// on their own a discriminator (the request, a sharing group, a root).
// Every edge with one key shares one version.
func nodeKey(source, discriminator string) string {
	if discriminator == "" {
		return source
	}
	return source + "\x00" + discriminator
}

// sourceOf returns the source of a node key.
func sourceOf(key string) string {
	src, _, _ := strings.Cut(key, "\x00")
	return src
}

// check runs every format's checks of the whole closure.
func (r *resolver) check(g *Graph) error {
	var errs []error
	for _, f := range r.opts.Formats {
		if c, ok := f.(Checker); ok {
			if err := c.CheckGraph(g); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

type resolver struct {
	opts    Options
	mu      sync.Mutex
	fetches map[string]*fetchEntry // "REPO@OBJECT"
	tags    map[string]*tagEntry   // "REPO"
	// queued and done are the node keys (and, in done, the packages
	// "SOURCE@DIGEST") reported to opts.Progress, so a later round does
	// not count them again.
	queued, done map[string]bool
	// slots holds a token per registry read in flight (opts.Concurrency).
	slots chan struct{}
	// ahead is the context of reads ahead, aheadPool runs them, and
	// prefetched holds what was read ahead (prefetch.go): node keys with
	// their requirements, and with the object chosen.
	ahead      context.Context
	aheadPool  *aheadPool
	prefetched map[string]bool
}

// acquire takes a slot for a registry read, and returns its release.
func (r *resolver) acquire(ctx context.Context) (func(), error) {
	select {
	case r.slots <- struct{}{}:
		return func() { <-r.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// queue reports the node keys of a level not reported yet.
func (r *resolver) queue(keys []string) {
	n := 0
	r.mu.Lock()
	for _, k := range keys {
		if !r.queued[k] {
			r.queued[k] = true
			n++
		}
	}
	r.mu.Unlock()
	if n > 0 {
		r.opts.Progress.AddPackages(n)
	}
}

// visited reports a node key as read, once. Two keys whose edges chose one
// version (a diamond's shared dependency, each edge resolved on its own)
// are one package read: the second leaves the queue without counting.
func (r *resolver) visited(key string, res levelResult) {
	id := key
	if res.err == nil && res.entry != nil {
		id = res.source + "@" + res.entry.desc.Digest.String()
	}
	r.mu.Lock()
	first, dup := !r.done[key], r.done[id]
	r.done[key], r.done[id] = true, true
	r.mu.Unlock()
	switch {
	case !first:
	case dup:
		r.opts.Progress.AddPackages(-1)
	default:
		r.opts.Progress.PackageDone(res.source, nil)
	}
}

type fetchEntry struct {
	once  sync.Once
	desc  ocispec.Descriptor
	meta  *format.Metadata
	rules Rules
	err   error
}

type tagEntry struct {
	once sync.Once
	tags []string
	err  error
}

// fetch reads a package's manifest and metadata once per repo and object.
func (r *resolver) fetch(ctx context.Context, source string, c choice) (*fetchEntry, error) {
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
		e.desc, e.meta, e.rules, e.err = r.read(ctx, source, c.object())
		if e.err == nil {
			r.mu.Lock()
			if _, ok := r.fetches[source+"@"+e.desc.Digest.String()]; !ok {
				r.fetches[source+"@"+e.desc.Digest.String()] = e
			}
			r.mu.Unlock()
		}
	})
	return e, e.err
}

func (r *resolver) read(ctx context.Context, source, object string) (ocispec.Descriptor, *format.Metadata, Rules, error) {
	repo, err := r.open(source)
	if err != nil {
		return ocispec.Descriptor{}, nil, nil, err
	}
	// One slot covers the package's reads: the manifest and what its
	// format reads after it, one at a time. It is given back before the
	// tag list below, which takes a slot of its own.
	release, err := r.acquire(ctx)
	if err != nil {
		return ocispec.Descriptor{}, nil, nil, fmt.Errorf("fetching %s: %w", refString(source, object), err)
	}
	desc, rc, err := repo.FetchReference(ctx, object)
	if err != nil {
		release()
		if errors.Is(err, errdef.ErrNotFound) && !strings.HasPrefix(object, "sha256:") {
			// Say it once, with the tags there are (see errors.go).
			if tags, terr := r.listTags(ctx, source); terr == nil && !slices.Contains(tags, object) {
				return ocispec.Descriptor{}, nil, nil, &TagNotFoundError{Source: source, Tag: object, Tags: tags}
			}
		}
		return ocispec.Descriptor{}, nil, nil, fmt.Errorf("fetching %s: %w", refString(source, object), err)
	}
	defer release()
	defer rc.Close()
	if desc.Size > maxManifestBytes {
		return desc, nil, nil, fmt.Errorf("fetching %s: manifest of %d bytes is too large", refString(source, object), desc.Size)
	}
	raw, err := io.ReadAll(io.LimitReader(rc, maxManifestBytes+1))
	if err != nil {
		return desc, nil, nil, fmt.Errorf("fetching %s: %w", refString(source, object), err)
	}
	r.opts.Progress.BlobBytes("resolve "+refString(source, object), int64(len(raw)))
	// The bytes decide: their digest (checked against the digest asked
	// for and the one the registry announced) and their media type (from
	// the content, not Content-Type, which oras-go put in desc).
	var asked digest.Digest
	if d, err := digest.Parse(object); err == nil {
		asked = d
	}
	desc, err = manifest.Describe(raw, asked, desc.Digest, desc.MediaType)
	if err != nil {
		return desc, nil, nil, fmt.Errorf("fetching %s: %w", refString(source, object), err)
	}
	for _, ff := range r.opts.Formats {
		f, ok := ff.(format.Reader)
		if !ok || !f.Match(desc, raw) {
			continue
		}
		meta, err := f.Read(ctx, repo, desc, raw)
		if errors.Is(err, format.ErrNotPackage) {
			continue
		}
		if err != nil {
			return desc, nil, nil, fmt.Errorf("reading %s: %w", refString(source, object), err)
		}
		rules, ok := ff.(Rules)
		if !ok {
			rules = defaultRules{}
		}
		return desc, meta, rules, nil
	}
	return desc, &format.Metadata{Kind: format.KindArtifact}, defaultRules{}, nil
}

// open opens source for reading, through the format that owns it when it
// is not a registry repository (see format.Open).
func (r *resolver) open(source string) (format.Repository, error) {
	return format.Open(r.opts.Registry, r.opts.Formats, source)
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
		repo, err := r.open(source)
		if err != nil {
			e.err = err
			return
		}
		release, err := r.acquire(ctx)
		if err != nil {
			e.err = fmt.Errorf("listing tags of %s: %w", source, err)
			return
		}
		defer release()
		e.tags, e.err = client.ListTags(ctx, repo)
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
	if err := checkDeclared(source, c, reqs, res.entry.meta); err != nil {
		res.err = withChain(reqs, source, err)
		return res
	}
	if c.tag == "" && res.entry.meta.Version != "" {
		res.choice.tag = rs.r.tagOf(ctx, source, c.digest, res.entry.meta.Version)
	}
	// Read ahead with the requirements addPackage will take (rs.reqs is
	// not written while the level reads).
	if own := rs.reqs[key]; len(own) > 0 {
		reqs = own
	}
	rs.readAhead(source, res.choice, res.entry, reqs)
	return res
}

// tagOf finds the tag of a digest-pinned package from the version its
// metadata records, trying the usual spellings ("v1.2.3", "1.2.3", "+" as
// "_"), so the mirror can carry the tag too. It returns "" when none of
// them points at the digest.
func (r *resolver) tagOf(ctx context.Context, source string, d digest.Digest, version string) string {
	repo, err := r.open(source)
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
	last := source
	// The edge's name says how the parent named the package when it is
	// more than the package's own name (a Helm chart's image names the
	// template that deploys it), as lock.Why shows it.
	if len(reqs) > 0 && reqs[0].name != "" && reqs[0].name != source[strings.LastIndex(source, "/")+1:] {
		last += " (via " + reqs[0].name + ")"
	}
	prefix := strings.Join(append(append([]string(nil), chain...), last), " -> ")
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
func (rs *roundState) choose(ctx context.Context, source string, reqs []requirement, policy Policy) (choice, error) {
	pin, err := pinOf(source, reqs)
	if err != nil {
		return choice{}, withChain(reqs, source, err)
	}
	if pin != "" {
		return rs.choosePinned(ctx, source, pin, reqs)
	}
	if rs.r.opts.Update == nil || !rs.r.opts.Update(source) {
		if c, ok := keepLocked(rs.r.opts.Locked[source], reqs, policy); ok {
			return c, nil
		}
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
	if policy.Pick != nil && !anyReq(reqs) {
		tag, err := policy.Pick(requestsOf(reqs), tags)
		if err != nil {
			return choice{}, withChain(reqs, source, err)
		}
		return choice{tag: tag}, nil
	}
	tag, err := pickTag(source, reqs, tags)
	if err != nil {
		return choice{}, err
	}
	return choice{tag: tag}, nil
}

// requestsOf returns reqs as a Policy's Pick sees them.
func requestsOf(reqs []requirement) []Request {
	requests := make([]Request, len(reqs))
	for i, r := range reqs {
		requests[i] = Request{From: r.from, Tag: r.tag, Constraint: r.constraint, Prereleases: r.prereleases, Group: r.group}
	}
	return requests
}

// keepLocked returns the locked version of a source to keep for reqs.
// A policy with its own Pick chooses among the locked versions as it
// would among the repository's tags: the version an earlier resolution
// picked for these requests is the one Pick gives among the versions it
// locked, however many versions of the source the closure holds (an
// unpinned edge keeps the newest locked version, not whichever is listed
// first), and a constraint only the format reads (KUDO's
// "operatorVersion=Y") is honoured. Otherwise the first locked version
// satisfying every constraint is kept.
func keepLocked(locked []Locked, reqs []requirement, policy Policy) (choice, bool) {
	if policy.Pick != nil && !anyReq(reqs) {
		var tags []string
		digests := map[string]digest.Digest{}
		for _, l := range locked {
			if l.Digest != "" {
				tags = append(tags, l.Version)
				digests[l.Version] = l.Digest
			}
		}
		if len(tags) == 0 {
			return choice{}, false
		}
		tag, err := policy.Pick(requestsOf(reqs), tags)
		if err != nil || digests[tag] == "" {
			return choice{}, false
		}
		return choice{tag: tag, digest: digests[tag]}, true
	}
	for _, l := range locked {
		if l.Digest != "" && satisfies(l.Version, reqs) {
			return choice{tag: l.Version, digest: l.Digest}, true
		}
	}
	return choice{}, false
}

// anyReq reports whether some requirement accepts any version (a
// replaced edge).
func anyReq(reqs []requirement) bool {
	for _, r := range reqs {
		if r.any {
			return true
		}
	}
	return false
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
	repo, err := rs.r.open(source)
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
	for _, d := range meta.Dependencies {
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

// finish turns the round's nodes into the graph: nodes that chose the
// same digest of one source become one package, identified by its source
// when the source has one package in the closure, else by SOURCE@DIGEST.
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
		if _, ok := g.Packages[id]; !ok {
			p.ID = id
			g.Packages[id] = p
			for _, w := range p.Meta.Warnings {
				g.Warnings = append(g.Warnings, p.Label()+": "+w)
			}
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
	// A format that shares one version per repository (Crossplane) cannot
	// install two: roots at two versions of such a package, or a root and
	// a dependency that disagree, are a conflict.
	var errs []error
	for src, ds := range digests {
		if len(ds) < 2 {
			continue
		}
		var labels []string
		shared := false
		for _, d := range ds {
			p := g.Packages[src+"@"+d]
			// A cluster runs one image at many tags: an image is never
			// "installed" once per repository.
			if !p.rules.Policy().Unshared && p.Kind != format.KindImage {
				shared = true
			}
			labels = append(labels, p.Label()+" (via "+strings.Join(append(p.Chain, p.Label()), " -> ")+")")
		}
		if shared {
			sort.Strings(labels)
			errs = append(errs, fmt.Errorf("%s is needed at %d versions, and its format installs one version of a package: %s", src, len(ds), strings.Join(labels, "; ")))
		}
	}
	if len(errs) > 0 {
		sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
		return nil, errors.Join(errs...)
	}
	return g, nil
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
