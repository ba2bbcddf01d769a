// Package verify checks a lock against a mirror: every manifest and every
// child descriptor is present with the locked digest and size, and with
// Deep every blob is downloaded and re-hashed. It lists every problem, not
// only the first.
package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/manifest"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/trust"
)

// Repositories opens registry repositories; *client.Client implements it.
type Repositories interface {
	Repository(repo string) (*remote.Repository, error)
}

// Options configures a verification.
type Options struct {
	// Registry opens mirror repositories.
	Registry Repositories
	// Mirror, when set, reads from this mirror instead of the one recorded
	// in the lock.
	Mirror *relocate.Mapping
	// Deep downloads and re-hashes every blob: each distinct blob once
	// per run, however many repositories hold it, every repository still
	// asked (HEAD) for each blob its packages need.
	Deep bool
	// Concurrency bounds packages checked at once (default 4).
	Concurrency int
	// Inputs is the digest of the current inputs (ferry.yaml); when set and
	// different from the lock's, the lock is reported stale.
	Inputs string
	// InputsFile names the inputs for the stale message.
	InputsFile string
	// Key, when set, requires every package's cosign signature in the
	// mirror (the manifest tagged sha256-HEX.sig beside it) to name the
	// locked digest and verify with Key.
	Key *signature.PublicKey
	// LockKey, when set, requires LockFile's cosign blob signature,
	// LockFile+".sig", to verify with LockKey over the file's exact bytes,
	// and those bytes to be the lock being verified.
	LockKey  *signature.PublicKey
	LockFile string
	// Trust is the signature policy: every signature, attestation and SBOM
	// a package records must be in the mirror with its recorded digest,
	// and a package the policy covers must carry a signature that verifies
	// there (see trust.CheckMirror). Recorded artifacts are checked even
	// when it is nil.
	Trust *trust.Policy
	// Formats are the package formats. With Deep, each package's root
	// manifest is read again by the format that claims it, as resolution
	// read it, and the lock must say the same: the package's kind, and
	// every image it carries in images[] (see checkContents).
	Formats []format.Format
	// Reporter, when set, is told of each package checked and, with
	// Deep, of each blob's bytes as they are re-hashed, for live
	// progress. Nil reports nothing.
	Reporter progress.Reporter
}

// Problem kinds.
const (
	ProblemStale       = "stale"
	ProblemNotMirrored = "not-mirrored"
	ProblemMissing     = "missing"
	ProblemDigest      = "digest"
	ProblemSize        = "size"
	ProblemTag         = "tag"
	ProblemUnreadable  = "unreadable"
	// ProblemResolve is a difference found by resolving the inputs again.
	ProblemResolve = "resolve"
	// ProblemSignature is a cosign signature that is missing or does not
	// verify: a package's in the mirror, or the lock's own.
	ProblemSignature = "signature"
	// ProblemMediaType is a manifest whose content is of another media
	// type than the lock records.
	ProblemMediaType = "media-type"
	// ProblemImage is an image the lock records that is not in the graph
	// under its package's root manifest, or one of the package's images
	// the lock does not record.
	ProblemImage = "image"
	// ProblemKind is a package whose manifest is of another kind than the
	// lock records.
	ProblemKind = "kind"
	// ProblemUntrusted is a package no trust rule matches under
	// trust.default: require.
	ProblemUntrusted = "untrusted"
)

// Problem is one disagreement between the lock and the mirror.
type Problem struct {
	// Package is the locked package's source.
	Package string `json:"package"`
	// Ref is the mirror object concerned.
	Ref string `json:"ref,omitempty"`
	// Kind is one of the Problem* constants.
	Kind string `json:"problem"`
	// Detail says what differs, in words.
	Detail string `json:"detail"`
}

// MarshalJSON writes the problem with `source`, the name every other
// command's JSON gives a package, beside `package`, kept for one release
// for the scripts that read it.
func (p Problem) MarshalJSON() ([]byte, error) {
	type plain Problem
	return json.Marshal(struct {
		plain
		Source string `json:"source"`
	}{plain(p), p.Package})
}

func (p Problem) String() string {
	if p.Ref != "" {
		return fmt.Sprintf("%s: %s: %s: %s", p.Package, p.Kind, p.Ref, p.Detail)
	}
	return fmt.Sprintf("%s: %s: %s", p.Package, p.Kind, p.Detail)
}

// Report is the outcome of a verification.
type Report struct {
	// Packages counts the packages checked.
	Packages int `json:"packages"`
	// Manifests and Blobs count the objects checked.
	Manifests int `json:"manifests"`
	Blobs     int `json:"blobs"`
	// Signatures counts the cosign signatures verified.
	Signatures int `json:"signatures,omitempty"`
	// Deep tells whether blobs were re-hashed.
	Deep bool `json:"deep"`
	// UniqueBlobs counts, with Deep, the distinct blobs (digest and size)
	// of every repository checked: each is downloaded and re-hashed once
	// in a run, however many repositories hold it.
	UniqueBlobs int `json:"uniqueBlobs,omitempty"`
	// HashedBlobs and HashedBytes count, with Deep, the blob downloads
	// re-hashed and the bytes read: one per distinct blob, plus a re-read
	// in each other repository of a blob that did not hash to its digest.
	HashedBlobs int       `json:"hashedBlobs,omitempty"`
	HashedBytes int64     `json:"hashedBytes,omitempty"`
	Problems    []Problem `json:"problems"`
	// Untrusted are the packages no rule of Options.Trust matches, under
	// trust.default warn or require (where each is also a problem).
	Untrusted []trust.Unmatched `json:"untrusted,omitempty"`
}

// OK reports whether no problem was found.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Verify checks l against the mirror. Problems go into the report; the
// error is for failures that stop the check itself, such as an unreachable
// registry.
func Verify(ctx context.Context, l *lock.Lock, opts Options) (*Report, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	rep := &Report{Deep: opts.Deep, Problems: []Problem{}}
	var mu sync.Mutex
	add := func(p Problem) {
		mu.Lock()
		rep.Problems = append(rep.Problems, p)
		mu.Unlock()
	}
	if opts.Inputs != "" && opts.Inputs != l.Inputs {
		name := opts.InputsFile
		if name == "" {
			name = "the inputs"
		}
		add(Problem{Package: "(lock)", Kind: ProblemStale, Detail: fmt.Sprintf("%s changed since the lock was written, or the format settings given apart from it (Crossplane default registry, Porter version strategy, bundle mixins) differ (lock inputs %s, now %s): run ferry lock", name, l.Inputs, opts.Inputs)})
	}
	if opts.LockKey != nil {
		p, err := LockSignature(l, opts.LockFile, opts.LockKey)
		if err != nil {
			return nil, err
		}
		if p != nil {
			add(*p)
		} else {
			rep.Signatures++
		}
	}
	// trust.default (trust.Policy.CheckDefault): require makes each
	// package no rule matches a problem; warn lists them.
	if un, err := opts.Trust.CheckDefault(l.Resolved()); len(un) > 0 {
		rep.Untrusted = un
		if err != nil {
			for _, u := range un {
				add(Problem{Package: u.Source, Ref: u.String(), Kind: ProblemUntrusted, Detail: "no trust rule matches the package (trust.default: require)"})
			}
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	prog := progress.Or(opts.Reporter)
	prog.AddPackages(len(l.Resolved()))
	shared := &hashes{m: map[blobKey]*hashEntry{}}
	for _, p := range l.Resolved() {
		g.Go(func() error {
			c := &checker{opts: opts, pkg: p.Source, add: add, hashes: shared}
			prog.PackageStarted(p.Source)
			err := c.checkPackage(gctx, p)
			prog.PackageDone(p.Source, err)
			if err != nil {
				return err
			}
			mu.Lock()
			rep.Packages++
			rep.Manifests += c.manifests
			rep.Blobs += c.blobs
			rep.Signatures += c.signatures
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if opts.Deep {
		rep.UniqueBlobs, rep.HashedBlobs, rep.HashedBytes = shared.counts()
	}
	sort.SliceStable(rep.Problems, func(i, j int) bool {
		if rep.Problems[i].Package != rep.Problems[j].Package {
			return rep.Problems[i].Package < rep.Problems[j].Package
		}
		return rep.Problems[i].Ref < rep.Problems[j].Ref
	})
	return rep, nil
}

// MirrorRepo returns where p lives in the mirror: the override mapping if
// given, else the lock's record.
func MirrorRepo(p *lock.Package, override *relocate.Mapping) string {
	if override != nil {
		return override.Repo(p.Source)
	}
	return p.Mirror
}

type checker struct {
	opts       Options
	pkg        string
	add        func(Problem)
	manifests  int
	blobs      int
	signatures int
	// graph holds the digest of every descriptor found under the root
	// manifest, the root's included; incomplete is set when a manifest
	// could not be read, so the graph is not whole.
	graph      map[digest.Digest]bool
	incomplete bool
	// rootRaw is the package's root manifest as read from the mirror.
	rootRaw []byte
	// hashes is the run's record of blobs re-hashed, shared by every
	// package's checker; pending are this package's blobs whose hash
	// another package had in flight when they were reached.
	hashes  *hashes
	pending []pendingBlob
	// checked are the blobs of this package checked already.
	checked map[blobKey]bool
}

func (c *checker) problem(ref, kind, format string, args ...any) {
	c.add(Problem{Package: c.pkg, Ref: ref, Kind: kind, Detail: fmt.Sprintf(format, args...)})
}

func (c *checker) checkPackage(ctx context.Context, p *lock.Package) error {
	repoName := MirrorRepo(p, c.opts.Mirror)
	if repoName == "" {
		c.problem("", ProblemNotMirrored, "the lock records no mirror for this package: run ferry mirror, or name the mirror to read")
		return nil
	}
	repo, err := c.opts.Registry.Repository(repoName)
	if err != nil {
		return err
	}
	root := p.Descriptor()
	c.graph = map[digest.Digest]bool{root.Digest: true}
	c.rootRaw = nil
	if err := c.checkManifest(ctx, repo, repoName, root); err != nil {
		return err
	}
	if err := c.waitPending(ctx); err != nil {
		return err
	}
	if !c.incomplete && c.opts.Deep {
		if err := c.checkContents(ctx, repo, repoName, p, root); err != nil {
			return err
		}
	}
	if !c.incomplete {
		// Images are children of the manifest graph: an image digest the
		// graph does not hold was edited into the lock.
		var ie *lock.ImageError
		if err := p.CheckImages(func(d digest.Digest) bool { return c.graph[d] }); errors.As(err, &ie) {
			for _, im := range ie.Images {
				c.problem(repoName+"@"+root.Digest.String(), ProblemImage, "the lock records image %s, which is not in the package's manifest graph", im)
			}
		}
	}
	// The version and every other tag of the digest (lock.Package.Tags)
	// must point at it: a pull by any of them reads the mirror.
	for _, t := range p.AllTags() {
		ref := repoName + ":" + t
		desc, err := repo.Resolve(ctx, t)
		switch {
		case errors.Is(err, errdef.ErrNotFound):
			c.problem(ref, ProblemTag, "tag %s is missing from the mirror", t)
		case err != nil:
			return fmt.Errorf("resolving %s: %w", ref, err)
		case desc.Digest != root.Digest:
			c.problem(ref, ProblemTag, "tag %s points at %s, the lock has %s", t, desc.Digest, root.Digest)
		}
	}
	findings, verified, err := trust.CheckMirror(ctx, repo, repoName, p, c.opts.Trust)
	if err != nil {
		// A manifest whose bytes do not hash to its digest is the
		// mirror disagreeing with the lock, not a failure of the check:
		// the walk above reported it (checkManifest) unless the graph
		// read whole, then it is reported here.
		if !isMismatch(err) || client.IsTransient(err) {
			return err
		}
		if !c.incomplete {
			c.problem(repoName+"@"+root.Digest.String(), ProblemDigest, "reading the signatures of the package's graph: %v", err)
		}
		return nil
	}
	c.signatures += verified
	for _, f := range findings {
		c.problem(f.Ref, ProblemSignature, "%s", f.Detail)
	}
	if c.opts.Key != nil {
		return c.checkSignature(ctx, repo, repoName, p, root.Digest)
	}
	return nil
}

// checkSignature requires a signature of d in the mirror beside it that
// verifies with the key, checked through Sigstore's libraries
// (signature.Verifier: cosign's classic sha256-HEX.sig tag and Sigstore
// bundles attached as OCI referrers). When the lock records p's
// signatures, one that verifies must be among them: a signature the lock
// does not name proves nothing about what was locked.
func (c *checker) checkSignature(ctx context.Context, repo *remote.Repository, repoName string, p *lock.Package, d digest.Digest) error {
	ref := repoName + ":" + signature.Tag(d)
	v := &signature.Verifier{Keys: []*signature.PublicKey{c.opts.Key}}
	res, err := v.VerifyImage(ctx, repo, d)
	switch {
	case errors.Is(err, signature.ErrNoSignature):
		c.problem(ref, ProblemSignature, "no cosign signature of %s in the mirror: sign the source and run ferry mirror again (it copies signatures)", d)
		return nil
	case signature.IsMismatch(err):
		c.problem(ref, ProblemSignature, "%v", err)
		return nil
	case err != nil:
		return fmt.Errorf("checking the signature %s: %w", ref, err)
	}
	if p.Signatures != nil {
		recorded := map[string]bool{}
		for _, s := range p.Signatures {
			if s.Subject == d.String() {
				recorded[s.Digest] = true
			}
		}
		var unnamed []string
		for _, s := range res.Signatures {
			if recorded[s.Manifest.Digest.String()] {
				c.signatures++
				return nil
			}
			unnamed = append(unnamed, s.Manifest.Digest.String())
		}
		c.problem(ref, ProblemSignature, "the signatures of %s that verify with the key (%s) are not the ones the lock records", d, strings.Join(unnamed, ", "))
		return nil
	}
	c.signatures++
	return nil
}

// LockSignature checks the cosign blob signature of the lock file path
// (path+".sig") with key, and that the signed bytes are the lock l. A
// missing or bad signature is a Problem; an unreadable file is an error.
func LockSignature(l *lock.Lock, path string, key *signature.PublicKey) (*Problem, error) {
	problem := func(format string, args ...any) *Problem {
		return &Problem{Package: "(lock)", Ref: path + signature.SigSuffix, Kind: ProblemSignature, Detail: fmt.Sprintf(format, args...)}
	}
	data, err := signature.VerifyFile(key, path)
	if signature.IsMismatch(err) {
		return problem("%v", err), nil
	}
	if err != nil {
		return nil, fmt.Errorf("checking the signature of %s: %w", path, err)
	}
	// The lock in hand must be what was signed, not an earlier read of a
	// file that changed since.
	signed, err := lock.Parse(data)
	if err != nil {
		return problem("the signed %s is not a lock: %v", path, err), nil
	}
	a, errA := signed.Marshal()
	b, errB := l.Marshal()
	if err := errors.Join(errA, errB); err != nil {
		return nil, err
	}
	if !bytes.Equal(a, b) {
		return problem("%s changed while it was being verified: run ferry again", path), nil
	}
	return nil, nil
}

// checkManifest fetches a manifest by digest, checks it, and walks its
// children.
func (c *checker) checkManifest(ctx context.Context, repo *remote.Repository, repoName string, want ocispec.Descriptor) error {
	ref := repoName + "@" + want.Digest.String()
	c.manifests++
	desc, rc, err := repo.Manifests().FetchReference(ctx, want.Digest.String())
	if errors.Is(err, errdef.ErrNotFound) {
		c.incomplete = true
		c.problem(ref, ProblemMissing, "manifest is not in the mirror")
		return nil
	}
	if err != nil {
		if isMismatch(err) && !client.IsTransient(err) {
			c.incomplete = true
			c.problem(ref, ProblemDigest, "manifest content does not hash to %s: %v", want.Digest, err)
			return nil
		}
		return fmt.Errorf("fetching %s: %w", ref, err)
	}
	defer rc.Close()
	raw, err := io.ReadAll(io.LimitReader(rc, maxManifestBytes+1))
	if err == nil && len(raw) > maxManifestBytes {
		err = fmt.Errorf("manifest is larger than %d bytes", maxManifestBytes)
	}
	if err != nil && client.IsTransient(err) {
		// The network failed, retries included: a failure (exit 1), not a
		// disagreement with the lock.
		return fmt.Errorf("reading %s: %w", ref, err)
	}
	if err != nil {
		c.incomplete = true
		c.problem(ref, ProblemUnreadable, "%v", err)
		return nil
	}
	// The bytes decide, whatever the registry's headers say: their digest
	// against the lock's, their media type from their content.
	if got := want.Digest.Algorithm().FromBytes(raw); got != want.Digest {
		c.incomplete = true
		c.problem(ref, ProblemDigest, "manifest hashes to %s, the lock has %s", got, want.Digest)
		return nil
	}
	if want.Size > 0 && (int64(len(raw)) != want.Size || desc.Size != want.Size) {
		c.problem(ref, ProblemSize, "manifest is %d bytes, the lock has %d", len(raw), want.Size)
	}
	mt, err := manifest.MediaType(raw)
	if err != nil {
		c.incomplete = true
		c.problem(ref, ProblemUnreadable, "%v", err)
		return nil
	}
	if c.rootRaw == nil {
		c.rootRaw = raw // the first manifest checked is the root
	}
	if want.MediaType != "" && mt != want.MediaType {
		c.problem(ref, ProblemMediaType, "manifest content is %s, the lock has %s", mt, want.MediaType)
	}
	children, err := manifest.Children(raw)
	if err != nil {
		c.incomplete = true
		c.problem(ref, ProblemUnreadable, "%v", err)
		return nil
	}
	var blobs []ocispec.Descriptor
	for _, child := range children {
		c.graph[child.Digest] = true
		if manifest.IsIndex(mt) {
			if err := c.checkManifest(ctx, repo, repoName, child); err != nil {
				return err
			}
		} else {
			blobs = append(blobs, child)
		}
	}
	for _, b := range blobs {
		if err := c.checkBlob(ctx, repo, repoName, b); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) checkBlob(ctx context.Context, repo *remote.Repository, repoName string, want ocispec.Descriptor) error {
	ref := repoName + "@" + want.Digest.String()
	c.blobs++
	// A blob the package reaches again (a layer two of its images share)
	// is in the same repository: checked, and any problem listed, once.
	key := blobKey{want.Digest, want.Size}
	if c.checked[key] {
		return nil
	}
	if c.checked == nil {
		c.checked = map[blobKey]bool{}
	}
	c.checked[key] = true
	desc, err := repo.Blobs().Resolve(ctx, want.Digest.String())
	if errors.Is(err, errdef.ErrNotFound) {
		c.problem(ref, ProblemMissing, "blob is not in the mirror")
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking %s: %w", ref, err)
	}
	if desc.Size != want.Size {
		c.problem(ref, ProblemSize, "blob is %d bytes, the manifest says %d", desc.Size, want.Size)
		return nil
	}
	if !c.opts.Deep {
		return nil
	}
	// The HEAD above proved that this repository links the blob, with
	// its size: a registry answers it for /v2/REPO/blobs/DIGEST only when
	// REPO holds the digest (distribution's linkedBlobStatter checks the
	// repository's _layers link), whatever other repositories hold. Its
	// bytes are the registry's one copy of that digest (content-addressed
	// storage), so a download that hashed to the digest in another
	// repository in this run proves them here too: each blob is read once
	// per run, not once per repository (issue 14).
	e, owner := c.hashes.claim(want)
	switch {
	case owner:
		ok, err := c.hash(ctx, repo, repoName, want)
		e.finish(ok)
		return err
	case e == nil:
		// An earlier read did not hash to the digest, or failed: this
		// repository's own bytes decide, read here.
		_, err := c.hash(ctx, repo, repoName, want)
		return err
	}
	select {
	case <-e.done:
		return c.settle(ctx, repo, repoName, want, e)
	default:
		// Another package is reading it: check this package's other blobs
		// first, and wait for it at the end (waitPending).
		c.pending = append(c.pending, pendingBlob{repo: repo, repoName: repoName, want: want, entry: e})
		return nil
	}
}

// pendingBlob is a blob of the package whose re-hash another package had
// in flight.
type pendingBlob struct {
	repo     *remote.Repository
	repoName string
	want     ocispec.Descriptor
	entry    *hashEntry
}

// waitPending waits for the re-hashes other packages had in flight, and
// reads a blob here when that read did not hash to its digest.
func (c *checker) waitPending(ctx context.Context) error {
	for _, b := range c.pending {
		select {
		case <-b.entry.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := c.settle(ctx, b.repo, b.repoName, b.want, b.entry); err != nil {
			return err
		}
	}
	c.pending = nil
	return nil
}

// settle ends the check of a blob whose shared re-hash e is done: proven
// when it hashed to its digest, else read again from this repository.
func (c *checker) settle(ctx context.Context, repo *remote.Repository, repoName string, want ocispec.Descriptor, e *hashEntry) error {
	ref := repoName + "@" + want.Digest.String()
	if e.ok {
		progress.Or(c.opts.Reporter).BlobDone(ref, progress.Skipped)
		return nil
	}
	_, err := c.hash(ctx, repo, repoName, want)
	return err
}

// hash downloads a blob from repo and re-hashes it, reporting a problem
// when its bytes do not hash to its digest; ok tells that they did.
func (c *checker) hash(ctx context.Context, repo *remote.Repository, repoName string, want ocispec.Descriptor) (ok bool, err error) {
	ref := repoName + "@" + want.Digest.String()
	prog := progress.Or(c.opts.Reporter)
	prog.BlobStarted(ref, path.Base(repoName)+" "+want.Digest.Encoded()[:min(12, len(want.Digest.Encoded()))], want.Size)
	defer prog.BlobDone(ref, progress.Copied)
	rc, err := repo.Blobs().Fetch(ctx, want)
	if err != nil {
		return false, fmt.Errorf("downloading %s: %w", ref, err)
	}
	defer rc.Close()
	h := want.Digest.Algorithm().Hash()
	var w io.Writer = h
	var kept *bytes.Buffer
	if want.Size <= maxSmallBlob {
		// Kept for checkContents, which reads config blobs again.
		kept = &bytes.Buffer{}
		w = io.MultiWriter(h, kept)
	}
	n, err := io.Copy(w, progress.NewReader(rc, prog, ref))
	c.hashes.read(n)
	if err != nil && (!isMismatch(err) || client.IsTransient(err)) {
		// A download cut short that could not be resumed is a failure of
		// the network (exit 1), not of the mirror's content.
		return false, fmt.Errorf("downloading %s: %w", ref, err)
	}
	if got := digest.NewDigest(want.Digest.Algorithm(), h); got != want.Digest {
		c.problem(ref, ProblemDigest, "blob hashes to %s (%d bytes), the lock has %s", got, n, want.Digest)
		return false, nil
	}
	if kept != nil {
		c.hashes.keep(want.Digest, kept.Bytes())
	}
	return true, nil
}

// blobKey names a blob by digest and size: a manifest that gives a
// digest another size is checked on its own.
type blobKey struct {
	digest digest.Digest
	size   int64
}

// hashes records, for one run, the blobs re-hashed and the reads in
// flight, so that packages in many repositories sharing a blob read it
// once: the first to reach it reads it, the others wait for that read.
type hashes struct {
	mu    sync.Mutex
	m     map[blobKey]*hashEntry
	reads int
	bytes int64
	// kept holds the bytes of small blobs that hashed to their digest
	// (maxSmallBlob), for checkContents.
	kept map[digest.Digest][]byte
}

// keep records the bytes of a small blob proven to hash to d.
func (h *hashes) keep(d digest.Digest, b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.kept == nil {
		h.kept = map[digest.Digest][]byte{}
	}
	h.kept[d] = b
}

// small returns the kept bytes of d, or nil.
func (h *hashes) small(d digest.Digest) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.kept[d]
}

// hashEntry is one blob's shared re-hash: done is closed when it ends,
// and ok then tells whether the bytes hashed to the digest.
type hashEntry struct {
	done chan struct{}
	ok   bool
}

// claim returns desc's entry, and owner true when the caller is the
// first to reach it and must read it and call finish. It returns a nil
// entry when an earlier read ended without proving the blob, so that the
// caller reads it itself.
func (h *hashes) claim(desc ocispec.Descriptor) (e *hashEntry, owner bool) {
	k := blobKey{desc.Digest, desc.Size}
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.m[k]; e != nil {
		select {
		case <-e.done:
			if !e.ok {
				return nil, false
			}
		default:
		}
		return e, false
	}
	e = &hashEntry{done: make(chan struct{})}
	h.m[k] = e
	return e, true
}

// finish ends e's read, proven when ok.
func (e *hashEntry) finish(ok bool) {
	e.ok = ok
	close(e.done)
}

// read counts one blob download of n bytes.
func (h *hashes) read(n int64) {
	h.mu.Lock()
	h.reads++
	h.bytes += n
	h.mu.Unlock()
}

// counts returns the distinct blobs, the downloads and their bytes.
func (h *hashes) counts() (unique, reads int, bytes int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.m), h.reads, h.bytes
}

// maxManifestBytes bounds a manifest read from the mirror (oras-go's
// default MaxMetadataBytes).
const maxManifestBytes = 4 << 20

// isMismatch recognises oras-go's content verification failures.
func isMismatch(err error) bool {
	return errors.Is(err, errdef.ErrInvalidDigest) || errors.Is(err, content.ErrMismatchedDigest) || errors.Is(err, errdef.ErrSizeExceedsLimit) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}
