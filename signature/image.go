package signature

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
)

// Cosign's image signature format (sigstore/cosign pkg/types and
// pkg/oci/static; sigstore/sigstore pkg/signature/payload).
const (
	// MediaTypeSimpleSigning is the media type of a signature layer: its
	// blob is the signed payload.
	MediaTypeSimpleSigning = "application/vnd.dev.cosign.simplesigning.v1+json"
	// AnnotationSignature is the layer annotation holding the base64
	// signature over the payload blob.
	AnnotationSignature = "dev.cosignproject.cosign/signature"
	// SimpleSigningType is critical.type in a payload cosign writes.
	SimpleSigningType = "cosign container image signature"
	// TagSuffix ends the tag a manifest's signatures are stored under.
	TagSuffix = ".sig"
)

// Size limits on what is read from a registry.
const (
	maxManifest = 4 << 20
	maxPayload  = 1 << 20
)

// SimpleSigning is the payload cosign signs for a container image (the
// containers/image "simple signing" format).
type SimpleSigning struct {
	Critical Critical       `json:"critical"`
	Optional map[string]any `json:"optional"`
}

// Critical is the signed claim.
type Critical struct {
	Identity SimpleSigningIdentity `json:"identity"`
	Image    SimpleSigningImage    `json:"image"`
	Type     string                `json:"type"`
}

// SimpleSigningIdentity names the repository the image was signed in.
type SimpleSigningIdentity struct {
	DockerReference string `json:"docker-reference"`
}

// SimpleSigningImage names the signed manifest.
type SimpleSigningImage struct {
	DockerManifestDigest string `json:"docker-manifest-digest"`
}

// Tag returns the tag cosign stores the signatures of manifest d under, in
// d's repository: "sha256-HEX.sig".
func Tag(d digest.Digest) string {
	return d.Algorithm().String() + "-" + d.Encoded() + TagSuffix
}

// Repository is what VerifyImage reads; *remote.Repository implements it.
type Repository interface {
	registry.ReferenceFetcher
	Blobs() registry.BlobStore
}

// Verified describes the signatures that verified an image.
type Verified struct {
	// Layer is the first verified classic signature layer's payload
	// digest (empty when only bundles verified).
	Layer digest.Digest
	// Payload is that layer's signed payload.
	Payload SimpleSigning
	// Signatures lists every signature that verified (Verifier.VerifyImage
	// only).
	Signatures []Signature
}

// VerifyImage checks the cosign signatures of manifest d stored in repo
// under Tag(d), as `cosign verify --key` does: at least one signature layer
// must verify with k over its payload blob, and that payload must name d
// as critical.image.docker-manifest-digest. Like cosign, it does not
// compare critical.identity.docker-reference with repo: a mirrored image
// keeps the signature made in its source repository, and the digest is
// what binds the signature to the content. No signature manifest is
// ErrNoSignature; none that verifies is ErrInvalid, naming why for each
// layer; registry failures are returned as they are.
func VerifyImage(ctx context.Context, repo Repository, d digest.Digest, k *PublicKey) (*Verified, error) {
	tag := Tag(d)
	desc, rc, err := repo.FetchReference(ctx, tag)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, missingf("no cosign signature manifest tagged %s", tag)
	}
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", tag, err)
	}
	raw, err := readAllVerified(rc, desc, maxManifest)
	rc.Close()
	if err != nil {
		return nil, invalidf("signature manifest %s: %v", tag, err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, invalidf("%s is not a manifest: %v", tag, err)
	}
	var reasons []string
	for i, layer := range m.Layers {
		v, err := verifyLayer(ctx, repo, layer, d, k)
		if err == nil {
			return v, nil
		}
		if !IsMismatch(err) {
			return nil, err
		}
		reasons = append(reasons, fmt.Sprintf("layer %d: %v", i+1, err))
	}
	if len(reasons) == 0 {
		return nil, invalidf("%s holds no signature layers", tag)
	}
	return nil, invalidf("no signature in %s verifies: %s", tag, strings.Join(reasons, "; "))
}

// verifyLayer checks one signature layer: signature first, then the claim,
// in cosign's order.
func verifyLayer(ctx context.Context, repo Repository, layer ocispec.Descriptor, d digest.Digest, k *PublicKey) (*Verified, error) {
	payload, sig, err := readLayer(ctx, repo, layer)
	if err != nil {
		return nil, err
	}
	if err := k.Verify(payload, sig); err != nil {
		return nil, err
	}
	ss, err := checkClaim(payload, d)
	if err != nil {
		return nil, err
	}
	return &Verified{Layer: layer.Digest, Payload: ss}, nil
}

// readLayer returns a classic signature layer's payload blob and its
// signature annotation, decoded.
func readLayer(ctx context.Context, repo Repository, layer ocispec.Descriptor) (payload, sig []byte, err error) {
	if layer.MediaType != MediaTypeSimpleSigning {
		return nil, nil, invalidf("media type %s is not %s", layer.MediaType, MediaTypeSimpleSigning)
	}
	b64, ok := layer.Annotations[AnnotationSignature]
	if !ok {
		return nil, nil, invalidf("no %s annotation", AnnotationSignature)
	}
	sig, err = base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, nil, invalidf("%s is not base64: %v", AnnotationSignature, err)
	}
	if layer.Size > maxPayload {
		return nil, nil, invalidf("payload %s is %d bytes", layer.Digest, layer.Size)
	}
	rc, err := repo.Blobs().Fetch(ctx, layer)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, nil, invalidf("payload blob %s is missing", layer.Digest)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("fetching signature payload %s: %w", layer.Digest, err)
	}
	payload, err = readAllVerified(rc, layer, maxPayload)
	rc.Close()
	if err != nil {
		return nil, nil, invalidf("payload blob %s: %v", layer.Digest, err)
	}
	return payload, sig, nil
}

// checkClaim reads a verified simple-signing payload and checks that it
// signs d.
func checkClaim(payload []byte, d digest.Digest) (SimpleSigning, error) {
	var ss SimpleSigning
	if err := json.Unmarshal(payload, &ss); err != nil {
		return ss, invalidf("payload is not simple-signing JSON: %v", err)
	}
	if got := ss.Critical.Image.DockerManifestDigest; got != d.String() {
		if got == "" {
			got = "no digest"
		}
		return ss, invalidf("it signs %s (docker-reference %s), not %s", got, ss.Critical.Identity.DockerReference, d)
	}
	return ss, nil
}

// readAllVerified reads rc whole, checking desc's size and digest.
func readAllVerified(rc io.Reader, desc ocispec.Descriptor, limit int64) ([]byte, error) {
	if desc.Size > limit {
		return nil, fmt.Errorf("%d bytes, over the %d-byte limit", desc.Size, limit)
	}
	return content.ReadAll(rc, desc)
}
