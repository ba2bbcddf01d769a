package relocate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/runblobs"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/progress"
)

// Repositories opens registry repositories; *client.Client implements it.
type Repositories interface {
	Repository(repo string) (*remote.Repository, error)
}

// Options configures a mirror run.
type Options struct {
	// Source opens the repositories packages are copied from.
	Source Repositories
	// Target opens mirror repositories; nil means Source.
	Target Repositories
	// To places sources in the mirror.
	To Mapping
	// Concurrency bounds the blobs whose bytes move at once, across every
	// package (default 4). Packages, metadata requests and blobs waiting on
	// the network are scheduled apart, each within a multiple of it (see
	// packageLimit, openLimit and limited).
	Concurrency int
	// Progress, when set, is called as each package finishes.
	Progress func(PackageResult)
	// Reporter, when set, is told of each package and blob as the copy
	// goes (bytes read, mounts, skips), for live progress; it changes
	// nothing that is copied. Nil reports nothing.
	Reporter progress.Reporter
	// Formats are the package formats; those that are Qualifiers decide
	// which layouts break a reference (see Mapping.BrokenEdges).
	Formats []format.Format
	// Retry bounds the tries of a push that fails with a transient error
	// (the content is re-read from the origin for each) and, as the catch
	// all, of a whole package's copy (at most 3 tries).
	Retry client.RetryPolicy
	// Origin, when set, names the repository (opened with Source) a
	// package is read from instead of its source repository: another
	// mirror, promoting content from one mirror to the next. The copy is
	// by the locked digest, checked as always.
	Origin func(p *lock.Package) string
	// JournalDir is where the run remembers the mirror repositories it
	// began to push into while they held no tag, so that a run cut short
	// is resumed without pushing again what it pushed (see known.go).
	// Empty means ferry/mirror-journal in the user's cache directory.
	JournalDir string
	// AllowBrokenReferences lets a layout break partially qualified
	// references (see Mapping.BrokenEdges) instead of refusing it: the
	// closure is installed pinned by digest with the format's own
	// dependency resolution off (Crossplane's skipDependencyResolution, as
	// `ferry install` writes it), so no reference is qualified inside the
	// mirror. The broken references are listed in the Report.
	AllowBrokenReferences bool
	// Blobs, when set, holds small blobs this run's resolution read from
	// the sources (resolve.Options.Blobs), each checked against its
	// digest: a package read from its own source repository takes them
	// from there instead of reading them again. Only a mirror run that
	// resolved its closure sets it; verification never does.
	Blobs *runblobs.Cache
}

// origin returns the repository p is read from.
func (o Options) origin(p *lock.Package) string {
	if o.Origin != nil {
		return o.Origin(p)
	}
	return p.Source
}

// PackageResult reports one package's copy.
type PackageResult struct {
	Source string `json:"source"`
	Mirror string `json:"mirror"`
	Digest string `json:"digest"`
	Tag    string `json:"version,omitempty"` // the locked version: `version`, as in every report
	// Tags are the other tags of the digest pushed with it (lock.Package.Tags).
	Tags    []string `json:"tags,omitempty"`
	Copied  int64    `json:"copied"`
	Mounted int64    `json:"mounted"`
	Skipped int64    `json:"skipped"`
	// Bytes counts bytes sent to the mirror (mounted blobs are not sent).
	Bytes int64 `json:"bytes"`
	// Signatures are the cosign tags (sha256-HEX.sig, .att, .sbom) copied,
	// for every manifest of the package's graph.
	Signatures []string `json:"signatures,omitempty"`
	// Referrers are the digests of the OCI referrers copied.
	Referrers []string `json:"referrers,omitempty"`
	// Ignored names the cosign tags and referrers the origin holds for
	// the package's manifests that its lock entry does not name, and that
	// were therefore not copied (see copyTree).
	Ignored []string `json:"ignored,omitempty"`
	// Nodes are the digests of the graph under the package's root
	// manifest, as the copy found them (see Nodes).
	Nodes *Nodes `json:"-"`
	// seen are the origin's names of the cosign tags found for the
	// package, copied or ignored.
	seen []string
}

// Report is the result of a mirror run.
type Report struct {
	To       string          `json:"to"`
	Packages []PackageResult `json:"packages"`
	// Ignored names what an archive holds beside the lock's packages and
	// their signatures (another repository, another tag) and was not
	// imported.
	Ignored []string `json:"ignored,omitempty"`
	// Shard, for a sharded run (MirrorShard), counts what this shard did;
	// Packages then lists only the packages it copied.
	Shard *ShardReport `json:"shard,omitempty"`
	// BrokenReferences are the partially qualified references the layout
	// breaks, copied anyway under Options.AllowBrokenReferences.
	BrokenReferences []BrokenEdge `json:"brokenReferences,omitempty"`
}

// signatureKinds are cosign's tag suffixes for a digest's signatures,
// attestations and SBOMs.
var signatureKinds = []string{"sig", "att", "sbom"}

// Mirror copies every resolved package of l into the mirror and records
// each package's mirror repository in l. Nothing is copied when two sources
// map to one repository. With each package go the signatures of every
// manifest of its graph: those its lock entry names when it names them,
// else every one the source holds (see copyTree).
func Mirror(ctx context.Context, l *lock.Lock, opts Options) (*Report, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.Target == nil {
		opts.Target = opts.Source
	}
	opts.To = opts.To.WithFormats(opts.Formats)
	pkgs := l.Resolved()
	broken, err := checkDestination(l, pkgs, opts)
	if err != nil {
		return nil, err
	}
	if err := checkRegistry(ctx, opts); err != nil {
		return nil, err
	}
	led := newLedger(opts.Concurrency)
	led.journal = openJournal(opts.JournalDir)
	rep := progress.Or(opts.Reporter)
	rep.AddPackages(len(pkgs))
	results, err := copyPackages(ctx, pkgs, opts, led, rep, nil)
	if err != nil {
		return nil, err
	}
	for _, p := range pkgs {
		p.Mirror = opts.To.Repo(p.Source)
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].Source+results[i].Digest < results[j].Source+results[j].Digest })
	return &Report{To: opts.To.String(), Packages: results, BrokenReferences: broken}, nil
}

// origin is where a package's content is copied from: its source
// repository, or an archive holding many repositories.
type origin interface {
	content.ReadOnlyStorage
	content.Resolver
}

// originRef names a tag of p's repository in an origin.
type originRef func(p *lock.Package, tag string) string

// repoTag names a tag in a source repository: the tag itself.
func repoTag(_ *lock.Package, tag string) string { return tag }

func copyPackage(ctx context.Context, p *lock.Package, opts Options, led *ledger) (*PackageResult, error) {
	src, err := opts.openSource(p)
	if err != nil {
		return nil, err
	}
	if r, ok := src.(*remote.Repository); ok && opts.Blobs != nil && opts.origin(p) == p.Source {
		return copyFrom(ctx, resolvedBlobs{Repository: r, blobs: opts.Blobs, source: p.Source}, repoTag, p, opts, led)
	}
	return copyFrom(ctx, src, repoTag, p, opts, led)
}

// resolvedBlobs is a source repository whose small blobs that resolution
// read already (Options.Blobs) are answered without a request; every
// other read, and every listing, goes to the repository.
type resolvedBlobs struct {
	*remote.Repository
	blobs  *runblobs.Cache
	source string
}

// Fetch answers desc from the blobs resolution read, else from the
// repository.
func (s resolvedBlobs) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	if b, ok := s.blobs.Get(s.source, desc); ok {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return s.Repository.Fetch(ctx, desc)
}

// copyFrom copies p's graph, tag, signatures and referrers from src into
// its mirror repository.
func copyFrom(ctx context.Context, src origin, ref originRef, p *lock.Package, opts Options, led *ledger) (*PackageResult, error) {
	dstName := opts.To.Repo(p.Source)
	dst, err := opts.Target.Repository(dstName)
	if err != nil {
		return nil, err
	}
	defer led.release(dstName)
	res := &PackageResult{Source: p.Source, Mirror: dstName, Digest: p.Digest, Tag: p.Version, Tags: p.Tags, Nodes: NewNodes()}
	st := led.repoState(ctx, dstName, dst)
	cp := copier{
		src: src, srcRef: ref, dst: dst, dstName: dstName, conc: opts.Concurrency, led: led, retry: opts.Retry, rep: opts.Reporter,
		tag: func(ctx context.Context, desc ocispec.Descriptor, tag string) error {
			return tagKnown(ctx, dst, st, desc, tag)
		},
		repo: dst, known: st,
	}
	if err := copyTree(ctx, cp, p, res); err != nil {
		return nil, err
	}
	if st.untagged && len(p.AllTags()) > 0 {
		// The repository holds a tag now: the next run lists it.
		led.journal.end(dstName)
	}
	return res, nil
}

// copyTree copies p's graph from cp's origin into cp's destination, tags
// its root, and copies the signatures attached to every manifest of the
// graph (index, config manifest, invocation and component images,
// platform manifests): cosign's tags (sha256-HEX.sig, .att, .sbom) and OCI
// referrers. It is the one copy that mirroring to a registry, writing an
// archive and importing an archive share, so what travels with a package
// cannot differ between them.
//
// When p.Signatures is non-nil (a lock written by a ferry that records
// signatures), exactly the signatures it names are copied, by digest, and
// every cosign tag or referrer the origin holds for a manifest of the graph
// that the lock does not name is left behind and listed in res.Ignored.
// When it is nil (a lock written before signatures were recorded), every
// signature and referrer found is copied, as ferry did before.
func copyTree(ctx context.Context, cp copier, p *lock.Package, res *PackageResult) error {
	root := p.Descriptor()
	manifests := &manifestSet{}
	rootTag := p.Version
	if cp.tagRoot != nil {
		rootTag = ""
	}
	cp.checkImages = p.CheckImages
	// The origin's tag list names the graph's cosign tags; it is read
	// while the graph is copied, not after, a round trip less per package.
	tags := cp.startOriginTags(ctx, p)
	// So are the root's referrers: a plain image's graph has no other
	// manifest, and its package then ends with its copy.
	rootRefs := cp.startReferrers(ctx, root)
	tagged, err := cp.graph(ctx, root, rootTag, res, res.Nodes, manifests)
	if err != nil {
		return err
	}
	// The lock's images must be nodes of the graph just copied: an edited
	// images[].digest would otherwise reach the relocation mapping.
	if err := p.CheckImages(res.Nodes.Has); err != nil {
		return err
	}
	if cp.tagRoot != nil {
		if err := cp.tagRoot(ctx, root); err != nil {
			return fmt.Errorf("tagging %s: %w", res.Mirror, err)
		}
	} else if p.Version != "" && !tagged {
		if err := cp.tag(ctx, root, p.Version); err != nil {
			return fmt.Errorf("tagging %s:%s: %w", res.Mirror, p.Version, err)
		}
	}
	// Every other tag requested for the digest (lock.Package.Tags) points
	// at the root too: a pull by any of them finds the mirror.
	if cp.tagRoot == nil {
		for _, t := range p.Tags {
			if err := cp.tag(ctx, root, t); err != nil {
				return fmt.Errorf("tagging %s:%s: %w", res.Mirror, t, err)
			}
		}
	}
	found, err := cp.attached(ctx, p, manifests.sorted(), tags, rootRefs)
	if err != nil {
		return err
	}
	for _, a := range found {
		if a.tag != "" {
			res.seen = append(res.seen, cp.srcRef(p, a.tag))
		}
	}
	if p.Signatures == nil {
		for _, a := range found {
			if err := cp.copyAttached(ctx, a, res); err != nil {
				return err
			}
		}
		return nil
	}
	named := map[string]bool{}
	for _, s := range p.Signatures {
		named[s.Subject+" "+s.Kind+" "+s.Digest] = true
	}
	for _, a := range found {
		if !named[a.subject.String()+" "+a.kind+" "+a.desc.Digest.String()] {
			res.Ignored = append(res.Ignored, a.String(p))
		}
	}
	for _, s := range p.Signatures {
		a, err := cp.locked(ctx, s)
		if err != nil {
			return err
		}
		if err := cp.copyAttached(ctx, a, res); err != nil {
			return err
		}
	}
	return nil
}

// copier copies graphs from an origin into one destination: a mirror
// repository, or an archive's layout.
type copier struct {
	src origin
	// srcRef names a tag of the package's repository in src.
	srcRef originRef
	dst    oras.Target
	// dstName is the destination's name in the ledger.
	dstName string
	conc    int
	led     *ledger
	retry   client.RetryPolicy
	// tag points a tag of the package's repository at desc in dst.
	tag func(ctx context.Context, desc ocispec.Descriptor, tag string) error
	// tagRoot, when set, names the package's root in dst instead of
	// tagging it with the package's version.
	tagRoot func(ctx context.Context, root ocispec.Descriptor) error
	// rep, when set, is told of each blob's bytes and outcome.
	rep progress.Reporter
	// repo and known, when set, are the mirror repository dst is and
	// what the run knows of it: a copy then asks for no node the run
	// knows about and pushes a tagged root by its tag (knownTarget).
	repo  *remote.Repository
	known *repoState
	// checkImages, when set, is the package's check that its lock's
	// images are nodes of its graph: a root pushed by tag is pushed only
	// once it passes, as a root tagged after its copy is tagged.
	checkImages func(inGraph func(digest.Digest) bool) error
}

// graph copies root's graph from the origin to the destination, counting
// what it did; nodes, when set, gets the digest of every node of the graph,
// and manifests, when set, its manifests. When tag is set and the
// destination is a mirror repository (cp.repo), the root is pushed by tag;
// graph then reports whether tag is known to point at root (pushed by it,
// or found there), and the caller need not tag it.
func (cp copier) graph(ctx context.Context, root ocispec.Descriptor, tag string, res *PackageResult, nodes *Nodes, manifests *manifestSet) (bool, error) {
	var copied, mounted, skipped, sent atomic.Int64
	led, dstName := cp.led, cp.dstName
	opts := oras.CopyGraphOptions{
		Concurrency: cp.conc,
		PostCopy: func(ctx context.Context, desc ocispec.Descriptor) error {
			copied.Add(1)
			sent.Add(desc.Size)
			led.record(dstName, desc.Digest)
			if nodes != nil {
				nodes.Add(desc)
			}
			return manifests.add(ctx, desc)
		},
		OnCopySkipped: func(ctx context.Context, desc ocispec.Descriptor) error {
			skipped.Add(1)
			led.record(dstName, desc.Digest)
			if nodes != nil {
				// Below a skipped manifest, the graph is read back from
				// the destination.
				return nodes.AddSkipped(ctx, cp.dst, desc, manifests.add)
			}
			return manifests.add(ctx, desc)
		},
		MountFrom: func(ctx context.Context, desc ocispec.Descriptor) ([]string, error) {
			// A registry that refused a mount gets plain pushes: no
			// mount POST, and no wait for another repository's push.
			if r, ok := cp.dst.(*remote.Repository); ok && client.MountsRefused(r) {
				return nil, nil
			}
			srcs, err := led.mountSources(ctx, dstName, desc.Digest)
			if err != nil || len(srcs) == 0 {
				return nil, err
			}
			// One source only, the first repository that got the blob:
			// oras-go tries each source in turn and abandons the upload
			// session a refused mount opened for every source but the
			// last (copy.go mountOrCopyNode's skipSource), so a longer
			// list costs a POST and a leaked session per refusal. Mount
			// names a repository on the same registry by path.
			_, path, _ := strings.Cut(srcs[0], "/")
			return []string{path}, nil
		},
		OnMounted: func(ctx context.Context, desc ocispec.Descriptor) error {
			mounted.Add(1)
			led.record(dstName, desc.Digest)
			if nodes != nil {
				nodes.Add(desc)
			}
			return nil
		},
	}
	target := content.Storage(cp.dst)
	var known *knownTarget
	var src content.ReadOnlyStorage = cp.src
	if cp.repo != nil && cp.known != nil {
		early := newEarlyUploads(cp.repo)
		defer early.finish(ctx)
		src = earlySource{ReadOnlyStorage: src, early: early}
		known = &knownTarget{Target: cp.dst, repo: cp.repo, name: dstName, led: led, st: cp.known, root: root, tag: tag, early: early}
		if nodes != nil && cp.checkImages != nil {
			// Every node below the root is in nodes once the root is
			// pushed: the copy pushes a node after its successors.
			known.check = func() error {
				return cp.checkImages(func(d digest.Digest) bool { return d == root.Digest || nodes.Has(d) })
			}
		}
		target = known
	}
	// A push that fails is retried with the content read again from the
	// origin, within a blob slot held for the whole new try: the first
	// try's place among the blobs under way is still held, and it gives
	// back its transfer slot when it fails.
	dst := RetryingTarget(target, limited{ReadOnlyStorage: cp.src, slots: led.slots}, cp.retry)
	if cp.rep != nil {
		src = ReportProgress(cp.rep, dstName, src, &opts)
	}
	if err := oras.CopyGraph(ctx, limited{ReadOnlyStorage: src, slots: led.slots, meta: led.meta, open: led.open}, dst, root, opts); err != nil {
		return false, err
	}
	res.Copied += copied.Load()
	res.Mounted += mounted.Load()
	res.Skipped += skipped.Load()
	res.Bytes += sent.Load()
	return known != nil && known.tagged.Load(), nil
}

// ensureTag points tag at desc in dst unless it already does.
func ensureTag(ctx context.Context, dst oras.Target, desc ocispec.Descriptor, tag string) error {
	if cur, err := dst.Resolve(ctx, tag); err == nil && cur.Digest == desc.Digest {
		return nil
	}
	return immutableTag(ctx, dst, desc, tag, dst.Tag(ctx, desc, tag))
}

// forEachPackage runs do for each of pkgs concurrently, within
// packageLimit(opts.Concurrency) (blob transfers stay within
// opts.Concurrency: the ledger's slots), each retried as a whole (retryPackage) once before(i)
// (nil: nothing) has succeeded for it, and reports each to rep and
// opts.Progress; verb ("mirroring", "archiving") names the work in
// errors. No package's failure cancels another's: every failure is
// returned, joined; except a repository the mirror refuses, which starts
// no further package and checks every repository not yet written to
// (refusalGate). The results are in pkgs' order.
func forEachPackage(ctx context.Context, pkgs []*lock.Package, opts Options, led *ledger, rep progress.Reporter, verb string, before func(i int) error, do func(p *lock.Package) (*PackageResult, error)) ([]PackageResult, error) {
	results := make([]PackageResult, len(pkgs))
	errs := make([]error, len(pkgs))
	var g errgroup.Group
	g.SetLimit(packageLimit(opts.Concurrency))
	gate := newRefusalGate(pkgs, opts)
	if err := gate.preflight(ctx, led); err != nil {
		return results, err
	}
	for i, p := range pkgs {
		g.Go(func() error {
			rep.PackageStarted(p.Source)
			if !gate.begin(i) {
				rep.PackageDone(p.Source, errNotStarted)
				return nil
			}
			var err error
			if before != nil {
				err = before(i)
			}
			var res *PackageResult
			if err == nil {
				res, err = retryPackage(ctx, opts.Retry, verb+" "+p.Source, func() (*PackageResult, error) { return do(p) })
			}
			rep.PackageDone(p.Source, err)
			if err != nil {
				// A registry refusing the repository itself (it must be
				// created first, or its name is too deep) says so.
				explained := client.ExplainRepositoryRefused(err)
				errs[i] = fmt.Errorf("%s %s: %w", verb, p.Source, explained)
				if client.IsRepositoryRefused(err) {
					gate.refused(ctx, i, explained)
				}
				return nil
			}
			results[i] = *res
			if opts.Progress != nil {
				opts.Progress(*res)
			}
			return nil
		})
	}
	_ = g.Wait()
	if err := gate.err(errs); err != nil {
		return results, err
	}
	return results, errors.Join(errs...)
}

// errNotStarted is a package's outcome, for its reporter, when the run
// stopped at a refused repository before it started (refusalGate).
var errNotStarted = errors.New("not started: the mirror refuses a repository of this run")

// copyPackages copies pkgs into opts.To (forEachPackage, copyPackage).
func copyPackages(ctx context.Context, pkgs []*lock.Package, opts Options, led *ledger, rep progress.Reporter, before func(i int) error) ([]PackageResult, error) {
	return forEachPackage(ctx, pkgs, opts, led, rep, "mirroring", before, func(p *lock.Package) (*PackageResult, error) {
		return copyPackage(ctx, p, opts, led)
	})
}

// registryChecker is a Target that can tell, before anything is written,
// whether a host answers as a registry (*client.Client).
type registryChecker interface {
	CheckRegistry(ctx context.Context, host string) error
}

// checkRegistry asks the mirror's host once whether it is a registry, when
// the Target can tell: a --to that is a web server fails before the first
// write, naming what answered, not after every write's retries.
func checkRegistry(ctx context.Context, opts Options) error {
	c, ok := opts.Target.(registryChecker)
	if !ok || opts.To.Host == "" {
		return nil
	}
	return c.CheckRegistry(ctx, opts.To.Host)
}
