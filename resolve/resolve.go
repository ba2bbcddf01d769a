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
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/runblobs"
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
	// Prereleases lets Constraint admit prerelease tags (as a
	// dependency's format.Dependency.Prereleases).
	Prereleases bool
	// Select, when set, makes the root a selection of the tags of the
	// repository Ref names (without tag or digest): every tag it keeps is
	// a root of its own (see TagSelection).
	Select *TagSelection
	// Platform, when set ("linux/amd64", "linux/arm64/v8"), locks an
	// image index as its manifest for this platform alone, which the
	// mirror then holds under the tag instead of the index (see
	// platform.go).
	Platform string

	// selected is, for a root a selection made, the selection's Ref: the
	// reference its package records (Package.Ref, the lock's ref:), by
	// which a later resolution finds the tags the selection locked.
	selected string
}

// Locked is a version an earlier lock chose for a source.
type Locked struct {
	Version string
	Digest  digest.Digest
	// Ref is the reference the package was requested by (Package.Ref):
	// a tag selection keeps the tags locked under its own Ref.
	Ref string
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
	// Blobs, when set, is given the small blobs resolution reads whole
	// (the image configs of the rollback check), for a mirror run's copy
	// to use instead of reading them again. Nil keeps none.
	Blobs *runblobs.Cache

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
	r := &resolver{opts: opts, fetches: map[string]*fetchEntry{}, selected: map[string]bool{}, tags: map[string]*tagEntry{}, queued: map[string]bool{}, done: map[string]bool{},
		slots: make(chan struct{}, opts.Concurrency), prefetched: map[string]bool{}, extra: map[string][]format.Dependency{}}
	// Reads ahead (prefetch.go) end with the resolution: none is left
	// running, or sending requests, once Resolve returns.
	var cancel context.CancelFunc
	r.ahead, cancel = context.WithCancel(ctx)
	r.aheadPool = newAheadPool(opts.Concurrency)
	defer func() {
		cancel()
		r.aheadPool.close()
	}()
	// Tag selections become roots of one tag each, once: they are the
	// roots every round starts from.
	roots, err := r.selectTags(ctx, roots)
	if err != nil {
		return nil, err
	}
	rootReqs, err := r.rootRequirements(roots)
	if err != nil {
		return nil, err
	}
	expansions := 0
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
			if sameReqs(rs.reqs, hints) && maps.Equal(rs.replacing, pkgReplace) {
				return nil, err
			}
			hints, pkgReplace, lastErr = rs.reqs, rs.replacing, err
			continue
		}
		if err := checkReplaceCycles(rs.replacing, opts.Replace); err != nil {
			return nil, err
		}
		if (sameReqs(rs.reqs, hints) || rs.settled()) && maps.Equal(rs.replacing, pkgReplace) {
			g, err := rs.finish(rootKeys)
			if err != nil {
				return nil, err
			}
			g.rootIDs = make(map[Root]string, len(roots))
			for _, f := range opts.Formats {
				if ip, ok := f.(InputPlanner); ok {
					g.inputPlanners = append(g.inputPlanners, ip)
				}
			}
			for i, rr := range rootReqs {
				if id, ok := rs.rootIDs[rr.key]; ok {
					g.rootIDs[roots[i]] = id
				}
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
			// A format that adds to the closure once it is resolved
			// (Helm's images, rendered with the chart's dependencies in
			// place) is asked now; what it adds is resolved in the next
			// round, with this round's requirements as hints.
			added, err := r.expand(ctx, g, &roots)
			if err != nil {
				return nil, err
			}
			if added {
				if expansions++; expansions > maxExpansions {
					return nil, errors.New("resolution does not converge: expanding the closure keeps adding packages")
				}
				if rootReqs, err = r.rootRequirements(roots); err != nil {
					return nil, err
				}
				hints, pkgReplace = rs.reqs, rs.replacing
				continue
			}
			if err := r.check(g); err != nil {
				return nil, err
			}
			g.Warnings = append(g.Warnings, r.expandWarnings...)
			return g, nil
		}
		hints, pkgReplace = rs.reqs, rs.replacing
	}
	if lastErr != nil {
		return nil, lastErr
	}
	return nil, errors.New("resolution does not converge: constraints keep changing the chosen versions")
}

// rootReq is a root's requirement on its node.
type rootReq struct {
	key    string
	req    requirement
	policy Policy
}

// rootRequirements turns roots into the requirements every round starts
// from.
func (r *resolver) rootRequirements(roots []Root) ([]rootReq, error) {
	var rootReqs []rootReq
	for _, root := range roots {
		ref, err := ociref.Parse(root.Ref)
		if err != nil {
			return nil, badInput(err)
		}
		req := requirement{from: "root " + root.Ref, ref: root.Ref, constraint: root.Constraint, tag: ref.Tag, digest: ref.Digest, kind: root.Kind, prereleases: root.Prereleases}
		if root.selected != "" {
			req.ref = root.selected
		}
		req.platform = root.Platform
		if root.Constraint != "" && strings.HasPrefix(root.Constraint, "sha256:") {
			req.digest, req.constraint = digest.Digest(root.Constraint), ""
		}
		src := ref.Repo()
		if to, ok := r.opts.Replace[src]; ok {
			src = to
		}
		// Every root is resolved on its own: two roots may be two
		// versions of one repository.
		rootReqs = append(rootReqs, rootReq{nodeKey(src, "root:"+req.canonical()), req, rulesNamed(r.opts.Formats, root.Format).Policy()})
	}
	return rootReqs, nil
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
	// selected holds the tags a tag selection chose, "REPO@TAG": each is
	// read as a root of its own.
	selected map[string]bool
	tags     map[string]*tagEntry // "REPO"
	// released holds the tags resolved for the rollback check
	// (release.go), "REPO:TAG", each read once.
	released sync.Map
	// created holds the images' `created` dates read for the rollback
	// check, "REPO@DIGEST", each read once.
	created sync.Map
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
	// extra holds, by "SOURCE@DIGEST", the dependencies Expanders added
	// to packages (expand.go).
	extra map[string][]format.Dependency
	// expandWarnings are the warnings Expanders returned.
	expandWarnings []string
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
	// index is the manifest's bytes when it is an image index (or a
	// Docker manifest list), for choosing a platform (platform.go).
	index []byte
	// released is the version the manifest's annotations record
	// (org.opencontainers.image.version), if any: signed with the
	// manifest (checkRelease).
	released string
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
		e.desc, e.meta, e.rules, e.index, e.released, e.err = r.read(ctx, source, c.object())
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

func (r *resolver) read(ctx context.Context, source, object string) (ocispec.Descriptor, *format.Metadata, Rules, []byte, string, error) {
	repo, err := r.open(source)
	if err != nil {
		return ocispec.Descriptor{}, nil, nil, nil, "", err
	}
	// One slot covers the package's reads: the manifest and what its
	// format reads after it, one at a time. It is given back before the
	// tag list below, which takes a slot of its own.
	release, err := r.acquire(ctx)
	if err != nil {
		return ocispec.Descriptor{}, nil, nil, nil, "", fmt.Errorf("fetching %s: %w", refString(source, object), err)
	}
	desc, rc, err := repo.FetchReference(ctx, object)
	if err != nil {
		release()
		if errors.Is(err, errdef.ErrNotFound) && !strings.HasPrefix(object, "sha256:") {
			// Say it once, with the tags there are (see errors.go).
			if tags, terr := r.listTags(ctx, source); terr == nil && !slices.Contains(tags, object) {
				return ocispec.Descriptor{}, nil, nil, nil, "", &TagNotFoundError{Source: source, Tag: object, Tags: tags}
			}
		}
		return ocispec.Descriptor{}, nil, nil, nil, "", fmt.Errorf("fetching %s: %w", refString(source, object), err)
	}
	defer release()
	defer rc.Close()
	if desc.Size > maxManifestBytes {
		return desc, nil, nil, nil, "", fmt.Errorf("fetching %s: manifest of %d bytes is too large", refString(source, object), desc.Size)
	}
	raw, err := io.ReadAll(io.LimitReader(rc, maxManifestBytes+1))
	if err != nil {
		return desc, nil, nil, nil, "", fmt.Errorf("fetching %s: %w", refString(source, object), err)
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
		return desc, nil, nil, nil, "", fmt.Errorf("fetching %s: %w", refString(source, object), err)
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
			return desc, nil, nil, nil, "", fmt.Errorf("reading %s: %w", refString(source, object), err)
		}
		rules, ok := ff.(Rules)
		if !ok {
			rules = defaultRules{}
		}
		return desc, meta, rules, indexBytes(desc, raw), versionAnnotation(raw), nil
	}
	return desc, &format.Metadata{Kind: format.KindArtifact}, defaultRules{}, indexBytes(desc, raw), versionAnnotation(raw), nil
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
