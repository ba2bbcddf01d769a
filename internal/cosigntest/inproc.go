package cosigntest

// The in-process cosign: what `cosign generate-key-pair`, `sign`, `attest`,
// `verify`, `verify-attestation`, `sign-blob` and `verify-blob` do with a
// key, offline, built from cosign v3's own Go packages (module
// github.com/sigstore/cosign/v3 v3.1.3). Each function follows the CLI
// command it stands for, calling the functions that command calls; the
// CLI packages themselves (cmd/cosign/cli/...) are not imported, as they
// pull in OPA, CUE and cloud SDKs. The files cited are of cosign v3.1.3.

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	ggcrtypes "github.com/google/go-containerregistry/pkg/v1/types"
	intotov1 "github.com/in-toto/attestation/go/v1"
	"github.com/in-toto/in-toto-golang/in_toto"
	slsa02 "github.com/in-toto/in-toto-golang/in_toto/slsa_provenance/v0.2"
	slsa1 "github.com/in-toto/in-toto-golang/in_toto/slsa_provenance/v1"
	"github.com/sigstore/cosign/v3/pkg/cosign"
	"github.com/sigstore/cosign/v3/pkg/cosign/attestation"
	cbundle "github.com/sigstore/cosign/v3/pkg/cosign/bundle"
	cremote "github.com/sigstore/cosign/v3/pkg/cosign/remote"
	"github.com/sigstore/cosign/v3/pkg/oci"
	"github.com/sigstore/cosign/v3/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v3/pkg/oci/remote"
	"github.com/sigstore/cosign/v3/pkg/oci/static"
	ctypes "github.com/sigstore/cosign/v3/pkg/types"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	signatureoptions "github.com/sigstore/sigstore/pkg/signature/options"
	sigpayload "github.com/sigstore/sigstore/pkg/signature/payload"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// generateKeyPair is `cosign generate-key-pair` with COSIGN_PASSWORD set
// (cmd/cosign/cli/generate/generate_key_pair.go GenerateKeyPairCmd):
// cosign.GenerateKeyPair encrypts the private key with the password;
// cosign.key is written 0600, cosign.pub 0644.
func generateKeyPair(dir string) (key, pub string, err error) {
	keys, err := cosign.GenerateKeyPair(func(bool) ([]byte, error) { return []byte(Password), nil })
	if err != nil {
		return "", "", fmt.Errorf("generate-key-pair: %w", err)
	}
	key, pub = filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	if err := os.WriteFile(key, keys.PrivateBytes, 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(pub, keys.PublicBytes, 0o644); err != nil {
		return "", "", err
	}
	return key, pub, nil
}

// loadKeypair reads an encrypted cosign.key as `--key FILE` does
// (pkg/signature/keys.go loadKey: cosign.LoadPrivateKey with the
// password) and wraps it as the sigstore-go keypair the CLI signs with
// (cmd/cosign/cli/signcommon/common.go GetKeypairAndToken).
func loadKeypair(keyPath string) (*svKeypair, error) {
	kb, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, err
	}
	sv, err := cosign.LoadPrivateKey(kb, []byte(Password), nil)
	if err != nil {
		return nil, fmt.Errorf("reading key: %w", err)
	}
	return newSVKeypair(sv)
}

// svKeypair is cosign's internal/key/svkeypair.go SignerVerifierKeypair
// (internal to cosign, so repeated here): a sign.Keypair over a
// signature.SignerVerifier.
type svKeypair struct {
	sv     signature.SignerVerifier
	hint   []byte
	keyAlg string
	sigAlg signature.AlgorithmDetails
}

func newSVKeypair(sv signature.SignerVerifier) (*svKeypair, error) {
	pubKey, err := sv.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("getting public key: %w", err)
	}
	der, err := x509.MarshalPKIXPublicKey(pubKey)
	if err != nil {
		return nil, fmt.Errorf("marshalling public key: %w", err)
	}
	sum := sha256.Sum256(der)
	k := &svKeypair{sv: sv, hint: []byte(base64.StdEncoding.EncodeToString(sum[:]))}
	switch pubKey.(type) {
	case *ecdsa.PublicKey:
		k.keyAlg = "ECDSA"
	case *rsa.PublicKey:
		k.keyAlg = "RSA"
	case ed25519.PublicKey:
		k.keyAlg = "ED25519"
	default:
		return nil, errors.New("unsupported key type")
	}
	if k.sigAlg, err = signature.GetDefaultAlgorithmDetails(pubKey, *cosign.GetDefaultLoadOptions(nil)...); err != nil {
		return nil, fmt.Errorf("getting default algorithm details: %w", err)
	}
	return k, nil
}

func (k *svKeypair) GetHashAlgorithm() protocommon.HashAlgorithm { return k.sigAlg.GetProtoHashType() }
func (k *svKeypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return k.sigAlg.GetSignatureAlgorithm()
}
func (k *svKeypair) GetHint() []byte         { return k.hint }
func (k *svKeypair) GetKeyAlgorithm() string { return k.keyAlg }
func (k *svKeypair) GetPublicKey() crypto.PublicKey {
	p, err := k.sv.PublicKey()
	if err != nil {
		return nil
	}
	return p
}
func (k *svKeypair) GetPublicKeyPem() (string, error) {
	p, err := k.sv.PublicKey()
	if err != nil {
		return "", err
	}
	b, err := cryptoutils.MarshalPublicKeyToPEM(p)
	return string(b), err
}
func (k *svKeypair) SignData(ctx context.Context, data []byte) ([]byte, []byte, error) {
	var digest []byte
	opts := []signature.SignOption{signatureoptions.WithContext(ctx)}
	if h := k.sigAlg.GetHashType(); h != 0 {
		hh := h.New()
		hh.Write(data)
		digest = hh.Sum(nil)
		opts = append(opts, signatureoptions.WithDigest(digest))
	}
	sig, err := k.sv.SignMessage(bytes.NewReader(data), opts...)
	return sig, digest, err
}

// dupeDetector is the CLI's: cremote.NewDupeDetector over the key's
// verifier (sign.go signDigest, attest.go).
func (k *svKeypair) dupeDetector() (mutate.DupeDetector, error) {
	hash := crypto.SHA256
	switch k.GetHashAlgorithm() {
	case protocommon.HashAlgorithm_SHA2_384:
		hash = crypto.SHA384
	case protocommon.HashAlgorithm_SHA2_512:
		hash = crypto.SHA512
	}
	v, err := signature.LoadVerifier(k.GetPublicKey(), hash)
	if err != nil {
		return nil, fmt.Errorf("loading verifier: %w", err)
	}
	return cremote.NewDupeDetector(v), nil
}

// offlineSigningConfig is what signcommon.NewSigningConfigFromKeyOpts
// gives `--key ... --tlog-upload=false --use-signing-config=false`: no
// Rekor, no TSA, and no Fulcio used (a key, no ID token).
func offlineSigningConfig() (*root.SigningConfig, error) {
	return root.NewSigningConfig(root.SigningConfigMediaType02, nil, nil, nil, root.ServiceConfiguration{}, nil, root.ServiceConfiguration{})
}

// signBundle is cbundle.SignData with a key and no services, as every
// command here calls it (sign.go, signcommon.NewAttestationBundle,
// sign_blob.go): a protobuf-JSON Sigstore bundle.
func signBundle(ctx context.Context, k *svKeypair, content sign.Content) ([]byte, *protobundle.Bundle, error) {
	sc, err := offlineSigningConfig()
	if err != nil {
		return nil, nil, err
	}
	b, err := cbundle.SignData(ctx, content, k, "", nil, nil, sc, nil, cbundle.SignOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("signing bundle: %w", err)
	}
	var pb protobundle.Bundle
	if err := protojson.Unmarshal(b, &pb); err != nil {
		return nil, nil, fmt.Errorf("unmarshalling bundle: %w", err)
	}
	return b, &pb, nil
}

// bundleSignature is signcommon.ExtractComponentsFromProtoBundle's
// Signature: the DSSE envelope as JSON, or the message signature.
func bundleSignature(pb *protobundle.Bundle) ([]byte, error) {
	if env := pb.GetDsseEnvelope(); env != nil {
		return json.Marshal(env)
	}
	if ms := pb.GetMessageSignature(); ms != nil {
		return ms.GetSignature(), nil
	}
	return nil, errors.New("bundle does not contain a message signature or dsse envelope")
}

// remoteOpts are the registry options of `--allow-insecure-registry
// --allow-http-registry` on a loopback registry.
func remoteOpts(ctx context.Context) []ociremote.Option {
	return []ociremote.Option{
		ociremote.WithNameOptions(name.Insecure),
		ociremote.WithRemoteOptions(remote.WithContext(ctx)),
	}
}

// signImage is `cosign sign --key KEY --tlog-upload=false REF@DIGEST`
// (cmd/cosign/cli/sign/sign.go SignCmd): newBundle selects signDigestBundle
// (a Sigstore bundle over an in-toto statement of predicate
// https://sigstore.dev/cosign/sign/v1, written as a referrer by
// ociremote.WriteAttestationNewBundleFormat) over signDigest (the
// simple-signing payload in the classic sha256-HEX.sig tag).
func signImage(ctx context.Context, keyPath, ref string, newBundle bool) error {
	k, err := loadKeypair(keyPath)
	if err != nil {
		return err
	}
	digest, err := name.NewDigest(ref, name.Insecure)
	if err != nil {
		return fmt.Errorf("parsing reference: %w", err)
	}
	opts := remoteOpts(ctx)
	if newBundle {
		// sign.go signDigestBundle.
		parts := strings.SplitN(digest.DigestStr(), ":", 2)
		annotations, _ := structpb.NewStruct(nil)
		statement := &intotov1.Statement{
			Type:          intotov1.StatementTypeUri,
			Subject:       []*intotov1.ResourceDescriptor{{Digest: map[string]string{parts[0]: parts[1]}, Annotations: annotations}},
			PredicateType: ctypes.CosignSignPredicateType,
			Predicate:     &structpb.Struct{},
		}
		payload, err := protojson.Marshal(statement)
		if err != nil {
			return err
		}
		b, _, err := signBundle(ctx, k, &sign.DSSEData{Data: payload, PayloadType: "application/vnd.in-toto+json"})
		if err != nil {
			return err
		}
		return ociremote.WriteAttestationNewBundleFormat(digest, b, ctypes.CosignSignPredicateType, opts...)
	}
	// sign.go signDigest.
	se, err := ociremote.SignedEntity(digest, opts...)
	var notFound *ociremote.EntityNotFoundError
	if errors.As(err, &notFound) {
		se = ociremote.SignedUnknown(digest)
	} else if err != nil {
		return fmt.Errorf("accessing image: %w", err)
	}
	payload, err := (&sigpayload.Cosign{Image: digest}).MarshalJSON()
	if err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	_, pb, err := signBundle(ctx, k, &sign.PlainData{Data: payload})
	if err != nil {
		return err
	}
	raw, err := bundleSignature(pb)
	if err != nil {
		return err
	}
	sig, err := static.NewSignature(payload, base64.StdEncoding.EncodeToString(raw))
	if err != nil {
		return fmt.Errorf("creating signature: %w", err)
	}
	dd, err := k.dupeDetector()
	if err != nil {
		return err
	}
	newSE, err := mutate.AttachSignatureToEntity(se, sig, mutate.WithDupeDetector(dd))
	if err != nil {
		return err
	}
	return ociremote.WriteSignatures(digest.Repository, newSE, opts...)
}

// predicateTypes is cmd/cosign/cli/options/predicate.go PredicateTypeMap.
var predicateTypes = map[string]string{
	"custom":           attestation.CosignCustomProvenanceV01,
	"slsaprovenance":   slsa02.PredicateSLSAProvenance,
	"slsaprovenance02": slsa02.PredicateSLSAProvenance,
	"slsaprovenance1":  slsa1.PredicateSLSAProvenance,
	"spdx":             in_toto.PredicateSPDX,
	"spdxjson":         in_toto.PredicateSPDX,
	"cyclonedx":        in_toto.PredicateCycloneDX,
	"link":             in_toto.PredicateLinkV1,
	"vuln":             attestation.CosignVulnProvenanceV01,
	"openvex":          attestation.OpenVexNamespace,
}

// predicateURI is options.ParsePredicateType: a name of the map, or a URI.
func predicateURI(typ string) (string, error) {
	if u, ok := predicateTypes[typ]; ok {
		return u, nil
	}
	if !strings.Contains(typ, "://") {
		return "", fmt.Errorf("invalid predicate type %q", typ)
	}
	return typ, nil
}

// attestImage is `cosign attest --key KEY --predicate FILE --type TYPE
// --tlog-upload=false REF@DIGEST` (cmd/cosign/cli/attest/attest.go
// AttestCommand.Exec): attestation.GenerateStatement, a DSSE bundle by
// signcommon.NewAttestationBundle; with newBundle that bundle is written by
// ociremote.WriteAttestationNewBundleFormat, else its envelope goes into
// the classic sha256-HEX.att tag (static.NewAttestation,
// mutate.AttachAttestationToEntity, ociremote.WriteAttestations).
func attestImage(ctx context.Context, keyPath, ref, predicatePath, typ string, newBundle bool) error {
	k, err := loadKeypair(keyPath)
	if err != nil {
		return err
	}
	uri, err := predicateURI(typ)
	if err != nil {
		return err
	}
	opts := remoteOpts(ctx)
	digest, err := name.NewDigest(ref, name.Insecure)
	if err != nil {
		return fmt.Errorf("parsing reference: %w", err)
	}
	h, err := v1.NewHash(digest.DigestStr())
	if err != nil {
		return err
	}
	pred, err := os.Open(predicatePath)
	if err != nil {
		return fmt.Errorf("getting predicate reader: %w", err)
	}
	defer pred.Close()
	sh, err := attestation.GenerateStatement(attestation.GenerateOpts{
		Predicate: pred,
		Type:      typ,
		Digest:    h.Hex,
		Repo:      digest.Repository.String(),
	})
	if err != nil {
		return err
	}
	payload, err := sh.MarshalJSON()
	if err != nil {
		return err
	}
	b, pb, err := signBundle(ctx, k, &sign.DSSEData{Data: payload, PayloadType: "application/vnd.in-toto+json"})
	if err != nil {
		return fmt.Errorf("creating bundle: %w", err)
	}
	if newBundle {
		if err := ociremote.WriteAttestationNewBundleFormat(digest, b, uri, opts...); err != nil {
			return fmt.Errorf("writing bundle: %w", err)
		}
		return nil
	}
	env, err := bundleSignature(pb)
	if err != nil {
		return err
	}
	att, err := static.NewAttestation(env,
		static.WithLayerMediaType(ctypes.DssePayloadType),
		static.WithAnnotations(map[string]string{"predicateType": uri}))
	if err != nil {
		return fmt.Errorf("creating attestation: %w", err)
	}
	dd, err := k.dupeDetector()
	if err != nil {
		return err
	}
	newSE, err := mutate.AttachAttestationToEntity(ociremote.SignedUnknown(digest, opts...), att, mutate.WithDupeDetector(dd))
	if err != nil {
		return fmt.Errorf("attaching attestation: %w", err)
	}
	return ociremote.WriteAttestations(digest.Repository, newSE, opts...)
}

// checkOpts are verify's and verify-attestation's CheckOpts for `--key PUB
// --insecure-ignore-tlog=true --trusted-root EMPTY` (cmd/cosign/cli/verify/
// verify.go VerifyCommand.Exec): the key's verifier (LoadVerifierFromKeyOrCert
// -> pkg/signature/keys.go LoadPublicKeyRaw with --signature-digest-algorithm
// sha256), the empty trusted root (SetTrustedMaterial), and the bundle
// format when the image has bundles (cosign.GetBundles).
func checkOpts(ctx context.Context, pubPath string, ref name.Reference) (*cosign.CheckOpts, error) {
	raw, err := os.ReadFile(pubPath)
	if err != nil {
		return nil, err
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(raw)
	if err != nil {
		return nil, fmt.Errorf("loading public key: %w", err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("loading public key: %w", err)
	}
	tr, err := root.NewTrustedRootFromJSON([]byte(emptyTrustedRoot))
	if err != nil {
		return nil, fmt.Errorf("loading trusted root: %w", err)
	}
	co := &cosign.CheckOpts{
		RegistryClientOpts: remoteOpts(ctx),
		IgnoreTlog:         true,
		NewBundleFormat:    true,
		TrustedMaterial:    tr,
		SigVerifier:        v,
	}
	if bundles, _, err := cosign.GetBundles(ctx, ref, co.RegistryClientOpts, name.Insecure); len(bundles) == 0 || err != nil {
		co.NewBundleFormat = false
	}
	return co, nil
}

// verifyImage is `cosign verify --key PUB --insecure-ignore-tlog=true
// REF@DIGEST` (verify.go): claims checked (SimpleClaimVerifier, or
// IntotoSubjectClaimVerifier for bundles), then VerifyImageAttestations
// for bundles, VerifyImageSignatures for the classic layout.
func verifyImage(ctx context.Context, pubPath, refStr string) error {
	ref, err := name.ParseReference(refStr, name.Insecure)
	if err != nil {
		return fmt.Errorf("parsing reference: %w", err)
	}
	co, err := checkOpts(ctx, pubPath, ref)
	if err != nil {
		return err
	}
	if co.NewBundleFormat {
		co.ClaimVerifier = cosign.IntotoSubjectClaimVerifier
		_, _, err = cosign.VerifyImageAttestations(ctx, ref, co, name.Insecure)
	} else {
		co.ClaimVerifier = cosign.SimpleClaimVerifier
		_, _, err = cosign.VerifyImageSignatures(ctx, ref, co)
	}
	return err
}

// verifyAttestation is `cosign verify-attestation --key PUB --type TYPE
// --insecure-ignore-tlog=true REF@DIGEST` (verify_attestation.go
// VerifyAttestationCommand.Exec): VerifyImageAttestations, then at least
// one verified attestation must be of the predicate type
// (pkg/policy/attestation.go AttestationToPayloadJSON).
func verifyAttestation(ctx context.Context, pubPath, refStr, typ string) error {
	ref, err := name.ParseReference(refStr, name.Insecure)
	if err != nil {
		return fmt.Errorf("parsing reference: %w", err)
	}
	co, err := checkOpts(ctx, pubPath, ref)
	if err != nil {
		return err
	}
	co.ClaimVerifier = cosign.IntotoSubjectClaimVerifier
	verified, _, err := cosign.VerifyImageAttestations(ctx, ref, co, name.Insecure)
	if err != nil {
		return err
	}
	uri, err := predicateURI(typ)
	if err != nil {
		return err
	}
	var found []string
	for _, v := range verified {
		got, err := predicateTypeOf(v)
		if err != nil {
			return fmt.Errorf("converting to consumable policy validation: %w", err)
		}
		if got == uri {
			return nil
		}
		found = append(found, got)
	}
	return fmt.Errorf("none of the attestations matched the predicate type: %s, found: %s", typ, strings.Join(found, ","))
}

// predicateTypeOf is the statement's predicateType of a verified
// attestation (policy.AttestationToPayloadJSON): the DSSE payload, base64.
func predicateTypeOf(att oci.Signature) (string, error) {
	p, err := att.Payload()
	if err != nil {
		return "", fmt.Errorf("getting payload: %w", err)
	}
	var env struct {
		Payload string `json:"payload"`
	}
	if err := json.Unmarshal(p, &env); err != nil {
		return "", fmt.Errorf("unmarshaling payload data")
	}
	decoded, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return "", fmt.Errorf("decoding payload: %w", err)
	}
	var st attestation.Statement
	if err := st.UnmarshalJSON(decoded); err != nil {
		return "", fmt.Errorf("unmarshal in-toto statement: %w", err)
	}
	return st.PredicateType, nil
}

// signBlob is `cosign sign-blob --key KEY --tlog-upload=false
// --output-signature SIG FILE` (cmd/cosign/cli/sign/sign_blob.go
// SignBlobCmd, old bundle format): the message signature of a
// cbundle.SignData bundle, base64, written to SIG.
func signBlob(ctx context.Context, keyPath, blobPath, sigPath string) error {
	k, err := loadKeypair(keyPath)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(blobPath)
	if err != nil {
		return fmt.Errorf("reading payload: %w", err)
	}
	_, pb, err := signBundle(ctx, k, &sign.PlainData{Data: data})
	if err != nil {
		return err
	}
	raw, err := bundleSignature(pb)
	if err != nil {
		return err
	}
	return os.WriteFile(sigPath, []byte(base64.StdEncoding.EncodeToString(raw)), 0o600)
}

// verifyBlob is `cosign verify-blob --insecure-ignore-tlog=true --key PUB
// --signature SIG FILE` (cmd/cosign/cli/verify/verify_blob.go
// VerifyBlobCmd.Exec): static.NewSignature over the file with the base64
// signature (base64signature), then cosign.VerifyBlobSignature.
func verifyBlob(ctx context.Context, pubPath, sigPath, blobPath string) error {
	raw, err := os.ReadFile(pubPath)
	if err != nil {
		return err
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(raw)
	if err != nil {
		return fmt.Errorf("loading public key: %w", err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return err
	}
	blob, err := os.ReadFile(blobPath)
	if err != nil {
		return err
	}
	sig, err := os.ReadFile(sigPath)
	if err != nil {
		return err
	}
	b64 := string(sig)
	if _, err := base64.StdEncoding.DecodeString(b64); err != nil {
		b64 = base64.StdEncoding.EncodeToString(sig)
	}
	s, err := static.NewSignature(blob, b64)
	if err != nil {
		return err
	}
	_, err = cosign.VerifyBlobSignature(ctx, s, &cosign.CheckOpts{SigVerifier: v, IgnoreTlog: true})
	return err
}

// listLikeCLI rewrites the referrers tag-schema fallback index of subject
// (the sha256-HEX tag) so that the entries that were not in it before
// (before: their digests) are listed as the real CLI lists them. The
// fallback index is go-containerregistry's (pkg/v1/remote/write.go), and
// the CLI binaries were built with an older one than ferry's go.mod
// selects: go-containerregistry v0.21.7 (cosign v3.1.3's go.mod) lists no
// annotations, which v0.22 copies from the manifest; v0.20 (cosign v2.6.5)
// also took the config's media type, application/vnd.oci.empty.v1+json,
// as the artifactType (emptyType), where v0.21.6+ lists the manifest's own
// (issue 28, observation 2). A registry with the referrers API has no such
// tag: nothing is done.
func listLikeCLI(ctx context.Context, subject name.Digest, before map[string]bool, emptyType bool) error {
	tag, err := fallbackTag(subject)
	if err != nil {
		return err
	}
	desc, err := remote.Get(tag, remote.WithContext(ctx))
	if err != nil {
		return nil // no fallback index: the registry has the referrers API
	}
	var index map[string]any
	if err := json.Unmarshal(desc.Manifest, &index); err != nil {
		return err
	}
	manifests, _ := index["manifests"].([]any)
	for _, m := range manifests {
		e, ok := m.(map[string]any)
		if !ok {
			continue
		}
		if d, _ := e["digest"].(string); before[d] {
			continue
		}
		delete(e, "annotations")
		if emptyType {
			e["artifactType"] = "application/vnd.oci.empty.v1+json"
		}
	}
	raw, err := json.Marshal(index)
	if err != nil {
		return err
	}
	return remote.Put(tag, rawManifest{raw: raw, mediaType: desc.MediaType}, remote.WithContext(ctx))
}

// fallbackDigests are the digests the referrers tag-schema fallback index
// of subject lists now (none when it has none).
func fallbackDigests(ctx context.Context, subject name.Digest) map[string]bool {
	out := map[string]bool{}
	tag, err := fallbackTag(subject)
	if err != nil {
		return out
	}
	idx, err := remote.Index(tag, remote.WithContext(ctx))
	if err != nil {
		return out
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return out
	}
	for _, d := range m.Manifests {
		out[d.Digest.String()] = true
	}
	return out
}

func fallbackTag(subject name.Digest) (name.Tag, error) {
	return name.NewTag(subject.Context().String()+":"+strings.Replace(subject.DigestStr(), ":", "-", 1), name.Insecure)
}

// rawManifest is a manifest put as it is.
type rawManifest struct {
	raw       []byte
	mediaType ggcrtypes.MediaType
}

func (r rawManifest) RawManifest() ([]byte, error)            { return r.raw, nil }
func (r rawManifest) MediaType() (ggcrtypes.MediaType, error) { return r.mediaType, nil }

func parseDigest(ref string) (name.Digest, error) {
	d, err := name.NewDigest(ref, name.Insecure)
	if err != nil {
		return name.Digest{}, fmt.Errorf("parsing reference: %w", err)
	}
	return d, nil
}
