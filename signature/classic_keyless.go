package signature

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	sgbundle "github.com/ferryhq/ferry/internal/forked/sigstore-go/pkg/bundle"
	"github.com/ferryhq/ferry/internal/forked/sigstore-go/pkg/verify"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// Annotations of a keyless signature layer in cosign's classic layout
// (sigstore/cosign pkg/oci/static/options.go and pkg/cosign/bundle).
const (
	// AnnotationCertificate holds the Fulcio leaf certificate (PEM).
	AnnotationCertificate = annotationCertificate
	// AnnotationChain holds its intermediate and root certificates (PEM).
	AnnotationChain = "dev.sigstore.cosign/chain"
	// AnnotationBundle holds the Rekor entry and its signed entry timestamp
	// (cosign's RekorBundle JSON).
	AnnotationBundle = "dev.sigstore.cosign/bundle"
	// AnnotationRFC3161Timestamp holds a TSA timestamp of the signature.
	AnnotationRFC3161Timestamp = "dev.sigstore.cosign/rfc3161timestamp"
)

// RekorBundle is cosign's dev.sigstore.cosign/bundle annotation
// (sigstore/cosign pkg/cosign/bundle/rekor.go).
type RekorBundle struct {
	SignedEntryTimestamp []byte       `json:"SignedEntryTimestamp"`
	Payload              RekorPayload `json:"Payload"`
}

// RekorPayload is the log entry a RekorBundle's timestamp signs.
type RekorPayload struct {
	Body           string `json:"body"`
	IntegratedTime int64  `json:"integratedTime"`
	LogIndex       int64  `json:"logIndex"`
	LogID          string `json:"logID"`
}

// classicKeylessBundle turns a classic keyless signature layer into the
// Sigstore bundle (v0.1: message signature, certificate, Rekor entry with
// its inclusion promise) sigstore-go verifies, as cosign v3 does for the
// old layout.
func classicKeylessBundle(layer ocispec.Descriptor, payload, sig []byte) (*sgbundle.Bundle, error) {
	sum := sha256.Sum256(payload)
	return classicKeylessBundleOf(layer, &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
		MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum[:]},
		Signature:     sig,
	}})
}

// classicKeylessBundleOf is classicKeylessBundle for any signed content:
// a message signature (a .sig layer) or a DSSE envelope (a .att layer).
func classicKeylessBundleOf(layer ocispec.Descriptor, signed any) (*sgbundle.Bundle, error) {
	certs, err := cryptoutils.UnmarshalCertificatesFromPEM([]byte(layer.Annotations[AnnotationCertificate]))
	if err != nil || len(certs) == 0 {
		return nil, invalidf("%s is not a PEM certificate: %v", AnnotationCertificate, err)
	}
	if chain := layer.Annotations[AnnotationChain]; chain != "" {
		more, err := cryptoutils.UnmarshalCertificatesFromPEM([]byte(chain))
		if err != nil {
			return nil, invalidf("%s: %v", AnnotationChain, err)
		}
		certs = append(certs, more...)
	}
	var chain []*protocommon.X509Certificate
	for _, c := range certs {
		chain = append(chain, &protocommon.X509Certificate{RawBytes: c.Raw})
	}
	rb := layer.Annotations[AnnotationBundle]
	if rb == "" {
		return nil, invalidf("keyless signature without a transparency-log entry (%s)", AnnotationBundle)
	}
	var rekor RekorBundle
	if err := json.Unmarshal([]byte(rb), &rekor); err != nil {
		return nil, invalidf("%s: %v", AnnotationBundle, err)
	}
	body, err := base64.StdEncoding.DecodeString(rekor.Payload.Body)
	if err != nil {
		return nil, invalidf("%s body: %v", AnnotationBundle, err)
	}
	logID, err := hex.DecodeString(rekor.Payload.LogID)
	if err != nil {
		return nil, invalidf("%s logID: %v", AnnotationBundle, err)
	}
	var kv struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(body, &kv); err != nil {
		return nil, invalidf("%s body: %v", AnnotationBundle, err)
	}
	vm := &protobundle.VerificationMaterial{
		Content: &protobundle.VerificationMaterial_X509CertificateChain{
			X509CertificateChain: &protocommon.X509CertificateChain{Certificates: chain},
		},
		TlogEntries: []*protorekor.TransparencyLogEntry{{
			LogIndex:          rekor.Payload.LogIndex,
			LogId:             &protocommon.LogId{KeyId: logID},
			KindVersion:       &protorekor.KindVersion{Kind: kv.Kind, Version: kv.APIVersion},
			IntegratedTime:    rekor.Payload.IntegratedTime,
			InclusionPromise:  &protorekor.InclusionPromise{SignedEntryTimestamp: rekor.SignedEntryTimestamp},
			CanonicalizedBody: body,
		}},
	}
	if ts := layer.Annotations[AnnotationRFC3161Timestamp]; ts != "" {
		var t struct {
			SignedRFC3161Timestamp []byte `json:"SignedRFC3161Timestamp"`
		}
		if err := json.Unmarshal([]byte(ts), &t); err != nil {
			return nil, invalidf("%s: %v", AnnotationRFC3161Timestamp, err)
		}
		vm.TimestampVerificationData = &protobundle.TimestampVerificationData{
			Rfc3161Timestamps: []*protocommon.RFC3161SignedTimestamp{{SignedTimestamp: t.SignedRFC3161Timestamp}},
		}
	}
	pb := &protobundle.Bundle{
		MediaType:            "application/vnd.dev.sigstore.bundle+json;version=0.1",
		VerificationMaterial: vm,
	}
	switch c := signed.(type) {
	case *protobundle.Bundle_MessageSignature:
		pb.Content = c
	case *protobundle.Bundle_DsseEnvelope:
		pb.Content = c
	default:
		return nil, fmt.Errorf("classic keyless layer: content %T", signed)
	}
	b, err := sgbundle.NewBundle(pb)
	if err != nil {
		return nil, invalidf("keyless signature layer: %v", err)
	}
	return b, nil
}

// verifyClassicKeyless checks a classic keyless signature layer: the
// certificate, log entry and identity through sigstore-go over the payload,
// then the payload's claim on d.
func (v *Verifier) verifyClassicKeyless(layer ocispec.Descriptor, payload, sig []byte, d digest.Digest) (*Signature, SimpleSigning, error) {
	b, err := classicKeylessBundle(layer, payload, sig)
	if err != nil {
		return nil, SimpleSigning{}, err
	}
	s, _, err := v.verifyKeyless(b, verify.WithArtifact(bytes.NewReader(payload)))
	if err != nil {
		return nil, SimpleSigning{}, err
	}
	ss, err := checkClaim(payload, d)
	if err != nil {
		return nil, ss, err
	}
	return s, ss, nil
}
