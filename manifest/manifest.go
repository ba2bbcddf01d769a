// Package manifest judges a manifest by its bytes: its digest is computed
// from what arrived, and its media type read from its content, never
// taken from the registry's Content-Type or Docker-Content-Digest headers,
// which only ever confirm it. Content that is not a JSON manifest (an
// HTML error page served with status 200) is refused.
package manifest

import (
	"bytes"
	_ "crypto/sha512" // registers SHA-512 with go-digest: registries may announce it
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

// Manifest media types ocispec does not define.
const (
	// MediaTypeDockerManifest is a Docker schema2 image manifest.
	MediaTypeDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
	// MediaTypeDockerManifestList is a Docker schema2 manifest list.
	MediaTypeDockerManifestList = "application/vnd.docker.distribution.manifest.list.v2+json"
	// MediaTypeArtifactManifest is the OCI artifact manifest of image-spec
	// v1.1 release candidates, which oras-go still reads.
	MediaTypeArtifactManifest = "application/vnd.oci.artifact.manifest.v1+json"
)

// ErrNotManifest is wrapped by the errors of content that is not a
// manifest or index.
var ErrNotManifest = errors.New("not an OCI or Docker manifest")

// ErrDigest is wrapped by the errors of content that does not hash to the
// digest asked for or announced. It is also oras-go's
// content.ErrMismatchedDigest (errors.Is), so that every digest mismatch
// of fetched bytes exits with code 3 (exitcode.Of).
var ErrDigest error = digestError{}

type digestError struct{}

func (digestError) Error() string { return "manifest content does not match its digest" }

// Is makes the error oras-go's content.ErrMismatchedDigest too.
func (digestError) Is(target error) bool { return target == content.ErrMismatchedDigest }

// IsManifest reports whether mediaType is a manifest or an index.
func IsManifest(mediaType string) bool {
	return IsIndex(mediaType) || IsImageManifest(mediaType) || mediaType == MediaTypeArtifactManifest
}

// IsIndex reports whether mediaType is an OCI index or Docker manifest list.
func IsIndex(mediaType string) bool {
	return mediaType == ocispec.MediaTypeImageIndex || mediaType == MediaTypeDockerManifestList
}

// IsImageManifest reports whether mediaType is an OCI or Docker image
// manifest.
func IsImageManifest(mediaType string) bool {
	return mediaType == ocispec.MediaTypeImageManifest || mediaType == MediaTypeDockerManifest
}

// shape decodes what MediaType looks at. Raw messages tell a field that
// is absent (nil) from one that is empty.
type shape struct {
	SchemaVersion *int            `json:"schemaVersion"`
	MediaType     *string         `json:"mediaType"`
	Manifests     json.RawMessage `json:"manifests"`
	Config        json.RawMessage `json:"config"`
	Layers        json.RawMessage `json:"layers"`
	Blobs         json.RawMessage `json:"blobs"`
	FSLayers      json.RawMessage `json:"fsLayers"`
}

// MediaType returns the media type of a manifest from its content: its
// `mediaType` field, checked against its shape; when the field is absent,
// inferred from the shape as image-spec allows (`manifests` → OCI index;
// `config` → OCI image manifest). It follows containerd's and moby's
// detection (buildkit util/imageutil DetectManifestBlobMediaType; moby
// daemon/containerd detectManifestBlobMediaType), except that Docker
// schema2, whose specification requires `mediaType`, is never inferred,
// and schema1 is refused. Content that is not a JSON object, or has no
// manifest's shape, is an error wrapping ErrNotManifest.
func MediaType(raw []byte) (string, error) {
	var s shape
	trimmed := bytes.TrimLeftFunc(raw, unicode.IsSpace)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return "", fmt.Errorf("%w: the content is not JSON (it starts %s)", ErrNotManifest, quoteStart(raw))
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: %v", ErrNotManifest, err)
	}
	if s.FSLayers != nil {
		return "", fmt.Errorf("%w: a Docker schema1 manifest, which registries no longer serve: push the image again", ErrNotManifest)
	}
	isIndex := s.Manifests != nil
	isImage := s.Config != nil || s.Layers != nil
	if isIndex && isImage {
		return "", fmt.Errorf("%w: it has both manifests (an index) and config or layers (an image manifest)", ErrNotManifest)
	}
	if s.MediaType == nil || *s.MediaType == "" {
		if s.SchemaVersion == nil || *s.SchemaVersion != 2 {
			return "", fmt.Errorf("%w: no mediaType and no schemaVersion 2", ErrNotManifest)
		}
		switch {
		case isIndex:
			return ocispec.MediaTypeImageIndex, nil
		case s.Config != nil:
			return ocispec.MediaTypeImageManifest, nil
		}
		return "", fmt.Errorf("%w: no mediaType, and neither manifests nor config", ErrNotManifest)
	}
	mt := *s.MediaType
	switch {
	case IsIndex(mt):
		if isImage {
			return "", fmt.Errorf("%w: mediaType %s but it has config or layers", ErrNotManifest, mt)
		}
	case IsImageManifest(mt):
		if isIndex || s.Config == nil {
			return "", fmt.Errorf("%w: mediaType %s but it has no config, or has manifests", ErrNotManifest, mt)
		}
	case mt == MediaTypeArtifactManifest:
		if isIndex || isImage {
			return "", fmt.Errorf("%w: mediaType %s but it has manifests, config or layers", ErrNotManifest, mt)
		}
	default:
		return "", fmt.Errorf("%w: mediaType %q", ErrNotManifest, mt)
	}
	return mt, nil
}

// quoteStart quotes the first bytes of raw for a message.
func quoteStart(raw []byte) string {
	const n = 32
	s := string(raw)
	if len(s) > n {
		s = s[:n] + "…"
	}
	s = strings.ToValidUTF8(s, "?")
	return fmt.Sprintf("%q", s)
}

// Describe returns the descriptor of the manifest raw as ferry records it:
// the digest of raw, its length and its media type from its content
// (MediaType). asked is the digest it was fetched by ("" when fetched by
// tag); announced is the digest the registry sent (Docker-Content-Digest,
// or oras-go's descriptor, "" when none). raw must hash to each of them
// that is set, each in its own algorithm, else the error wraps ErrDigest.
// The digest recorded is in asked's algorithm, else announced's, else
// SHA-256. contentType is the Content-Type the registry sent, only for
// the message when raw is not a manifest.
func Describe(raw []byte, asked, announced digest.Digest, contentType string) (ocispec.Descriptor, error) {
	for _, want := range []digest.Digest{asked, announced} {
		if err := want.Validate(); want != "" && err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("%w: %q: %v", ErrDigest, want, err)
		}
	}
	alg := digest.Canonical
	switch {
	case asked != "":
		alg = asked.Algorithm()
	case announced != "":
		alg = announced.Algorithm()
	}
	for _, want := range []digest.Digest{asked, announced} {
		if want == "" {
			continue
		}
		if got := want.Algorithm().FromBytes(raw); got != want {
			return ocispec.Descriptor{}, fmt.Errorf("%w: the %d bytes received hash to %s, not %s", ErrDigest, len(raw), got, want)
		}
	}
	mt, err := MediaType(raw)
	if err != nil {
		if contentType != "" {
			err = fmt.Errorf("%w (the registry sent it as %s)", err, contentType)
		}
		return ocispec.Descriptor{}, err
	}
	return ocispec.Descriptor{MediaType: mt, Digest: alg.FromBytes(raw), Size: int64(len(raw))}, nil
}

// Children returns the descriptors a manifest or index names: its
// manifests, config, layers and blobs (not its subject, which it points
// up to). Each must carry a valid digest.
func Children(raw []byte) ([]ocispec.Descriptor, error) {
	var m struct {
		Manifests []ocispec.Descriptor `json:"manifests"`
		Config    *ocispec.Descriptor  `json:"config"`
		Layers    []ocispec.Descriptor `json:"layers"`
		Blobs     []ocispec.Descriptor `json:"blobs"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotManifest, err)
	}
	out := append([]ocispec.Descriptor(nil), m.Manifests...)
	if m.Config != nil {
		out = append(out, *m.Config)
	}
	out = append(out, m.Layers...)
	out = append(out, m.Blobs...)
	for _, d := range out {
		if err := d.Digest.Validate(); err != nil {
			return nil, fmt.Errorf("descriptor digest %q: %w", d.Digest, err)
		}
	}
	return out, nil
}
