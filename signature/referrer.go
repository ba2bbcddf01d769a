package signature

import (
	"encoding/json"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// MediaTypeEmpty is the OCI empty descriptor's media type
// (image-spec v1.1 manifest.md "Guidance for an Empty Descriptor"): the
// config of every referrer cosign writes.
const MediaTypeEmpty = "application/vnd.oci.empty.v1+json"

// ArtifactType returns the artifact type of an image manifest as the OCI
// distribution spec's referrers API reports it: its artifactType, else its
// config's mediaType (distribution-spec v1.1 spec.md "Listing
// Referrers"; oras-go v2.6.0 registry/remote/repository.go
// indexReferrersForPush does the same for the tag schema).
func ArtifactType(m ocispec.Manifest) string {
	if m.ArtifactType != "" {
		return m.ArtifactType
	}
	return m.Config.MediaType
}

// ArtifactTypeDecisive reports whether the artifactType of a referrer's
// descriptor, as a referrers listing or its tag-schema fallback index
// gives it, says what the referrer is. It does not when it is empty, or
// when it is the OCI empty media type: go-containerregistry before
// v0.21.6 (cosign v2's) writes the manifest's config.mediaType into the
// fallback index whatever the manifest's artifactType
// (google/go-containerregistry v0.20.7 pkg/v1/remote/write.go
// commitManifest, e075f209120b2467fd1b7d24727f1890a0edb74a), so a Sigstore
// bundle cosign v2 `sign --new-bundle-format` attaches on a registry
// without the referrers API is listed as application/vnd.oci.empty.v1+json.
// The manifest must then be read (ReferrerArtifactType).
func ArtifactTypeDecisive(artifactType string) bool {
	return artifactType != "" && artifactType != MediaTypeEmpty
}

// ReferrerArtifactType returns the artifact type of the referrer
// manifest raw (ArtifactType), or "" when raw is not an image manifest.
func ReferrerArtifactType(raw []byte) string {
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return ""
	}
	return ArtifactType(m)
}

// bundleLayer returns the Sigstore bundle layer of referrer manifest m, as
// cosign reads a referrer when it verifies an image: it lists every
// referrer of the image with no artifactType filter and reads a bundle
// from each manifest that holds exactly one layer whose media type starts
// with application/vnd.dev.sigstore.bundle, ignoring every other referrer
// (sigstore/cosign v3.1.2 pkg/cosign/verify.go GetBundles and
// pkg/oci/remote/signatures.go Bundle,
// 193d2153431f8bb0d945a4c1ee721872f73add67). The index entry's
// artifactType plays no part, so neither does the tag-schema fallback's.
func bundleLayer(m ocispec.Manifest) (ocispec.Descriptor, bool) {
	if len(m.Layers) != 1 || !strings.HasPrefix(m.Layers[0].MediaType, MediaTypeBundlePrefix) {
		return ocispec.Descriptor{}, false
	}
	return m.Layers[0], true
}

// IsBundleManifest reports whether the referrer manifest raw carries a
// Sigstore bundle as cosign reads one (see bundleLayer).
func IsBundleManifest(raw []byte) bool {
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return false
	}
	_, ok := bundleLayer(m)
	return ok
}
