package signature

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ferryhq/ferry/errkind"
	sgbundle "github.com/ferryhq/ferry/internal/forked/sigstore-go/pkg/bundle"
	"github.com/ferryhq/ferry/internal/forked/sigstore-go/pkg/root"
	"github.com/ferryhq/ferry/internal/forked/sigstore-go/pkg/verify"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
)

// Sigstore bundle formats, as cosign v3 attaches them to an image
// (sigstore/cosign pkg/oci/remote/write.go WriteAttestationNewBundleFormat;
// sigstore/cosign pkg/types/predicate.go).
const (
	// MediaTypeBundlePrefix starts every Sigstore bundle media type
	// (application/vnd.dev.sigstore.bundle.v0.3+json and older).
	MediaTypeBundlePrefix = "application/vnd.dev.sigstore.bundle"
	// CosignSignPredicateType is the in-toto predicate type of the statement
	// `cosign sign` signs in a bundle; other predicate types are
	// attestations, not signatures.
	CosignSignPredicateType = "https://sigstore.dev/cosign/sign/v1"
	// maxBundle bounds a bundle blob read from a registry.
	maxBundle = 4 << 20
)

// Kind says where a signature was found.
type Kind string

const (
	// KindSig is cosign's classic layout: a manifest tagged sha256-HEX.sig.
	KindSig Kind = "sig"
	// KindReferrer is a Sigstore bundle in an OCI referrer of the image,
	// listed by the referrers API or its tag fallback (sha256-HEX).
	KindReferrer Kind = "referrer"
)

// Identity is a keyless signer a policy trusts: the OIDC issuer recorded in
// the Fulcio certificate and its subject (the certificate's SAN), given
// exactly or as a regular expression (Go syntax, as cosign's
// --certificate-identity-regexp). Issuer is required, and one of Subject and
// SubjectRegexp.
type Identity struct {
	Issuer        string `json:"issuer"`
	Subject       string `json:"subject,omitempty"`
	SubjectRegexp string `json:"subjectRegexp,omitempty"`
}

func (id Identity) String() string {
	if id.Subject != "" {
		return fmt.Sprintf("%s from %s", id.Subject, id.Issuer)
	}
	return fmt.Sprintf("/%s/ from %s", id.SubjectRegexp, id.Issuer)
}

// certificateIdentity is id as sigstore-go matches it.
func (id Identity) certificateIdentity() (verify.CertificateIdentity, error) {
	if id.Issuer == "" {
		return verify.CertificateIdentity{}, errors.New("a keyless identity needs an issuer")
	}
	if id.Subject == "" && id.SubjectRegexp == "" {
		return verify.CertificateIdentity{}, fmt.Errorf("a keyless identity from %s needs a subject or a subject regexp", id.Issuer)
	}
	return verify.NewShortCertificateIdentity(id.Issuer, "", id.Subject, id.SubjectRegexp)
}

// LoadTrustedRoot reads a Sigstore trusted root (trusted_root.json, as
// `cosign verify --trusted-root` takes it and `cosign trusted-root create`
// or the sigstore TUF repository write it). A missing or malformed file is
// bad input (exit code 2).
func LoadTrustedRoot(path string) (*root.TrustedRoot, error) {
	tr, err := root.NewTrustedRootFromPath(path)
	if err != nil {
		return nil, errkind.Markf(errkind.BadInput, "trusted root %s: %w", path, err)
	}
	return tr, nil
}

// Verifier checks an image's signatures against a trust rule: any of Keys,
// or a keyless signature by any of Identities whose certificate chains to
// TrustedRoot with a transparency-log proof, all offline.
type Verifier struct {
	// Keys are trusted signing keys.
	Keys []*PublicKey
	// Identities are trusted keyless signers; they need TrustedRoot.
	Identities []Identity
	// TrustedRoot holds the Fulcio, Rekor, CT log and TSA keys keyless
	// signatures are checked against (LoadTrustedRoot). With keys it also
	// lets a bundle's transparency-log entry be checked; without it a
	// key-signed bundle is checked on its signature alone, as `cosign
	// verify --key K --insecure-ignore-tlog` does.
	TrustedRoot root.TrustedMaterial
}

// hasRoot reports whether a trusted root is set, a nil *root.TrustedRoot
// in the interface counting as none.
func (v *Verifier) hasRoot() bool {
	if tr, ok := v.TrustedRoot.(*root.TrustedRoot); ok {
		return tr != nil
	}
	return v.TrustedRoot != nil
}

// Signature is one signature that verified.
type Signature struct {
	// Kind is where it was found.
	Kind Kind `json:"kind"`
	// Manifest is the signature manifest: the sha256-HEX.sig manifest, or
	// the referrer manifest holding the bundle.
	Manifest ocispec.Descriptor `json:"manifest"`
	// Layer is the digest of the verified layer: the simple-signing
	// payload, or the bundle.
	Layer digest.Digest `json:"layer"`
	// LayerMediaType is that layer's media type.
	LayerMediaType string `json:"layerMediaType"`
	// KeyFingerprint is the verifying key's Fingerprint, for a key
	// signature; KeySource names that key.
	KeyFingerprint string `json:"keyFingerprint,omitempty"`
	KeySource      string `json:"keySource,omitempty"`
	// Identity is the policy identity that matched, for a keyless
	// signature; Subject and Issuer are what the certificate says.
	Identity *Identity `json:"identity,omitempty"`
	Subject  string    `json:"subject,omitempty"`
	Issuer   string    `json:"issuer,omitempty"`
}

// ErrNoTrustedRoot is a keyless identity to verify with and no Sigstore
// trusted root (trusted_root.json) to verify it against; a CLI says how to
// give one.
var ErrNoTrustedRoot = errors.New("keyless identities need a trusted root")

// Check reports whether v can verify anything, and whether its identities
// are well-formed. It is bad input to give identities without a trusted
// root.
func (v *Verifier) Check() error {
	if len(v.Keys) == 0 && len(v.Identities) == 0 {
		return errkind.Markf(errkind.BadInput, "no key and no keyless identity to verify signatures with")
	}
	if len(v.Identities) > 0 && !v.hasRoot() {
		return errkind.Mark(errkind.BadInput, ErrNoTrustedRoot)
	}
	for _, id := range v.Identities {
		if _, err := id.certificateIdentity(); err != nil {
			return errkind.Markf(errkind.BadInput, "keyless identity: %w", err)
		}
	}
	return nil
}

// VerifyImage checks every signature of manifest d in repo, in cosign's
// classic layout (the manifest tagged Tag(d)) and as Sigstore bundles in
// referrers of d (the referrers API, or its tag fallback when repo does not
// list referrers itself or the registry lacks the API), and returns those
// that verify. At least one must: none found is ErrNoSignature, none
// verifying ErrInvalid naming why for each; registry failures are returned
// as they are. Bundles whose statement is not cosign's signature predicate
// (attestations) are not signatures and are skipped.
func (v *Verifier) VerifyImage(ctx context.Context, repo Repository, d digest.Digest) (*Verified, error) {
	if err := v.Check(); err != nil {
		return nil, err
	}
	refs, err := listReferrers(ctx, repo, d)
	if err != nil {
		return nil, err
	}
	return v.VerifyListed(ctx, repo, d, refs)
}

// VerifyListed is VerifyImage over the referrers of d the caller has
// listed already (trust reads them with the rest of a package's attached
// artifacts, relocate.Attached, the one discovery lock, mirror, verify and
// install share), rather than listing them again. Every one is read, as
// cosign reads them; those that hold no Sigstore bundle are skipped.
func (v *Verifier) VerifyListed(ctx context.Context, repo Repository, d digest.Digest, refs []ocispec.Descriptor) (*Verified, error) {
	if err := v.Check(); err != nil {
		return nil, err
	}
	out := &Verified{}
	var reasons []string
	found := false
	attestations := 0

	// Classic .sig layout.
	sigs, why, ok, err := v.verifyClassic(ctx, repo, d)
	if err != nil {
		return nil, err
	}
	found = found || ok
	reasons = append(reasons, why...)
	for _, s := range sigs {
		out.Signatures = append(out.Signatures, s.sig)
		if out.Layer == "" {
			out.Layer, out.Payload = s.sig.Layer, s.payload
		}
	}

	// Bundles in referrers.
	for _, ref := range refs {
		// Every referrer is read, whatever artifactType its listing
		// carries, as cosign reads them (see bundleLayer): the
		// tag-schema fallback cosign v2 writes lists a bundle as
		// application/vnd.oci.empty.v1+json.
		s, err := v.verifyReferrer(ctx, repo, ref, d)
		if errors.Is(err, errNotABundle) {
			continue
		}
		if errors.Is(err, errNotASignature) {
			attestations++
			continue
		}
		found = true
		if err == nil {
			out.Signatures = append(out.Signatures, *s)
			continue
		}
		if !IsMismatch(err) {
			return nil, err
		}
		reasons = append(reasons, fmt.Sprintf("referrer %s: %v", ref.Digest, err))
	}

	if len(out.Signatures) > 0 {
		return out, nil
	}
	if !found {
		also := ""
		if attestations > 0 {
			also = fmt.Sprintf(" (%d attestation bundles, which are not signatures)", attestations)
		}
		return nil, missingf("no signature for %s: no manifest tagged %s and no Sigstore signature bundle referrer%s", d, Tag(d), also)
	}
	return nil, invalidf("no signature of %s verifies: %s", d, strings.Join(reasons, "; "))
}

type classicSig struct {
	sig     Signature
	payload SimpleSigning
}

// verifyClassic checks the layers of the manifest tagged Tag(d) with every
// key. found says whether that manifest exists.
func (v *Verifier) verifyClassic(ctx context.Context, repo Repository, d digest.Digest) (sigs []classicSig, reasons []string, found bool, err error) {
	tag := Tag(d)
	desc, rc, err := repo.FetchReference(ctx, tag)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("fetching %s: %w", tag, err)
	}
	raw, err := readAllVerified(rc, desc, maxManifest)
	rc.Close()
	if err != nil {
		return nil, []string{fmt.Sprintf("signature manifest %s: %v", tag, err)}, true, nil
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, []string{fmt.Sprintf("%s is not a manifest: %v", tag, err)}, true, nil
	}
	if len(m.Layers) == 0 {
		return nil, []string{fmt.Sprintf("%s holds no signature layers", tag)}, true, nil
	}
	for i, layer := range m.Layers {
		if _, ok := layer.Annotations[annotationCertificate]; ok {
			s, ss, err := v.classicKeylessLayer(ctx, repo, layer, d)
			if err == nil {
				s.Kind, s.Manifest, s.Layer, s.LayerMediaType = KindSig, desc, layer.Digest, layer.MediaType
				sigs = append(sigs, classicSig{sig: *s, payload: ss})
				continue
			}
			if !IsMismatch(err) {
				return nil, nil, true, err
			}
			reasons = append(reasons, fmt.Sprintf("%s layer %d: %v", tag, i+1, err))
			continue
		}
		var layerReasons []string
		for _, k := range v.Keys {
			got, err := verifyLayer(ctx, repo, layer, d, k)
			if err == nil {
				sigs = append(sigs, classicSig{sig: Signature{
					Kind: KindSig, Manifest: desc, Layer: layer.Digest, LayerMediaType: layer.MediaType,
					KeyFingerprint: k.Fingerprint(), KeySource: k.Source,
				}, payload: got.Payload})
				layerReasons = nil
				break
			}
			if !IsMismatch(err) {
				return nil, nil, true, err
			}
			layerReasons = append(layerReasons, err.Error())
		}
		if len(layerReasons) > 0 {
			reasons = append(reasons, fmt.Sprintf("%s layer %d: %s", tag, i+1, strings.Join(layerReasons, "; ")))
		}
	}
	return sigs, reasons, true, nil
}

func (v *Verifier) classicKeylessLayer(ctx context.Context, repo Repository, layer ocispec.Descriptor, d digest.Digest) (*Signature, SimpleSigning, error) {
	payload, sig, err := readLayer(ctx, repo, layer)
	if err != nil {
		return nil, SimpleSigning{}, err
	}
	return v.verifyClassicKeyless(layer, payload, sig, d)
}

// annotationCertificate marks a classic keyless signature layer (cosign
// pkg/oci/static: dev.sigstore.cosign/certificate).
const annotationCertificate = "dev.sigstore.cosign/certificate"

// listReferrers returns the manifests that refer to d: through repo's own
// referrer listing when it has one (oras' remote.Repository uses the
// referrers API and falls back to the tag schema), else by reading the
// referrers tag fallback sha256-HEX (OCI distribution-spec v1.1
// "Referrers Tag Schema").
func listReferrers(ctx context.Context, repo Repository, d digest.Digest) ([]ocispec.Descriptor, error) {
	subject := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: d}
	if rl, ok := repo.(registry.ReferrerLister); ok {
		var out []ocispec.Descriptor
		err := rl.Referrers(ctx, subject, "", func(refs []ocispec.Descriptor) error {
			out = append(out, refs...)
			return nil
		})
		if errors.Is(err, errdef.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("listing referrers of %s: %w", d, err)
		}
		return out, nil
	}
	return referrersByTag(ctx, repo, d)
}

// ReferrersTag is the referrers tag fallback of manifest d: "sha256-HEX".
func ReferrersTag(d digest.Digest) string {
	return d.Algorithm().String() + "-" + d.Encoded()
}

func referrersByTag(ctx context.Context, repo Repository, d digest.Digest) ([]ocispec.Descriptor, error) {
	tag := ReferrersTag(d)
	desc, rc, err := repo.FetchReference(ctx, tag)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fetching referrers tag %s: %w", tag, err)
	}
	raw, err := readAllVerified(rc, desc, maxManifest)
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("referrers index %s: %w", tag, err)
	}
	var idx ocispec.Index
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, fmt.Errorf("referrers tag %s is not an index: %w", tag, err)
	}
	return idx.Manifests, nil
}

// errNotASignature: a bundle that verifies nothing ferry calls a signature
// (an attestation).
var errNotASignature = errors.New("not a signature bundle")

// errNotABundle: a referrer that carries no Sigstore bundle (an SBOM, a
// notation signature), which cosign ignores.
var errNotABundle = errors.New("not a Sigstore bundle referrer")

// verifyReferrer checks the bundle layer of referrer manifest ref; a
// referrer that holds no bundle as cosign reads one (bundleLayer) is
// errNotABundle.
func (v *Verifier) verifyReferrer(ctx context.Context, repo Repository, ref ocispec.Descriptor, d digest.Digest) (*Signature, error) {
	if !isManifestType(ref.MediaType) {
		return nil, errNotABundle
	}
	_, rc, err := repo.FetchReference(ctx, ref.Digest.String())
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, invalidf("referrer manifest is missing")
	}
	if err != nil {
		return nil, fmt.Errorf("fetching referrer %s: %w", ref.Digest, err)
	}
	raw, err := readAllVerified(rc, ref, maxManifest)
	rc.Close()
	if err != nil {
		return nil, invalidf("%v", err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, invalidf("not a manifest: %v", err)
	}
	if p, ok := m.Annotations["dev.sigstore.bundle.predicateType"]; ok && p != CosignSignPredicateType {
		return nil, errNotASignature
	}
	layer, ok := bundleLayer(m)
	if !ok {
		return nil, errNotABundle
	}
	s, err := v.verifyBundleLayer(ctx, repo, layer, d)
	if err != nil {
		return nil, err
	}
	// The descriptor names what the manifest is, not what a listing
	// said of it.
	ref.ArtifactType = ArtifactType(m)
	s.Manifest = ref
	return s, nil
}

// isManifestType reports whether mediaType is an image manifest a
// referrer can be (OCI, or Docker schema 2 as go-containerregistry may
// list it); an empty media type is taken as one.
func isManifestType(mediaType string) bool {
	switch mediaType {
	case "", ocispec.MediaTypeImageManifest, "application/vnd.docker.distribution.manifest.v2+json":
		return true
	}
	return false
}

func (v *Verifier) verifyBundleLayer(ctx context.Context, repo Repository, layer ocispec.Descriptor, d digest.Digest) (*Signature, error) {
	if layer.Size > maxBundle {
		return nil, invalidf("bundle %s is %d bytes", layer.Digest, layer.Size)
	}
	rc, err := repo.Blobs().Fetch(ctx, layer)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, invalidf("bundle blob %s is missing", layer.Digest)
	}
	if err != nil {
		return nil, fmt.Errorf("fetching bundle %s: %w", layer.Digest, err)
	}
	raw, err := readAllVerified(rc, layer, maxBundle)
	rc.Close()
	if err != nil {
		return nil, invalidf("bundle blob %s: %v", layer.Digest, err)
	}
	s, err := v.VerifyBundle(raw, d)
	if err != nil {
		return nil, err
	}
	s.Kind, s.Layer, s.LayerMediaType = KindReferrer, layer.Digest, layer.MediaType
	return s, nil
}

// VerifyBundle checks a Sigstore bundle (JSON) that signs manifest d, as
// `cosign verify` checks a bundle it finds: with sigstore-go's verifier,
// the bundle's statement must name d as a subject and carry cosign's
// signature predicate, and it must be signed by one of v.Keys, or by a
// certificate of one of v.Identities chaining to v.TrustedRoot with a
// verified transparency-log entry. The returned Signature has Kind,
// Manifest and Layer unset.
func (v *Verifier) VerifyBundle(bundleJSON []byte, d digest.Digest) (*Signature, error) {
	var b sgbundle.Bundle
	if err := b.UnmarshalJSON(bundleJSON); err != nil {
		return nil, invalidf("not a Sigstore bundle: %v", err)
	}
	// cosign ignores a referrer whose bundle is older than v0.3
	// (sigstore/cosign v3.1.2 pkg/oci/remote/signatures.go Bundle).
	if !b.MinVersion("v0.3") {
		return nil, errNotABundle
	}
	sum, err := hex.DecodeString(d.Encoded())
	if err != nil {
		return nil, invalidf("digest %s: %v", d, err)
	}
	artifact := verify.WithArtifactDigest(d.Algorithm().String(), sum)
	vc, err := b.VerificationContent()
	if err != nil {
		return nil, invalidf("bundle verification material: %v", err)
	}
	if vc.Certificate() != nil {
		s, res, err := v.verifyKeyless(&b, artifact)
		if err != nil {
			return nil, err
		}
		if err := checkPredicate(res); err != nil {
			return nil, err
		}
		return s, nil
	}
	if len(v.Keys) == 0 {
		return nil, invalidf("signed with a key, and no key is trusted")
	}
	var reasons []string
	for _, k := range v.Keys {
		res, err := v.verifyKeyBundle(&b, artifact, k)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("key %s: %v", k.name(), err))
			continue
		}
		if err := checkPredicate(res); err != nil {
			return nil, err
		}
		return &Signature{KeyFingerprint: k.Fingerprint(), KeySource: k.Source}, nil
	}
	return nil, invalidf("%s", strings.Join(reasons, "; "))
}

func (v *Verifier) verifyKeyBundle(b *sgbundle.Bundle, artifact verify.ArtifactPolicyOption, k *PublicKey) (*verify.VerificationResult, error) {
	keyMaterial := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
		return root.NewExpiringKey(k.SigstoreVerifier(), time.Time{}, time.Time{}), nil
	})
	var (
		tm   root.TrustedMaterial = keyMaterial
		opts []verify.VerifierOption
	)
	if v.hasRoot() && (b.HasInclusionProof() || b.HasInclusionPromise()) {
		tm = root.TrustedMaterialCollection{v.TrustedRoot, keyMaterial}
		opts = append(opts, verify.WithTransparencyLog(1), verify.WithIntegratedTimestamps(1))
	} else {
		opts = append(opts, verify.WithNoObserverTimestamps())
	}
	sv, err := verify.NewVerifier(tm, opts...)
	if err != nil {
		return nil, fmt.Errorf("configuring sigstore-go: %w", err)
	}
	return sv.Verify(b, verify.NewPolicy(artifact, verify.WithKey()))
}

// verifyKeyless checks a keyless bundle with sigstore-go against the
// trusted root and identities: certificate chain at the log's or TSA's
// time, transparency-log entry (inclusion proof or promise), SCTs when the
// root has CT logs, and the certificate identity.
func (v *Verifier) verifyKeyless(b *sgbundle.Bundle, artifact verify.ArtifactPolicyOption) (*Signature, *verify.VerificationResult, error) {
	if len(v.Identities) == 0 || !v.hasRoot() {
		return nil, nil, invalidf("keyless signature, and no keyless identity is trusted")
	}
	opts := []verify.VerifierOption{verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1)}
	if len(v.TrustedRoot.CTLogs()) > 0 {
		opts = append(opts, verify.WithSignedCertificateTimestamps(1))
	}
	sv, err := verify.NewVerifier(v.TrustedRoot, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("configuring sigstore-go: %w", err)
	}
	var popts []verify.PolicyOption
	for _, id := range v.Identities {
		ci, err := id.certificateIdentity()
		if err != nil {
			return nil, nil, errkind.Markf(errkind.BadInput, "keyless identity: %w", err)
		}
		popts = append(popts, verify.WithCertificateIdentity(ci))
	}
	res, err := sv.Verify(b, verify.NewPolicy(artifact, popts...))
	if err != nil {
		return nil, nil, invalidf("keyless: %v", err)
	}
	s := &Signature{}
	if c := res.Signature; c != nil && c.Certificate != nil {
		s.Subject, s.Issuer = c.Certificate.SubjectAlternativeName, c.Certificate.Issuer
	}
	for i, id := range v.Identities {
		ci, _ := id.certificateIdentity()
		if res.Signature != nil && res.Signature.Certificate != nil && ci.Verify(*res.Signature.Certificate) == nil {
			s.Identity = &v.Identities[i]
			break
		}
	}
	return s, res, nil
}

// checkPredicate: a bundle signs the image only with cosign's signature
// predicate; any other is an attestation (cosign attest).
func checkPredicate(res *verify.VerificationResult) error {
	if res.Statement == nil {
		return invalidf("the bundle signs no in-toto statement")
	}
	if res.Statement.PredicateType != CosignSignPredicateType {
		return errNotASignature
	}
	return nil
}
