package relocate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/signature"
)

// Attachments: what a registry holds attached to a package's manifests
// (cosign's signature, attestation and SBOM tags, and OCI referrers), found
// with one tag listing and a referrers request per manifest, and copied
// after the graph they attach to.

// attachment is a signature, attestation, SBOM or referrer attached to a
// manifest of a package's graph.
type attachment struct {
	subject digest.Digest
	// kind is "sig", "att", "sbom" (cosign's tags) or "referrer".
	kind string
	// tag is the cosign tag (sha256-HEX.sig), empty for a referrer.
	tag  string
	desc ocispec.Descriptor
}

// String names a in reports: SOURCE:TAG (DIGEST) for a cosign tag,
// "SOURCE referrer DIGEST of SUBJECT" for a referrer.
func (a attachment) String(p *lock.Package) string {
	if a.tag != "" {
		return fmt.Sprintf("%s:%s (%s)", p.Source, a.tag, a.desc.Digest)
	}
	return fmt.Sprintf("%s referrer %s of %s", p.Source, a.desc.Digest, a.subject)
}

// cosignTag returns cosign's tag for subject's signature ("sig"),
// attestations ("att") or SBOM ("sbom"): sha256-HEX.KIND (cosign
// pkg/oci/remote/remote.go, SignatureTag, AttestationTag, SBOMTag).
func cosignTag(subject digest.Digest, kind string) string {
	return subject.Algorithm().String() + "-" + subject.Encoded() + "." + kind
}

// copyAttached copies a's graph and, for a cosign tag, tags it.
func (cp copier) copyAttached(ctx context.Context, a attachment, res *PackageResult) error {
	tagged, err := cp.graph(ctx, a.desc, a.tag, res, nil, nil)
	if err != nil {
		if a.tag != "" {
			return fmt.Errorf("copying %s: %w", a.tag, err)
		}
		return fmt.Errorf("copying referrer %s: %w", a.desc.Digest, err)
	}
	if a.tag == "" {
		res.Referrers = append(res.Referrers, a.desc.Digest.String())
		return nil
	}
	if !tagged {
		if err := cp.tag(ctx, a.desc, a.tag); err != nil {
			return fmt.Errorf("tagging %s: %w", a.tag, err)
		}
	}
	res.Signatures = append(res.Signatures, a.tag)
	return nil
}

// locked returns the attachment a lock's signature entry names, read from
// the origin by digest when the entry lacks its media type or size.
func (cp copier) locked(ctx context.Context, s lock.Signature) (attachment, error) {
	subject, err := digest.Parse(s.Subject)
	if err != nil {
		return attachment{}, fmt.Errorf("signature %s: subject: %w", s.Digest, err)
	}
	d, err := digest.Parse(s.Digest)
	if err != nil {
		return attachment{}, fmt.Errorf("signature of %s: %w", s.Subject, err)
	}
	a := attachment{subject: subject, kind: s.Kind, desc: ocispec.Descriptor{MediaType: s.MediaType, Digest: d, Size: s.Size, ArtifactType: s.ArtifactType}}
	switch s.Kind {
	case "sig", "att", "sbom":
		a.tag = cosignTag(subject, s.Kind)
	case "referrer":
	default:
		return attachment{}, fmt.Errorf("signature %s of %s: unknown kind %q", s.Digest, s.Subject, s.Kind)
	}
	if a.desc.MediaType == "" || a.desc.Size <= 0 {
		desc, err := cp.src.Resolve(ctx, d.String())
		if err != nil {
			return attachment{}, fmt.Errorf("looking for signature %s of %s: %w", d, s.Subject, err)
		}
		a.desc.MediaType, a.desc.Size = desc.MediaType, desc.Size
	}
	return a, nil
}

// attached returns what the origin holds attached to the manifests: the
// cosign tags of each, then its referrers. The cosign tags are found in
// one listing of the package's tags in the origin (a registry's tag list,
// an archive's index.json; tags, from startOriginTags) rather than a
// request per manifest and suffix; an origin whose tags cannot be listed
// is asked for each tag instead.
//
// rootRefs, when set, waits for the referrers of the package's root, read
// while the graph was copied (startReferrers).
func (cp copier) attached(ctx context.Context, p *lock.Package, manifests []ocispec.Descriptor, originTags func() (map[string]bool, bool), rootRefs *startedReferrers) ([]attachment, error) {
	tags, listed := originTags()
	var out []attachment
	for _, m := range manifests {
		for _, kind := range signatureKinds {
			tag := cosignTag(m.Digest, kind)
			if listed && !tags[tag] {
				continue
			}
			desc, err := cp.src.Resolve(ctx, cp.srcRef(p, tag))
			if errors.Is(err, errdef.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("looking for %s: %w", tag, err)
			}
			out = append(out, attachment{subject: m.Digest, kind: kind, tag: tag, desc: desc})
		}
	}
	// A registry answers one referrers request per manifest: the first
	// alone, which tells oras-go whether the registry has the referrers
	// API or needs its tag schema fallback (remote.Repository remembers
	// it), then the others at once, within the run's concurrency.
	refs := make([][]ocispec.Descriptor, len(manifests))
	var g errgroup.Group
	g.SetLimit(max(cp.conc, 1))
	first := true
	if rootRefs != nil {
		// The root's answer, asked first, settled the capability.
		for i, m := range manifests {
			if m.Digest == rootRefs.subject.Digest {
				var err error
				if refs[i], err = rootRefs.wait(); err != nil {
					return nil, err
				}
				first = false
			}
		}
	}
	for i, m := range manifests {
		if rootRefs != nil && m.Digest == rootRefs.subject.Digest {
			continue
		}
		if first {
			first = false
			var err error
			if refs[i], err = cp.referrersOf(ctx, m); err != nil {
				return nil, err
			}
			continue
		}
		g.Go(func() error {
			var err error
			refs[i], err = cp.referrersOf(ctx, m)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, m := range manifests {
		for _, r := range refs[i] {
			out = append(out, attachment{subject: m.Digest, kind: "referrer", desc: r})
		}
	}
	return out, nil
}

// startedReferrers is a listing of subject's referrers in the origin
// under way (startReferrers).
type startedReferrers struct {
	subject ocispec.Descriptor
	done    chan struct{}
	refs    []ocispec.Descriptor
	err     error
}

// wait returns the listing's answer once it has come.
func (s *startedReferrers) wait() ([]ocispec.Descriptor, error) {
	<-s.done
	return s.refs, s.err
}

// startReferrers starts listing subject's referrers in the origin
// (referrersOf), beside the graph's copy rather than after it: a round
// trip less in each package's chain (W6: 120 plain images, each one
// manifest).
func (cp copier) startReferrers(ctx context.Context, subject ocispec.Descriptor) *startedReferrers {
	s := &startedReferrers{subject: subject, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.refs, s.err = cp.referrersOf(ctx, subject)
	}()
	return s
}

// startOriginTags starts listing the tags of p's repository in the
// origin (originTags) and returns the wait for the listing.
func (cp copier) startOriginTags(ctx context.Context, p *lock.Package) func() (map[string]bool, bool) {
	type listing struct {
		tags   map[string]bool
		listed bool
	}
	done := make(chan listing, 1)
	go func() {
		tags, listed := cp.originTags(ctx, p)
		done <- listing{tags, listed}
	}()
	return func() (map[string]bool, bool) {
		l := <-done
		return l.tags, l.listed
	}
}

// originTags returns the tags of p's repository in the origin, and
// whether the origin could list them.
func (cp copier) originTags(ctx context.Context, p *lock.Package) (map[string]bool, bool) {
	lister, ok := cp.src.(registry.TagLister)
	if !ok {
		return nil, false
	}
	all, err := client.ListTags(ctx, lister)
	if err != nil {
		return nil, false
	}
	prefix := cp.srcRef(p, "")
	out := map[string]bool{}
	for _, t := range all {
		if rest, ok := strings.CutPrefix(t, prefix); ok {
			out[rest] = true
		}
	}
	return out, true
}

// referrersOf returns the OCI referrers of subject in the origin: through
// the registry's referrers API (or its tag schema fallback), or, in an OCI
// layout, as the manifests whose subject field names it (oras-go
// content/oci finds them as predecessors).
func (cp copier) referrersOf(ctx context.Context, subject ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	if lister, ok := cp.src.(registry.ReferrerLister); ok {
		var refs []ocispec.Descriptor
		err := lister.Referrers(ctx, subject, "", func(page []ocispec.Descriptor) error {
			refs = append(refs, page...)
			return nil
		})
		if err != nil && !errors.Is(err, errdef.ErrNotFound) {
			return nil, fmt.Errorf("listing referrers of %s: %w", subject.Digest, err)
		}
		// A listing's artifactType is what the registry, or the tool
		// that wrote the tag-schema fallback index, says; when that says
		// nothing (signature.ArtifactTypeDecisive), the manifest is read,
		// so that what the lock records is the referrer's own artifact
		// type, whichever layout listed it.
		for i, r := range refs {
			if signature.ArtifactTypeDecisive(r.ArtifactType) || !isManifest(r.MediaType) {
				continue
			}
			raw, err := content.FetchAll(ctx, cp.src, r)
			if err != nil {
				return nil, fmt.Errorf("reading referrer %s of %s: %w", r.Digest, subject.Digest, err)
			}
			if t := signature.ReferrerArtifactType(raw); t != "" {
				refs[i].ArtifactType = t
			}
		}
		return refs, nil
	}
	finder, ok := cp.src.(content.PredecessorFinder)
	if !ok {
		return nil, nil
	}
	preds, err := finder.Predecessors(ctx, subject)
	if err != nil {
		return nil, fmt.Errorf("listing referrers of %s: %w", subject.Digest, err)
	}
	var refs []ocispec.Descriptor
	for _, d := range preds {
		if !isManifest(d.MediaType) {
			continue
		}
		raw, err := content.FetchAll(ctx, cp.src, d)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", d.Digest, err)
		}
		var m struct {
			ArtifactType string              `json:"artifactType"`
			Config       *ocispec.Descriptor `json:"config"`
			Subject      *ocispec.Descriptor `json:"subject"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("reading %s: %w", d.Digest, err)
		}
		if m.Subject == nil || m.Subject.Digest != subject.Digest {
			continue // an index holding subject, not a referrer
		}
		d.ArtifactType = m.ArtifactType
		if d.ArtifactType == "" && m.Config != nil {
			d.ArtifactType = m.Config.MediaType
		}
		refs = append(refs, d)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Digest < refs[j].Digest })
	return refs, nil
}

// isManifest reports whether mediaType is an image manifest or index,
// OCI or Docker.
func isManifest(mediaType string) bool {
	switch mediaType {
	case ocispec.MediaTypeImageManifest, ocispec.MediaTypeImageIndex,
		"application/vnd.docker.distribution.manifest.v2+json",
		"application/vnd.docker.distribution.manifest.list.v2+json":
		return true
	}
	return false
}

// manifestSet collects the manifests of a graph as a copy meets them.
type manifestSet struct {
	mu sync.Mutex
	m  map[digest.Digest]ocispec.Descriptor
}

// add records desc when it is a manifest.
func (s *manifestSet) add(_ context.Context, desc ocispec.Descriptor) error {
	if s == nil || !isManifest(desc.MediaType) {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[digest.Digest]ocispec.Descriptor{}
	}
	s.m[desc.Digest] = ocispec.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size}
	return nil
}

// sorted returns the manifests by digest.
func (s *manifestSet) sorted() []ocispec.Descriptor {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ocispec.Descriptor, 0, len(s.m))
	for _, d := range s.m {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Digest < out[j].Digest })
	return out
}

// Attached returns what src holds attached to every manifest of the graph
// under root (root and the manifests below it, read from src): cosign's
// signature, attestation and SBOM tags and OCI referrers, as lock entries
// with no rule, found as a mirror finds them (one tag listing, then a
// referrers request per manifest). It is what a mirror copies for a lock
// that does not record signatures, so a lock that records Attached records
// what mirroring carries.
func Attached(ctx context.Context, src *remote.Repository, root ocispec.Descriptor, concurrency int) ([]lock.Signature, error) {
	manifests := &manifestSet{}
	seen := map[digest.Digest]bool{}
	next := []ocispec.Descriptor{root}
	for len(next) > 0 {
		d := next[0]
		next = next[1:]
		if seen[d.Digest] || !isManifest(d.MediaType) {
			continue
		}
		seen[d.Digest] = true
		if err := manifests.add(ctx, d); err != nil {
			return nil, err
		}
		succ, err := content.Successors(ctx, src, d)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", d.Digest, err)
		}
		for _, s := range succ {
			// A manifest's subject is not part of its graph.
			if !seen[s.Digest] && s.Digest != root.Digest {
				next = append(next, s)
			}
		}
	}
	cp := copier{src: src, srcRef: repoTag, conc: concurrency}
	p := &lock.Package{}
	found, err := cp.attached(ctx, p, manifests.sorted(), func() (map[string]bool, bool) { return cp.originTags(ctx, p) }, nil)
	if err != nil {
		return nil, err
	}
	out := make([]lock.Signature, 0, len(found))
	for _, a := range found {
		out = append(out, lock.Signature{
			Subject: a.subject.String(), Kind: a.kind, Digest: a.desc.Digest.String(),
			MediaType: a.desc.MediaType, Size: a.desc.Size, ArtifactType: a.desc.ArtifactType,
		})
	}
	return out, nil
}
