package relocate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
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
	// Concurrency bounds the packages copied at once and the blobs copied
	// at once within one package (default 4).
	Concurrency int
	// Progress, when set, is called as each package finishes.
	Progress func(PackageResult)
	// Formats are the package formats; those that are Qualifiers decide
	// which layouts break a reference (see Mapping.BrokenEdges).
	Formats []format.Format
	// Retry bounds the tries of a push that fails with a transient error
	// (the content is re-read from the origin for each) and, as the catch
	// all, of a whole package's copy (at most 3 tries).
	Retry client.RetryPolicy
}

// PackageResult reports one package's copy.
type PackageResult struct {
	Source  string `json:"source"`
	Mirror  string `json:"mirror"`
	Digest  string `json:"digest"`
	Tag     string `json:"tag,omitempty"`
	Copied  int64  `json:"copied"`
	Mounted int64  `json:"mounted"`
	Skipped int64  `json:"skipped"`
	// Bytes counts bytes sent to the mirror (mounted blobs are not sent).
	Bytes      int64    `json:"bytes"`
	Signatures []string `json:"signatures,omitempty"`
	// Referrers are the digests of the OCI referrers copied.
	Referrers []string `json:"referrers,omitempty"`
	// Nodes are the digests of the graph under the package's root
	// manifest, as the copy found them (see Nodes).
	Nodes *Nodes `json:"-"`
}

// Report is the result of a mirror run.
type Report struct {
	To       string          `json:"to"`
	Packages []PackageResult `json:"packages"`
}

// signatureSuffixes are cosign's tag conventions for a digest's
// signatures, attestations and SBOMs.
var signatureSuffixes = []string{".sig", ".att", ".sbom"}

// Mirror copies every resolved package of l into the mirror and records
// each package's mirror repository in l. Nothing is copied when two sources
// map to one repository.
func Mirror(ctx context.Context, l *lock.Lock, opts Options) (*Report, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.Target == nil {
		opts.Target = opts.Source
	}
	pkgs := l.Resolved()
	var sources []string
	for _, p := range pkgs {
		if !slices.Contains(sources, p.Source) {
			sources = append(sources, p.Source)
		}
	}
	if err := opts.To.Check(sources); err != nil {
		return nil, err
	}
	if err := opts.To.CheckLayout(l, opts.Formats); err != nil {
		return nil, err
	}
	led := newLedger(opts.Concurrency)
	results := make([]PackageResult, len(pkgs))
	errs := make([]error, len(pkgs))
	// No package's failure cancels another's copy: every failure is
	// reported at the end.
	var g errgroup.Group
	g.SetLimit(opts.Concurrency)
	for i, p := range pkgs {
		g.Go(func() error {
			res, err := retryPackage(ctx, opts.Retry, "mirroring "+p.Source, func() (*PackageResult, error) {
				return copyPackage(ctx, p, opts, led)
			})
			if err != nil {
				errs[i] = fmt.Errorf("mirroring %s: %w", p.Source, err)
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
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, p := range pkgs {
		p.Mirror = opts.To.Repo(p.Source)
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].Source+results[i].Digest < results[j].Source+results[j].Digest })
	return &Report{To: opts.To.String(), Packages: results}, nil
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
	src, err := opts.Source.Repository(p.Source)
	if err != nil {
		return nil, err
	}
	return copyFrom(ctx, src, repoTag, p, opts, led)
}

// copyFrom copies p's graph, tag and signatures from src into the mirror.
func copyFrom(ctx context.Context, src origin, ref originRef, p *lock.Package, opts Options, led *ledger) (*PackageResult, error) {
	dstName := opts.To.Repo(p.Source)
	dst, err := opts.Target.Repository(dstName)
	if err != nil {
		return nil, err
	}
	defer led.release(dstName)
	res := &PackageResult{Source: p.Source, Mirror: dstName, Digest: p.Digest, Tag: p.Version, Nodes: NewNodes()}
	root := p.Descriptor()
	cp := copier{src: src, dst: dst, dstName: dstName, conc: opts.Concurrency, led: led, retry: opts.Retry}
	if err := cp.graph(ctx, root, res, res.Nodes); err != nil {
		return nil, err
	}
	// The lock's images must be nodes of the graph just copied: an edited
	// images[].digest would otherwise reach the relocation mapping.
	if err := p.CheckImages(res.Nodes.Has); err != nil {
		return nil, err
	}
	if p.Version != "" {
		if err := ensureTag(ctx, dst, root, p.Version); err != nil {
			return nil, fmt.Errorf("tagging %s:%s: %w", dstName, p.Version, err)
		}
	}
	if err := cp.referrers(ctx, root, res); err != nil {
		return nil, err
	}
	for _, tag := range signatureTags(root) {
		desc, err := src.Resolve(ctx, ref(p, tag))
		if errors.Is(err, errdef.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("looking for %s: %w", tag, err)
		}
		if err := cp.graph(ctx, desc, res, nil); err != nil {
			return nil, fmt.Errorf("copying %s: %w", tag, err)
		}
		if err := ensureTag(ctx, dst, desc, tag); err != nil {
			return nil, fmt.Errorf("tagging %s: %w", tag, err)
		}
		res.Signatures = append(res.Signatures, tag)
	}
	return res, nil
}

// copyReferrers copies the OCI referrers of root (signatures, SBOMs and
// attestations attached with a subject) when the origin can list them.
func (cp copier) referrers(ctx context.Context, root ocispec.Descriptor, res *PackageResult) error {
	lister, ok := cp.src.(registry.ReferrerLister)
	if !ok {
		return nil
	}
	var refs []ocispec.Descriptor
	err := lister.Referrers(ctx, root, "", func(page []ocispec.Descriptor) error {
		refs = append(refs, page...)
		return nil
	})
	if err != nil && !errors.Is(err, errdef.ErrNotFound) {
		return fmt.Errorf("listing referrers of %s: %w", root.Digest, err)
	}
	for _, r := range refs {
		if err := cp.graph(ctx, r, res, nil); err != nil {
			return fmt.Errorf("copying referrer %s: %w", r.Digest, err)
		}
		res.Referrers = append(res.Referrers, r.Digest.String())
	}
	return nil
}

// signatureTags returns cosign's tags for root's signature, attestations
// and SBOM.
func signatureTags(root ocispec.Descriptor) []string {
	base := strings.Replace(root.Digest.String(), ":", "-", 1)
	out := make([]string, 0, len(signatureSuffixes))
	for _, s := range signatureSuffixes {
		out = append(out, base+s)
	}
	return out
}

// copier copies graphs from an origin into one mirror repository.
type copier struct {
	src     origin
	dst     *remote.Repository
	dstName string
	conc    int
	led     *ledger
	retry   client.RetryPolicy
}

// graph copies root's graph from the origin to the mirror, counting what
// it did; nodes, when set, gets the digest of every node of the graph.
func (cp copier) graph(ctx context.Context, root ocispec.Descriptor, res *PackageResult, nodes *Nodes) error {
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
			return nil
		},
		OnCopySkipped: func(ctx context.Context, desc ocispec.Descriptor) error {
			skipped.Add(1)
			led.record(dstName, desc.Digest)
			if nodes != nil {
				return nodes.AddSkipped(ctx, cp.dst, desc, nil)
			}
			return nil
		},
		MountFrom: func(ctx context.Context, desc ocispec.Descriptor) ([]string, error) {
			srcs, err := led.mountSources(ctx, dstName, desc.Digest)
			if err != nil {
				return nil, err
			}
			// Mount names a repository on the same registry by path.
			out := make([]string, 0, len(srcs))
			for _, s := range srcs {
				_, path, _ := strings.Cut(s, "/")
				out = append(out, path)
			}
			return out, nil
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
	// A push that fails is retried with the content read again from the
	// origin itself: the read slot of the first try is still held.
	dst := RetryingTarget(cp.dst, cp.src, cp.retry)
	if err := oras.CopyGraph(ctx, limited{cp.src, led.slots}, dst, root, opts); err != nil {
		return err
	}
	res.Copied += copied.Load()
	res.Mounted += mounted.Load()
	res.Skipped += skipped.Load()
	res.Bytes += sent.Load()
	return nil
}

// ensureTag points tag at desc in dst unless it already does.
func ensureTag(ctx context.Context, dst *remote.Repository, desc ocispec.Descriptor, tag string) error {
	if cur, err := dst.Resolve(ctx, tag); err == nil && cur.Digest == desc.Digest {
		return nil
	}
	return dst.Tag(ctx, desc, tag)
}
