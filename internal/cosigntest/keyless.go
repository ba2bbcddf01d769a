package cosigntest

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	sgbundle "github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"oras.land/oras-go/v2"

	"github.com/ferryhq/ferry/internal/fixture"
)

// BundleMediaType is the Sigstore bundle media type cosign v3 writes
// (sigstore/cosign pkg/oci/remote/write.go WriteAttestationNewBundleFormat).
const BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// SignPredicateType is the predicate of the statement `cosign sign` signs
// into a bundle (sigstore/cosign pkg/types/predicate.go).
const SignPredicateType = "https://sigstore.dev/cosign/sign/v1"

// Keyless is an offline Sigstore for keyless signing: sigstore-go's
// virtual Sigstore (pkg/testing/ca) issues Fulcio-style certificates for an
// identity, Rekor entries with inclusion proofs and RFC 3161 timestamps,
// and its trusted root verifies them; no network is used.
type Keyless struct {
	vs *ca.VirtualSigstore
}

// NewKeyless starts a virtual Sigstore.
func NewKeyless() (*Keyless, error) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		return nil, fmt.Errorf("virtual sigstore: %w", err)
	}
	return &Keyless{vs: vs}, nil
}

// TrustedRootJSON returns the trusted root (trusted_root.json) for the
// virtual Sigstore's Fulcio CA, Rekor log and TSA. Its CT log is left out:
// the virtual Fulcio embeds no SCTs in its certificates.
func (k *Keyless) TrustedRootJSON() ([]byte, error) {
	// The virtual Sigstore keys its logs by the hex of their key ID and
	// keeps that hex text as the ID; a trusted_root.json holds the raw ID.
	logs := map[string]*root.TransparencyLog{}
	for id, l := range k.vs.RekorLogs() {
		raw, err := hex.DecodeString(id)
		if err != nil {
			return nil, fmt.Errorf("rekor log id %q: %w", id, err)
		}
		c := *l
		c.ID = raw
		logs[id] = &c
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01,
		k.vs.FulcioCertificateAuthorities(), nil,
		k.vs.TimestampingAuthorities(), logs)
	if err != nil {
		return nil, err
	}
	return tr.MarshalJSON()
}

// WriteTrustedRoot writes TrustedRootJSON to path.
func (k *Keyless) WriteTrustedRoot(path string) error {
	data, err := k.TrustedRootJSON()
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// SignImage returns a Sigstore bundle (JSON, BundleMediaType) as `cosign
// sign` (v3) makes for manifest d when signing keyless as subject with an
// OIDC token from issuer: a DSSE envelope over an in-toto statement naming
// d with predicateType, a certificate for the identity, a transparency-log
// entry with inclusion proof, and a timestamp.
func (k *Keyless) SignImage(subject, issuer string, d digest.Digest, predicateType string) ([]byte, error) {
	statement, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"digest": map[string]string{d.Algorithm().String(): d.Encoded()}}},
		"predicateType": predicateType,
		"predicate":     map[string]any{},
	})
	if err != nil {
		return nil, err
	}
	// Attest at a time inside the leaf certificate's validity, as
	// VirtualSigstore.Attest does.
	e, err := k.vs.AttestAtTime(subject, issuer, statement, time.Now().Add(5*time.Minute), true)
	if err != nil {
		return nil, fmt.Errorf("virtual sigstore: %w", err)
	}
	return bundleJSON(e)
}

// bundleJSON serialises a virtual Sigstore entity as a v0.3 bundle.
func bundleJSON(e *ca.TestEntity) ([]byte, error) {
	vc, err := e.VerificationContent()
	if err != nil {
		return nil, err
	}
	sc, err := e.SignatureContent()
	if err != nil {
		return nil, err
	}
	env, ok := sc.(*sgbundle.Envelope)
	if !ok {
		return nil, fmt.Errorf("signature content is %T, not a DSSE envelope", sc)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, err
	}
	var sigs []*protodsse.Signature
	for _, s := range env.Signatures {
		raw, err := base64.StdEncoding.DecodeString(s.Sig)
		if err != nil {
			return nil, err
		}
		sigs = append(sigs, &protodsse.Signature{Sig: raw, Keyid: s.KeyID})
	}
	tlogs, err := e.TlogEntries()
	if err != nil {
		return nil, err
	}
	var entries []*protorekor.TransparencyLogEntry
	for _, t := range tlogs {
		tle := t.TransparencyLogEntry()
		tle.KindVersion = &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"}
		entries = append(entries, tle)
	}
	tsrs, err := e.Timestamps()
	if err != nil {
		return nil, err
	}
	var ts []*protocommon.RFC3161SignedTimestamp
	for _, t := range tsrs {
		ts = append(ts, &protocommon.RFC3161SignedTimestamp{SignedTimestamp: t})
	}
	pb := &protobundle.Bundle{
		MediaType: BundleMediaType,
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_Certificate{
				Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw},
			},
			TlogEntries:               entries,
			TimestampVerificationData: &protobundle.TimestampVerificationData{Rfc3161Timestamps: ts},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload: payload, PayloadType: env.PayloadType, Signatures: sigs,
		}},
	}
	b, err := sgbundle.NewBundle(pb)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	return b.MarshalJSON()
}

// PushBundleReferrer attaches bundleJSON to subject in target as cosign v3
// does (sigstore/cosign pkg/oci/remote/write.go WriteReferrer): an OCI image
// manifest with artifactType BundleMediaType, an empty config, the bundle as
// its one layer and subject as its subject. oras writes the referrers tag
// fallback when the registry has no referrers API.
func PushBundleReferrer(ctx context.Context, target oras.Target, subject ocispec.Descriptor, bundleJSON []byte, predicateType string) (ocispec.Descriptor, error) {
	layer := ocispec.Descriptor{MediaType: BundleMediaType, Digest: digest.FromBytes(bundleJSON), Size: int64(len(bundleJSON))}
	if err := target.Push(ctx, layer, bytes.NewReader(bundleJSON)); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("pushing bundle: %w", err)
	}
	return oras.PackManifest(ctx, target, oras.PackManifestVersion1_1, BundleMediaType, oras.PackManifestOptions{
		Subject: &subject,
		Layers:  []ocispec.Descriptor{layer},
		ManifestAnnotations: map[string]string{
			"dev.sigstore.bundle.content":       "dsse-envelope",
			"dev.sigstore.bundle.predicateType": predicateType,
			ocispec.AnnotationCreated:           "2026-01-01T00:00:00Z",
		},
	})
}

// SignImageClassic signs manifest d keyless in cosign's classic layout, as
// cosign v2 `sign` does without a key: a simple-signing payload naming d
// in a layer of the manifest tagged sha256-HEX.sig, with the signature,
// Fulcio certificate and chain, and Rekor bundle (hashedrekord entry and
// signed entry timestamp) as annotations (sigstore/cosign
// pkg/oci/static/options.go, pkg/cosign/bundle/rekor.go).
func (k *Keyless) SignImageClassic(ctx context.Context, target oras.Target, dockerRef string, d digest.Digest, subject, issuer string) (ocispec.Descriptor, error) {
	payload, err := fixture.CosignPayload(dockerRef, d)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	e, err := k.vs.Sign(subject, issuer, payload)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("virtual sigstore: %w", err)
	}
	vc, err := e.VerificationContent()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	sc, err := e.SignatureContent()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	ms := sc.MessageSignatureContent()
	if ms == nil {
		return ocispec.Descriptor{}, errors.New("virtual sigstore made no message signature")
	}
	ann, err := k.classicAnnotations(e, vc)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	ann["dev.cosignproject.cosign/signature"] = base64.StdEncoding.EncodeToString(ms.Signature())
	return fixture.AppendCosignLayer(ctx, target, d, payload, ann)
}

// classicAnnotations returns the annotations cosign's classic layout
// gives a keyless signature or attestation layer made by e (its
// verification content vc): the Fulcio certificate, its chain, and the
// Rekor bundle (the log entry and its signed entry timestamp)
// (sigstore/cosign pkg/oci/static/options.go, pkg/cosign/bundle/rekor.go).
func (k *Keyless) classicAnnotations(e *ca.TestEntity, vc verify.VerificationContent) (map[string]string, error) {
	leaf, err := cryptoutils.MarshalCertificateToPEM(vc.Certificate())
	if err != nil {
		return nil, err
	}
	fulcio, ok := k.vs.FulcioCertificateAuthorities()[0].(*root.FulcioCertificateAuthority)
	if !ok {
		return nil, errors.New("virtual sigstore's CA is not a Fulcio CA")
	}
	chain, err := cryptoutils.MarshalCertificatesToPEM(append(append([]*x509.Certificate{}, fulcio.Intermediates...), fulcio.Root))
	if err != nil {
		return nil, err
	}
	entries, err := e.TlogEntries()
	if err != nil || len(entries) != 1 {
		return nil, fmt.Errorf("virtual sigstore made %d log entries: %v", len(entries), err)
	}
	tle := entries[0].TransparencyLogEntry()
	rp := tlog.RekorPayload{
		Body:           base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
		IntegratedTime: tle.IntegratedTime,
		LogIndex:       tle.LogIndex,
		LogID:          hex.EncodeToString(tle.LogId.KeyId),
	}
	set, err := k.vs.RekorSignPayload(rp)
	if err != nil {
		return nil, err
	}
	rekorBundle, err := json.Marshal(map[string]any{"SignedEntryTimestamp": set, "Payload": rp})
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"dev.sigstore.cosign/certificate": string(leaf),
		"dev.sigstore.cosign/chain":       string(chain),
		"dev.sigstore.cosign/bundle":      string(rekorBundle),
	}, nil
}

// AttestImageClassic attests manifest d keyless in cosign's classic
// layout, as cosign v2 `attest` does without a key: the DSSE envelope of
// an in-toto statement naming d with predicateType and predicate (JSON),
// as the one layer (application/vnd.dsse.envelope.v1+json) of a manifest
// tagged sha256-HEX.att, with the predicate type, Fulcio certificate and
// chain, and Rekor bundle (the log entry and its signed entry timestamp)
// as annotations (sigstore/cosign pkg/oci/static/options.go,
// cmd/cosign/cli/attest/attest.go).
func (k *Keyless) AttestImageClassic(ctx context.Context, target oras.Target, d digest.Digest, subject, issuer, predicateType string, predicate json.RawMessage) (ocispec.Descriptor, error) {
	if predicate == nil {
		predicate = json.RawMessage(`{}`)
	}
	statement, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": "image", "digest": map[string]string{d.Algorithm().String(): d.Encoded()}}},
		"predicateType": predicateType,
		"predicate":     predicate,
	})
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	e, err := k.vs.AttestAtTime(subject, issuer, statement, time.Now().Add(5*time.Minute), true)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("virtual sigstore: %w", err)
	}
	vc, err := e.VerificationContent()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	sc, err := e.SignatureContent()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	env, ok := sc.(*sgbundle.Envelope)
	if !ok {
		return ocispec.Descriptor{}, fmt.Errorf("signature content is %T, not a DSSE envelope", sc)
	}
	envJSON, err := json.Marshal(env.Envelope)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	ann, err := k.classicAnnotations(e, vc)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	ann["predicateType"] = predicateType
	layer := ocispec.Descriptor{MediaType: "application/vnd.dsse.envelope.v1+json", Digest: digest.FromBytes(envJSON), Size: int64(len(envJSON)),
		Annotations: ann}
	if err := target.Push(ctx, layer, bytes.NewReader(envJSON)); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("pushing the envelope: %w", err)
	}
	m, err := oras.PackManifest(ctx, target, oras.PackManifestVersion1_1, "application/vnd.dsse.envelope.v1+json", oras.PackManifestOptions{Layers: []ocispec.Descriptor{layer}})
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	return m, target.Tag(ctx, m, d.Algorithm().String()+"-"+d.Encoded()+".att")
}
