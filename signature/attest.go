package signature

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sgbundle "github.com/ferryhq/ferry/internal/forked/sigstore-go/pkg/bundle"
	"github.com/ferryhq/ferry/internal/forked/sigstore-go/pkg/verify"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	"oras.land/oras-go/v2/errdef"
)

// Cosign's attestation format (sigstore/cosign pkg/types/mediatypes.go,
// pkg/types/payload.go; docs/specs/ATTESTATION_SPEC.md): an in-toto
// statement in a DSSE envelope, one envelope a layer of the manifest
// tagged sha256-HEX.att, or the envelope of a Sigstore bundle attached as
// a referrer.
const (
	// MediaTypeDSSE is the media type of an attestation layer in cosign's
	// classic layout: its blob is a DSSE envelope (JSON).
	MediaTypeDSSE = "application/vnd.dsse.envelope.v1+json"
	// InTotoPayloadType is the only DSSE payloadType cosign accepts for
	// an attestation (sigstore/cosign pkg/types IntotoPayloadType).
	InTotoPayloadType = "application/vnd.in-toto+json"
	// AnnotationPredicateType is the layer annotation cosign writes with
	// the statement's predicate type (unsigned: a hint only).
	AnnotationPredicateType = "predicateType"
	// AttestationTagSuffix ends the tag a manifest's attestations are
	// stored under in cosign's classic layout.
	AttestationTagSuffix = ".att"
	// KindAtt is cosign's classic attestation layout: a manifest tagged
	// sha256-HEX.att.
	KindAtt Kind = "att"
	// annotationBundlePredicateType is the referrer manifest annotation
	// cosign v3 writes with a bundle's predicate type
	// (sigstore/cosign pkg/oci/remote/write.go WriteAttestationNewBundleFormat).
	annotationBundlePredicateType = "dev.sigstore.bundle.predicateType"
)

// AttestationTag is the tag cosign stores the attestations of manifest d
// under: "sha256-HEX.att".
func AttestationTag(d digest.Digest) string {
	return d.Algorithm().String() + "-" + d.Encoded() + AttestationTagSuffix
}

// Statement is an in-toto statement (in-toto/attestation spec v1
// statement.md; v0.1 reads the same): what an attestation says about its
// subjects.
type Statement struct {
	Type          string             `json:"_type"`
	Subject       []StatementSubject `json:"subject"`
	PredicateType string             `json:"predicateType"`
	Predicate     json.RawMessage    `json:"predicate,omitempty"`
}

// StatementSubject is one subject of a statement: a name and its digests
// by algorithm ("sha256": hex).
type StatementSubject struct {
	Name   string            `json:"name,omitempty"`
	Digest map[string]string `json:"digest"`
}

// Attestation is one attestation that verified: its DSSE signature by a
// trusted key or keyless identity, payloadType in-toto, and a statement
// whose subject is the manifest it is attached to.
type Attestation struct {
	// Signature says where it was found (Kind KindAtt or KindReferrer,
	// Manifest, Layer) and who signed it.
	Signature
	// Statement is the verified in-toto statement.
	Statement Statement `json:"statement"`
}

// RejectedAttestation is an attestation found that does not verify.
type RejectedAttestation struct {
	// Where names it: the .att tag and layer, or the referrer.
	Where string
	// PredicateType is the predicate type it claims (for a classic layer,
	// its unsigned annotation), when known.
	PredicateType string
	// Why it does not verify.
	Why string
}

func (r RejectedAttestation) String() string {
	if r.PredicateType == "" {
		return fmt.Sprintf("%s: %s", r.Where, r.Why)
	}
	return fmt.Sprintf("%s (%s): %s", r.Where, r.PredicateType, r.Why)
}

// maxEnvelope bounds a DSSE envelope read from a registry.
const maxEnvelope = 16 << 20

// VerifyAttestations checks every attestation of manifest d in repo, in
// both layouts cosign writes: the layers of the manifest tagged
// AttestationTag(d) (cosign v2 `attest`, cosign v3 `attest` without the
// bundle format) and Sigstore bundles in referrers of d whose statement
// is not cosign's signature predicate (cosign v3 `attest` with the bundle
// format). refs are d's referrers when the caller listed them (listed);
// otherwise they are listed here. It returns those that verify and those
// that do not, whatever their predicate type: the caller applies its
// policy on predicate types. Registry failures are returned as they are.
//
// Each is checked as `cosign verify-attestation` checks it
// (sigstore/cosign v3.1.2 pkg/cosign/verify.go verifyOCIAttestation and
// VerifyImageAttestation, d6d86c224e5899b54f56cbb063b79dc43abc11c2): the
// envelope's payloadType is in-toto, and its signature verifies with a
// trusted key over the DSSE pre-authentication encoding (for a bundle:
// sigstore-go, with a trusted key or keyless identity as VerifyBundle).
// Then one subject of the statement must have d's digest, as cosign's
// claim verifier for attestations checks it in both layouts
// (pkg/cosign/verifiers.go IntotoSubjectClaimVerifier, set by
// cmd/cosign/cli/verify/verify_attestation.go).
func (v *Verifier) VerifyAttestations(ctx context.Context, repo Repository, d digest.Digest, refs []ocispec.Descriptor, listed bool) ([]Attestation, []RejectedAttestation, error) {
	if err := v.Check(); err != nil {
		return nil, nil, err
	}
	atts, rejected, err := v.verifyClassicAttestations(ctx, repo, d)
	if err != nil {
		return nil, nil, err
	}
	if !listed {
		if refs, err = listReferrers(ctx, repo, d); err != nil {
			return nil, nil, err
		}
	}
	for _, ref := range refs {
		a, pt, err := v.verifyAttestationReferrer(ctx, repo, ref, d)
		switch {
		case errors.Is(err, errNotABundle), errors.Is(err, errNotASignature):
			continue
		case err == nil:
			atts = append(atts, *a)
		case IsMismatch(err):
			rejected = append(rejected, RejectedAttestation{Where: "referrer " + ref.Digest.String(), PredicateType: pt, Why: err.Error()})
		default:
			return nil, nil, err
		}
	}
	return atts, rejected, nil
}

// verifyClassicAttestations checks the DSSE layers of the manifest tagged
// AttestationTag(d).
func (v *Verifier) verifyClassicAttestations(ctx context.Context, repo Repository, d digest.Digest) ([]Attestation, []RejectedAttestation, error) {
	tag := AttestationTag(d)
	desc, rc, err := repo.FetchReference(ctx, tag)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("fetching %s: %w", tag, err)
	}
	raw, err := readAllVerified(rc, desc, maxManifest)
	rc.Close()
	if err != nil {
		return nil, []RejectedAttestation{{Where: tag, Why: err.Error()}}, nil
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, []RejectedAttestation{{Where: tag, Why: fmt.Sprintf("not a manifest: %v", err)}}, nil
	}
	var atts []Attestation
	var rejected []RejectedAttestation
	for i, layer := range m.Layers {
		where := fmt.Sprintf("%s layer %d", tag, i+1)
		a, err := v.verifyDSSELayer(ctx, repo, layer, d)
		if err == nil {
			a.Kind, a.Manifest, a.Layer, a.LayerMediaType = KindAtt, desc, layer.Digest, layer.MediaType
			atts = append(atts, *a)
			continue
		}
		if !IsMismatch(err) {
			return nil, nil, err
		}
		rejected = append(rejected, RejectedAttestation{Where: where, PredicateType: layer.Annotations[AnnotationPredicateType], Why: err.Error()})
	}
	return atts, rejected, nil
}

// dsseEnvelope is a DSSE envelope (secure-systems-lab/dsse envelope.md).
type dsseEnvelope struct {
	PayloadType string `json:"payloadType"`
	Payload     string `json:"payload"`
	Signatures  []struct {
		KeyID string `json:"keyid"`
		Sig   string `json:"sig"`
	} `json:"signatures"`
}

// PAE is DSSE's pre-authentication encoding of a payload, what a DSSE
// signature signs (secure-systems-lab/dsse protocol.md):
// "DSSEv1 LEN(type) type LEN(body) body".
func PAE(payloadType string, payload []byte) []byte {
	return []byte(fmt.Sprintf("DSSEv1 %d %s %d %s", len(payloadType), payloadType, len(payload), payload))
}

// decodeB64 decodes DSSE's base64, standard or URL-safe, padded or not,
// as secure-systems-lab/go-securesystemslib dsse b64Decode accepts.
func decodeB64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// verifyDSSELayer checks one classic attestation layer with v's keys.
func (v *Verifier) verifyDSSELayer(ctx context.Context, repo Repository, layer ocispec.Descriptor, d digest.Digest) (*Attestation, error) {
	if layer.MediaType != MediaTypeDSSE {
		return nil, invalidf("media type %s is not %s", layer.MediaType, MediaTypeDSSE)
	}
	if layer.Size > maxEnvelope {
		return nil, invalidf("envelope %s is %d bytes", layer.Digest, layer.Size)
	}
	rc, err := repo.Blobs().Fetch(ctx, layer)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, invalidf("envelope blob %s is missing", layer.Digest)
	}
	if err != nil {
		return nil, fmt.Errorf("fetching attestation %s: %w", layer.Digest, err)
	}
	raw, err := readAllVerified(rc, layer, maxEnvelope)
	rc.Close()
	if err != nil {
		return nil, invalidf("envelope blob %s: %v", layer.Digest, err)
	}
	var env dsseEnvelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, invalidf("not a DSSE envelope: %v", err)
	}
	if env.PayloadType != InTotoPayloadType {
		return nil, invalidf("payloadType %q is not %s", env.PayloadType, InTotoPayloadType)
	}
	payload, err := decodeB64(env.Payload)
	if err != nil {
		return nil, invalidf("envelope payload: %v", err)
	}
	if _, ok := layer.Annotations[annotationCertificate]; ok {
		return v.verifyClassicKeylessAttestation(layer, env, payload, d)
	}
	if len(v.Keys) == 0 {
		return nil, invalidf("signed with a key, and no key is trusted")
	}
	pae := PAE(env.PayloadType, payload)
	var reasons []string
	for _, k := range v.Keys {
		for _, s := range env.Signatures {
			sig, err := decodeB64(s.Sig)
			if err != nil {
				reasons = append(reasons, "signature is not base64")
				continue
			}
			if err := k.Verify(pae, sig); err != nil {
				reasons = append(reasons, err.Error())
				continue
			}
			st, err := checkStatement(payload, d)
			if err != nil {
				return nil, err
			}
			return &Attestation{Signature: Signature{KeyFingerprint: k.Fingerprint(), KeySource: k.Source}, Statement: st}, nil
		}
	}
	if len(env.Signatures) == 0 {
		return nil, invalidf("the envelope has no signature")
	}
	return nil, invalidf("%s", strings.Join(reasons, "; "))
}

// checkStatement reads a verified in-toto statement and checks that one
// of its subjects is d, byte for byte as cosign compares them
// (IntotoSubjectClaimVerifier: "sha256:"+subject.digest.sha256 equals the
// image digest).
func checkStatement(payload []byte, d digest.Digest) (Statement, error) {
	var st Statement
	if err := json.Unmarshal(payload, &st); err != nil {
		return st, invalidf("payload is not an in-toto statement: %v", err)
	}
	if !strings.HasPrefix(st.Type, "https://in-toto.io/Statement/") {
		return st, invalidf("payload _type %q is not an in-toto statement", st.Type)
	}
	var got []string
	for _, s := range st.Subject {
		if h, ok := s.Digest[d.Algorithm().String()]; ok {
			if h == d.Encoded() {
				return st, nil
			}
			got = append(got, d.Algorithm().String()+":"+h)
		}
	}
	if len(got) == 0 {
		got = append(got, "no "+d.Algorithm().String()+" digest")
	}
	return st, invalidf("subject digest mismatch: the statement (%s) is about %s, not %s", st.PredicateType, strings.Join(got, ", "), d)
}

// verifyAttestationReferrer checks the bundle of referrer ref as an
// attestation of d. A referrer with no bundle is errNotABundle, a bundle
// of cosign's signature predicate errNotASignature (it is a signature).
// It returns the predicate type the referrer claims, for messages.
func (v *Verifier) verifyAttestationReferrer(ctx context.Context, repo Repository, ref ocispec.Descriptor, d digest.Digest) (*Attestation, string, error) {
	if !isManifestType(ref.MediaType) {
		return nil, "", errNotABundle
	}
	_, rc, err := repo.FetchReference(ctx, ref.Digest.String())
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, "", invalidf("referrer manifest is missing")
	}
	if err != nil {
		return nil, "", fmt.Errorf("fetching referrer %s: %w", ref.Digest, err)
	}
	raw, err := readAllVerified(rc, ref, maxManifest)
	rc.Close()
	if err != nil {
		return nil, "", invalidf("%v", err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "", invalidf("not a manifest: %v", err)
	}
	claimed := m.Annotations[annotationBundlePredicateType]
	if claimed == CosignSignPredicateType {
		return nil, claimed, errNotASignature
	}
	layer, ok := bundleLayer(m)
	if !ok {
		return nil, claimed, errNotABundle
	}
	if layer.Size > maxBundle {
		return nil, claimed, invalidf("bundle %s is %d bytes", layer.Digest, layer.Size)
	}
	brc, err := repo.Blobs().Fetch(ctx, layer)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, claimed, invalidf("bundle blob %s is missing", layer.Digest)
	}
	if err != nil {
		return nil, claimed, fmt.Errorf("fetching bundle %s: %w", layer.Digest, err)
	}
	bundleJSON, err := readAllVerified(brc, layer, maxBundle)
	brc.Close()
	if err != nil {
		return nil, claimed, invalidf("bundle blob %s: %v", layer.Digest, err)
	}
	a, err := v.VerifyAttestationBundle(bundleJSON, d)
	if err != nil {
		return nil, claimed, err
	}
	ref.ArtifactType = ArtifactType(m)
	a.Kind, a.Manifest, a.Layer, a.LayerMediaType = KindReferrer, ref, layer.Digest, layer.MediaType
	return a, claimed, nil
}

// VerifyAttestationBundle checks a Sigstore bundle (JSON) holding an
// attestation of manifest d: a DSSE envelope with an in-toto payload,
// signed by one of v.Keys or by a certificate of one of v.Identities
// chaining to v.TrustedRoot with a verified transparency-log entry (as
// VerifyBundle), whose statement names d as a subject. A bundle of
// cosign's signature predicate is errNotASignature.
func (v *Verifier) VerifyAttestationBundle(bundleJSON []byte, d digest.Digest) (*Attestation, error) {
	var b sgbundle.Bundle
	if err := b.UnmarshalJSON(bundleJSON); err != nil {
		return nil, invalidf("not a Sigstore bundle: %v", err)
	}
	if !b.MinVersion("v0.3") {
		return nil, errNotABundle
	}
	env := b.GetDsseEnvelope()
	if env == nil {
		// A message signature signs a digest, not a statement.
		return nil, errNotASignature
	}
	if env.GetPayloadType() != InTotoPayloadType {
		return nil, invalidf("payloadType %q is not %s", env.GetPayloadType(), InTotoPayloadType)
	}
	var head struct {
		PredicateType string `json:"predicateType"`
	}
	if json.Unmarshal(env.GetPayload(), &head) == nil && head.PredicateType == CosignSignPredicateType {
		return nil, errNotASignature
	}
	// The subject is checked below, with a message that says so; the
	// signature, certificate and log entry by sigstore-go.
	artifact := verify.WithoutArtifactUnsafe()
	vc, err := b.VerificationContent()
	if err != nil {
		return nil, invalidf("bundle verification material: %v", err)
	}
	var s *Signature
	if vc.Certificate() != nil {
		if s, _, err = v.verifyKeyless(&b, artifact); err != nil {
			return nil, err
		}
	} else {
		if len(v.Keys) == 0 {
			return nil, invalidf("signed with a key, and no key is trusted")
		}
		var reasons []string
		for _, k := range v.Keys {
			if _, err := v.verifyKeyBundle(&b, artifact, k); err != nil {
				reasons = append(reasons, fmt.Sprintf("key %s: %v", k.name(), err))
				continue
			}
			s = &Signature{KeyFingerprint: k.Fingerprint(), KeySource: k.Source}
			break
		}
		if s == nil {
			return nil, invalidf("%s", strings.Join(reasons, "; "))
		}
	}
	st, err := checkStatement(env.GetPayload(), d)
	if err != nil {
		return nil, err
	}
	return &Attestation{Signature: *s, Statement: st}, nil
}

// verifyClassicKeylessAttestation checks a keyless attestation layer of
// cosign's classic layout (cosign v2 `attest` without a key): the DSSE
// envelope with the layer's Fulcio certificate, chain and Rekor entry
// (annotations, as for a .sig layer) as the v0.1 Sigstore bundle cosign v3
// reads the old layout as, verified by sigstore-go against the trusted
// root and identities; then the statement's subject.
func (v *Verifier) verifyClassicKeylessAttestation(layer ocispec.Descriptor, env dsseEnvelope, payload []byte, d digest.Digest) (*Attestation, error) {
	var sigs []*protodsse.Signature
	for _, s := range env.Signatures {
		raw, err := decodeB64(s.Sig)
		if err != nil {
			return nil, invalidf("signature is not base64")
		}
		sigs = append(sigs, &protodsse.Signature{Sig: raw, Keyid: s.KeyID})
	}
	b, err := classicKeylessBundleOf(layer, &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
		Payload: payload, PayloadType: env.PayloadType, Signatures: sigs,
	}})
	if err != nil {
		return nil, err
	}
	s, _, err := v.verifyKeyless(b, verify.WithoutArtifactUnsafe())
	if err != nil {
		return nil, err
	}
	st, err := checkStatement(payload, d)
	if err != nil {
		return nil, err
	}
	return &Attestation{Signature: *s, Statement: st}, nil
}
