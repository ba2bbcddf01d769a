package trust

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/signature"
)

// Kinds of lock.Signature.
const (
	KindSig      = "sig"
	KindAtt      = "att"
	KindSBOM     = "sbom"
	KindReferrer = "referrer"
)

// cosignKinds are cosign's tag suffixes, in the order they are recorded
// (sigstore/cosign pkg/oci/remote: SignatureTagSuffix, AttestationTagSuffix,
// SBOMTagSuffix).
var cosignKinds = []string{KindSig, KindAtt, KindSBOM}

// CosignTag returns the tag cosign stores kind ("sig", "att", "sbom") of
// manifest d under: "sha256-HEX.KIND".
func CosignTag(d digest.Digest, kind string) string {
	return d.Algorithm().String() + "-" + d.Encoded() + "." + kind
}

// Repositories opens registry repositories; *client.Client implements it.
type Repositories interface {
	Repository(repo string) (*remote.Repository, error)
}

// Key is the key of a package in Check's records: "SOURCE@DIGEST".
func Key(source, d string) string { return source + "@" + d }

// Failure is one package that fails the policy.
type Failure struct {
	Source string
	Digest string
	// Rule is the name of the rule that applied (see Rule.Name).
	Rule string
	Err  error
}

func (f *Failure) Error() string {
	return fmt.Sprintf("%s@%s: trust rule %q: %v", f.Source, f.Digest, f.Rule, f.Err)
}

// Unwrap returns why the package fails.
func (f *Failure) Unwrap() error { return f.Err }

// ErrKeylessUnavailable is no longer returned: keyless rules are checked
// through signature.Verifier. It is kept for callers that compared with it.
// verification is wired in.
var ErrKeylessUnavailable = errors.New("keyless verification is not available yet: use keys")

// Check looks up, at each package's source, the cosign signatures,
// attestations and SBOMs of its root manifest (sha256-HEX.sig|.att|.sbom)
// and its OCI referrers, and checks the signatures against the rule that
// applies to the package. It returns, by Key, what the lock should record:
// every artifact found, a signature with the name of the rule it verified
// with, the rest with an empty rule (carried). A package that already
// records signatures (a lock being mirrored) must find exactly those at
// its source. Every failing package is listed (errors.Join of *Failure),
// and the error exits with code 3; a registry failure is returned as it
// is.
func (p *Policy) Check(ctx context.Context, pkgs []*lock.Package, repos Repositories, concurrency int) (map[string][]lock.Signature, error) {
	if concurrency <= 0 {
		concurrency = 4
	}
	records := map[string][]lock.Signature{}
	var failures []error
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for _, pkg := range pkgs {
		g.Go(func() error {
			recs, fail, err := p.checkPackage(gctx, pkg, repos)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			records[Key(pkg.Source, pkg.Digest)] = recs
			if fail != nil {
				failures = append(failures, fail)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if len(failures) > 0 {
		sort.Slice(failures, func(i, j int) bool { return failures[i].Error() < failures[j].Error() })
		return records, errkind.Mark(errkind.Mismatch, fmt.Errorf("%d of %d packages fail the trust policy:\n%w", len(failures), len(pkgs), errors.Join(failures...)))
	}
	return records, nil
}

// Unrecorded is a signature a trust rule verified at a package's source
// that the package's lock entry, which records its signatures, does not
// name: it was attached after the lock was written (a lock written before
// signing records `signatures: []`). Apply adds it to the entry, so that
// a mirror copies it and verify finds it there.
type Unrecorded struct {
	// Source and Digest name the package.
	Source, Digest string
	// Signature is what was added, with the rule that verified it.
	Signature lock.Signature
}

func (u Unrecorded) String() string {
	return fmt.Sprintf("%s@%s: %s %s (trust rule %q)", u.Source, u.Digest, label(u.Signature), u.Signature.Digest, u.Signature.Rule)
}

// Apply runs Check over l's resolved packages and records what it found
// in each package that records nothing yet. A package that records its
// signatures keeps them, and gains the signatures its rule verified at the
// source that it does not name, which Apply returns (Unrecorded): the
// signatures a required rule relies on then travel with the package, as
// verify and install will look for them in the mirror. Attestations,
// SBOMs and unverified signatures the record does not name stay behind (a
// mirror reports them as ignored). On a failure nothing is recorded. With
// needed set, only the packages a rule covers or that record signatures
// are checked, so a lock being mirrored with no policy asks its sources
// nothing more.
func (p *Policy) Apply(ctx context.Context, l *lock.Lock, repos Repositories, concurrency int, needed bool) ([]Unrecorded, error) {
	var pkgs []*lock.Package
	for _, pkg := range l.Resolved() {
		if !needed || len(pkg.Signatures) > 0 || p.Rule(pkg.Source) != nil {
			pkgs = append(pkgs, pkg)
		}
	}
	if len(pkgs) == 0 {
		return nil, nil
	}
	records, err := p.Check(ctx, pkgs, repos, concurrency)
	if err != nil {
		return nil, err
	}
	var added []Unrecorded
	for _, pkg := range pkgs {
		found := records[Key(pkg.Source, pkg.Digest)]
		if pkg.Signatures == nil {
			// Non-nil even when empty: the lock then says "recorded,
			// none", and an import pushes no artifact it does not name.
			pkg.Signatures = append(lock.Signatures{}, found...)
			continue
		}
		named := map[string]bool{}
		for _, s := range pkg.Signatures {
			named[s.Subject+" "+s.Kind+" "+s.Digest] = true
		}
		for _, s := range found {
			if s.Rule == "" || named[s.Subject+" "+s.Kind+" "+s.Digest] {
				continue
			}
			pkg.Signatures = append(pkg.Signatures, s)
			added = append(added, Unrecorded{Source: pkg.Source, Digest: pkg.Digest, Signature: s})
		}
	}
	return added, nil
}

// checkPackage returns pkg's records and, if it fails the policy, a
// *Failure.
func (p *Policy) checkPackage(ctx context.Context, pkg *lock.Package, repos Repositories) ([]lock.Signature, error, error) {
	var found []lock.Signature
	var repo *remote.Repository
	root := pkg.Descriptor()
	// A package outside any registry (a chart in a classic Helm
	// repository) can have no cosign signature or referrer attached.
	if !ociref.IsURLSource(pkg.Source) {
		var err error
		if repo, err = repos.Repository(pkg.Source); err != nil {
			return nil, nil, err
		}
		if found, err = Find(ctx, repo, root); err != nil {
			return nil, nil, fmt.Errorf("%s: looking up signatures: %w", pkg.Source, err)
		}
	}
	rule := p.Rule(pkg.Source)
	fail := func(format string, args ...any) error {
		name := ""
		if rule != nil {
			name = rule.Name
		}
		return &Failure{Source: pkg.Source, Digest: pkg.Digest, Rule: name, Err: fmt.Errorf(format, args...)}
	}
	if len(pkg.Signatures) > 0 {
		if diff := Diff(pkg.Signatures, found); len(diff) > 0 {
			return nil, fail("the source disagrees with the signatures the lock records: %s", strings.Join(diff, "; ")), nil
		}
	}
	if rule == nil {
		return found, nil, nil
	}
	if repo == nil {
		var whys []string
		if rule.Required {
			whys = append(whys, fmt.Sprintf("no signature of %s (required)", pkg.Digest))
		}
		if len(rule.Attestations) > 0 {
			whys = append(whys, fmt.Sprintf("attestation %s required: %v", rule.Attestations[0].PredicateType, errNoRegistry))
		}
		if rule.Keyring != "" {
			why, err := rule.checkSourceProvenance(ctx, repos, pkg)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", pkg.Source, err)
			}
			if why != "" {
				whys = append(whys, why)
			}
		}
		if len(whys) > 0 {
			return found, fail("%s", strings.Join(whys, "; ")), nil
		}
		return found, nil, nil
	}
	g := graphVerdict{verified: map[string]bool{}, none: true}
	if rule.signs() {
		var err error
		if g, err = rule.verifyGraph(ctx, repo, root.Digest, found, true); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", pkg.Source, err)
		}
	}
	var whys []string
	switch {
	case g.none && rule.Required:
		whys = append(whys, fmt.Sprintf("no signature of %s (required)", pkg.Digest))
	case !g.none && g.why != "":
		whys = append(whys, g.why)
	}
	for _, n := range g.nested {
		whys = append(whys, fmt.Sprintf("manifest %s@%s of the package's graph: %s", pkg.Source, n.subject, n.why))
	}
	if rule.Keyring != "" {
		why, err := rule.checkProvenance(ctx, repo, pkg)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", pkg.Source, err)
		}
		if why != "" {
			whys = append(whys, why)
		}
	}
	if len(rule.Attestations) > 0 {
		aw, av, err := rule.checkAttestations(ctx, repo, root.Digest, found, true)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", pkg.Source, err)
		}
		whys = append(whys, aw...)
		for d := range av {
			g.verified[d] = true
		}
	}
	for i := range found {
		if g.verified[found[i].Digest] {
			found[i].Rule = rule.Name
		}
	}
	if len(whys) > 0 {
		return found, fail("%s", strings.Join(whys, "; ")), nil
	}
	return found, nil, nil
}

// unverified is a manifest below a package's root (a Porter bundle's
// invocation or component image, an index's platform manifest) that
// carries signatures of which none verifies under the package's rule.
type unverified struct {
	// subject is the nested manifest's digest.
	subject digest.Digest
	// why says why none of its signatures verifies.
	why string
}

// graphVerdict is what a rule makes of the signatures of a package's
// graph (Rule.verifyGraph).
type graphVerdict struct {
	// verified holds the digests of the signature manifests that
	// verified, the root's and the nested manifests'.
	verified map[string]bool
	// none says the root has no signature at all; why, when it has some,
	// says why none verifies (empty when one does).
	none bool
	why  string
	// nested are the nested manifests that carry signatures of which
	// none verifies.
	nested []unverified
	// manifests counts the manifests, root and nested, with a signature
	// that verified.
	manifests int
}

// verifyGraph checks, under the rule, the signatures of root and of every
// manifest of its graph that found (Find's records, when listed) shows
// with a signature: a classic sha256-HEX.sig tag, or a referrer (which may
// hold a Sigstore bundle).
//
// A signature is per manifest digest: `cosign verify IMAGE@DIGEST` checks
// the signatures of that manifest and no other (sigstore/cosign
// pkg/cosign/verify.go VerifyImageSignatures reads the signatures of the
// digest it is given; `cosign sign --recursive` is what signs an index's
// platform manifests one by one). A nested manifest is checked as cosign
// checks it when it is pulled by digest on its own, which is how its
// consumer pulls it (Porter runs a bundle's invocation image by digest; a
// runtime picks an index's platform manifest): a nested manifest that
// carries signatures must have one that verifies under the rule, and a
// signature by another key fails the rule, as cosign would fail it. A
// nested manifest without any signature passes, required rule or not:
// `required` asks for a signature of the package, which is its root (the
// digest ferry.lock pins and Kyverno's verifyImages would check for the
// image deployed), and publishers sign the root alone (cosign sign
// without --recursive).
func (r *Rule) verifyGraph(ctx context.Context, repo signature.Repository, root digest.Digest, found []lock.Signature, listed bool) (graphVerdict, error) {
	var g graphVerdict
	verified, why, none, err := r.verify(ctx, repo, root, found, listed)
	if err != nil {
		return g, err
	}
	g.verified, g.why, g.none = verified, why, none
	if len(verified) > 0 {
		g.manifests++
	}
	if g.verified == nil {
		g.verified = map[string]bool{}
	}
	if !listed {
		// The graph could not be read: only the root is checked, and
		// what reads the graph reports the manifest that is missing.
		return g, nil
	}
	for _, subject := range signedNested(found, root) {
		verified, why, none, err := r.verify(ctx, repo, subject, found, true)
		if err != nil {
			return g, fmt.Errorf("checking the signatures of %s: %w", subject, err)
		}
		switch {
		case none:
			// Only attestations, SBOMs or other referrers: no signature.
		case len(verified) == 0:
			g.nested = append(g.nested, unverified{subject: subject, why: why})
		default:
			g.manifests++
			for d := range verified {
				g.verified[d] = true
			}
		}
	}
	return g, nil
}

// signedNested returns the manifests of found other than root that carry
// a classic signature tag or a referrer, in digest order.
func signedNested(found []lock.Signature, root digest.Digest) []digest.Digest {
	seen := map[string]bool{}
	var out []digest.Digest
	for _, f := range found {
		if f.Subject == root.String() || seen[f.Subject] || (f.Kind != KindSig && f.Kind != KindReferrer) {
			continue
		}
		seen[f.Subject] = true
		out = append(out, digest.Digest(f.Subject))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// verify checks d's signatures in repo with the rule's keys and keyless
// identities through Sigstore's libraries (signature.Verifier), in every
// layout cosign writes: the classic sha256-HEX.sig tag, and Sigstore
// bundles attached as OCI referrers, listed by the referrers API or its
// tag-schema fallback whatever artifactType that lists them with. It is
// the one signature check of the source (lock, mirror) and of the mirror
// (verify, install). found is what Find discovered attached to d's
// graph in repo when listed is set: d's referrers are taken from it
// rather than listed again; otherwise the verifier lists them. It returns
// the digests of the signature manifests that verified, or why none did;
// none says there is no signature at all (not even one that fails); an
// error is a failure to look.
func (r *Rule) verify(ctx context.Context, repo signature.Repository, d digest.Digest, found []lock.Signature, listed bool) (verified map[string]bool, why string, none bool, err error) {
	v := &signature.Verifier{Keys: r.Keys}
	if r.root != nil {
		v.TrustedRoot = r.root
	}
	for _, id := range r.Keyless {
		v.Identities = append(v.Identities, signature.Identity{Issuer: id.Issuer, Subject: id.Subject, SubjectRegexp: id.SubjectRegexp})
	}
	var res *signature.Verified
	if listed {
		res, err = v.VerifyListed(ctx, repo, d, Referrers(found, d))
	} else {
		res, err = v.VerifyImage(ctx, repo, d)
	}
	if errors.Is(err, signature.ErrNoSignature) {
		return nil, err.Error(), true, nil
	}
	if signature.IsMismatch(err) {
		return nil, err.Error(), false, nil
	}
	if err != nil {
		return nil, "", false, err
	}
	ok := map[string]bool{}
	for _, s := range res.Signatures {
		ok[s.Manifest.Digest.String()] = true
	}
	return ok, "", false, nil
}

// Find returns the cosign artifacts (sha256-HEX.sig|.att|.sbom) and OCI
// referrers of every manifest of root's graph in repo (the index, config
// manifest, invocation and component images, platform manifests), with
// no rule: what relocate carries (relocate.Attached), so that what the lock
// records and what a mirror copies are found by one rule.
func Find(ctx context.Context, repo *remote.Repository, root ocispec.Descriptor) ([]lock.Signature, error) {
	return relocate.Attached(ctx, repo, root, findConcurrency)
}

// Referrers returns the referrers of subject among found (Find's
// records), as descriptors of their manifests.
func Referrers(found []lock.Signature, subject digest.Digest) []ocispec.Descriptor {
	var out []ocispec.Descriptor
	for _, f := range found {
		if f.Kind != KindReferrer || f.Subject != subject.String() {
			continue
		}
		out = append(out, ocispec.Descriptor{MediaType: f.MediaType, Digest: digest.Digest(f.Digest), Size: f.Size, ArtifactType: f.ArtifactType})
	}
	return out
}

// findConcurrency bounds the referrer lookups of one package's graph.
const findConcurrency = 4

// Diff lists how found differs from the recorded signatures: one
// recorded that is missing, or whose tag points at another digest.
// Artifacts found beyond the record are not a difference: the lock
// carries only what it names.
func Diff(recorded, found []lock.Signature) []string {
	var out []string
	for _, r := range recorded {
		match := ""
		for _, f := range found {
			if f.Subject != r.Subject || f.Kind != r.Kind {
				continue
			}
			if f.Digest == r.Digest {
				match = f.Digest
				break
			}
			if r.Kind != KindReferrer {
				match = f.Digest
			}
		}
		switch {
		case match == "":
			out = append(out, fmt.Sprintf("%s %s is missing", label(r), r.Digest))
		case match != r.Digest:
			out = append(out, fmt.Sprintf("%s is %s, the lock records %s", label(r), match, r.Digest))
		}
	}
	return out
}

func label(s lock.Signature) string {
	if s.Kind == KindReferrer {
		return "referrer of " + s.Subject
	}
	return CosignTag(digest.Digest(s.Subject), s.Kind)
}

// Finding is one disagreement CheckMirror reports.
type Finding struct {
	// Ref is the mirror object concerned.
	Ref string
	// Detail says what is wrong, in words.
	Detail string
}

// CheckMirror checks pkg's recorded signatures in its mirror repository
// repo (named repoName): each must be there with the recorded digest, and,
// when pol's rule for the package has keys or identities, the signature
// must verify there, as it is required to when the rule says so. It
// returns what disagrees and how many signatures verified; an error is a
// failure to look.
func CheckMirror(ctx context.Context, repo *remote.Repository, repoName string, pkg *lock.Package, pol *Policy) ([]Finding, int, error) {
	var out []Finding
	root := pkg.Descriptor()
	for _, s := range pkg.Signatures {
		ref := repoName + "@" + s.Digest
		if s.Kind != KindReferrer {
			ref = repoName + ":" + CosignTag(digest.Digest(s.Subject), s.Kind)
		}
		var desc ocispec.Descriptor
		var err error
		if s.Kind == KindReferrer {
			desc, err = repo.Resolve(ctx, s.Digest)
		} else {
			desc, err = repo.Resolve(ctx, CosignTag(digest.Digest(s.Subject), s.Kind))
		}
		switch {
		case errors.Is(err, errdef.ErrNotFound):
			out = append(out, Finding{Ref: ref, Detail: fmt.Sprintf("%s %s the lock records is missing from the mirror", label(s), s.Digest)})
		case err != nil:
			return nil, 0, fmt.Errorf("resolving %s: %w", ref, err)
		case desc.Digest.String() != s.Digest:
			out = append(out, Finding{Ref: ref, Detail: fmt.Sprintf("%s is %s in the mirror, the lock records %s", label(s), desc.Digest, s.Digest)})
		}
	}
	rule := pol.Rule(pkg.Source)
	// What is attached to the package's graph in the mirror, found as
	// at the source (Find): the one discovery of every stage.
	var found []lock.Signature
	listed := false
	if pkg.Signatures != nil || rule != nil {
		f, err := Find(ctx, repo, root)
		switch {
		case errors.Is(err, errdef.ErrNotFound):
			// A manifest of the graph is not in the mirror: what reads
			// the graph (verify, install) reports it, naming it.
		case err != nil:
			return nil, 0, fmt.Errorf("%s: looking up signatures: %w", repoName, err)
		default:
			found, listed = f, true
		}
	}
	if pkg.Signatures != nil && listed {
		// The lock names exactly what was verified or carried (an empty
		// list: nothing); anything else attached to the package's graph
		// in the mirror was put there afterwards.
		out = append(out, unnamed(repoName, pkg, found)...)
	}
	if rule == nil {
		return out, 0, nil
	}
	// The mirror is checked as the source was (checkPackage): every
	// layout cosign writes, not the .sig tag alone, and every signed
	// manifest of the package's graph (verifyGraph).
	ref := repoName + "@" + root.Digest.String()
	g := graphVerdict{verified: map[string]bool{}, none: true}
	if rule.signs() {
		var err error
		if g, err = rule.verifyGraph(ctx, repo, root.Digest, found, listed); err != nil {
			return nil, 0, fmt.Errorf("checking the signatures of %s: %w", ref, err)
		}
	}
	switch {
	case g.none && rule.Required:
		out = append(out, Finding{Ref: ref, Detail: fmt.Sprintf("trust rule %q requires a signature of %s; there is none (no %s tag and no Sigstore signature bundle referrer)", rule.Name, root.Digest, signature.Tag(root.Digest))})
	case !g.none && g.why != "":
		out = append(out, Finding{Ref: ref, Detail: fmt.Sprintf("trust rule %q: %s", rule.Name, g.why)})
	}
	for _, n := range g.nested {
		out = append(out, Finding{Ref: repoName + "@" + n.subject.String(), Detail: fmt.Sprintf("trust rule %q: manifest %s of the package's graph: %s", rule.Name, n.subject, n.why)})
	}
	if rule.Keyring != "" {
		why, err := rule.checkProvenance(ctx, repo, pkg)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", ref, err)
		}
		if why != "" {
			out = append(out, Finding{Ref: ref, Detail: fmt.Sprintf("trust rule %q: %s", rule.Name, why)})
		}
	}
	if len(rule.Attestations) > 0 {
		aw, _, err := rule.checkAttestations(ctx, repo, root.Digest, found, listed)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", ref, err)
		}
		for _, why := range aw {
			out = append(out, Finding{Ref: ref, Detail: fmt.Sprintf("trust rule %q: %s", rule.Name, why)})
		}
	}
	return out, g.manifests, nil
}

// unnamed lists the cosign artifacts and referrers attached to a
// manifest of pkg's graph in the mirror (found) that pkg's recorded
// signatures do not name. A cosign tag of a subject and kind the lock records, pointing
// at another digest, is not listed: CheckMirror reports it already.
func unnamed(repoName string, pkg *lock.Package, found []lock.Signature) []Finding {
	named := map[string]bool{}
	tagged := map[string]bool{}
	for _, s := range pkg.Signatures {
		named[s.Subject+" "+s.Kind+" "+s.Digest] = true
		tagged[s.Subject+" "+s.Kind] = true
	}
	var out []Finding
	for _, f := range found {
		if named[f.Subject+" "+f.Kind+" "+f.Digest] || (f.Kind != KindReferrer && tagged[f.Subject+" "+f.Kind]) {
			continue
		}
		ref := repoName + "@" + f.Digest
		if f.Kind != KindReferrer {
			ref = repoName + ":" + CosignTag(digest.Digest(f.Subject), f.Kind)
		}
		out = append(out, Finding{Ref: ref, Detail: fmt.Sprintf("%s %s is in the mirror but the lock does not name it: it was attached after the lock was written", label(f), f.Digest)})
	}
	return out
}

// Failures returns every *Failure in err's tree, in order.
func Failures(err error) []*Failure {
	var out []*Failure
	var walk func(error)
	walk = func(e error) {
		if f, ok := e.(*Failure); ok {
			out = append(out, f)
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			if x := u.Unwrap(); x != nil {
				walk(x)
			}
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}
