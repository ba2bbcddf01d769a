package lock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/errkind"
)

// A lock travels as an OCI artifact (ArtifactType) whose layers are the
// lock and, when they exist, its cosign signature and its mirror sidecar,
// each named by its org.opencontainers.image.title — the layout `oras
// push REF ferry.lock:MediaTypeFile …` writes, so oras pulls it too. A
// Kubernetes Job reads a lock of any size this way, where a ConfigMap
// stops at 1 MiB (about 2,000 packages).
const (
	// ArtifactType is the artifact type of a lock artifact.
	ArtifactType = "application/vnd.ferry.lock.v1"
	// MediaTypeFile is the media type of the lock layer.
	MediaTypeFile = "application/vnd.ferry.lock.v1+yaml"
	// MediaTypeSignature is the media type of the lock's cosign blob
	// signature layer (LOCK.sig).
	MediaTypeSignature = "application/vnd.ferry.lock.signature.v1"
	// MediaTypeMirrors is the media type of the mirror sidecar layer
	// (LOCK.mirror.yaml).
	MediaTypeMirrors = "application/vnd.ferry.lock.mirrors.v1+yaml"
)

// ArtifactScheme prefixes a lock artifact's reference where a lock path
// is expected (--lock oci://HOST/REPO:TAG).
const ArtifactScheme = "oci://"

// maxArtifactManifest caps the manifest of a lock artifact read from a
// registry.
const maxArtifactManifest = 1 << 20

// artifactFiles are the files of a lock artifact: the layer media type
// and the suffix of the file beside the lock.
var artifactFiles = []struct {
	mediaType, suffix string
}{
	{MediaTypeFile, ""},
	{MediaTypeSignature, SignatureSuffix},
	{MediaTypeMirrors, MirrorsSuffix},
}

// ArtifactTarget is where a lock artifact is pushed: a registry
// repository (oras-go's remote.Repository) or an OCI layout.
type ArtifactTarget interface {
	content.Storage
	content.TagResolver
}

// ReadOnlyArtifactTarget is where a lock artifact is read from.
type ReadOnlyArtifactTarget interface {
	content.ReadOnlyStorage
	content.Resolver
}

// IsArtifactRef reports whether a --lock value names a lock artifact.
func IsArtifactRef(s string) bool { return strings.HasPrefix(s, ArtifactScheme) }

// PushArtifact pushes the lock at lockPath, with its signature and mirror
// sidecar when they are beside it, to target as one artifact tagged tag,
// and returns the manifest's descriptor.
func PushArtifact(ctx context.Context, target ArtifactTarget, lockPath, tag string) (ocispec.Descriptor, error) {
	var layers []ocispec.Descriptor
	for _, f := range artifactFiles {
		path := lockPath + f.suffix
		data, err := readCapped(path)
		if errors.Is(err, os.ErrNotExist) && f.suffix != "" {
			continue
		}
		if err != nil {
			return ocispec.Descriptor{}, err
		}
		d := content.NewDescriptorFromBytes(f.mediaType, data)
		d.Annotations = map[string]string{ocispec.AnnotationTitle: filepath.Base(path)}
		if err := pushIfAbsent(ctx, target, d, data); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("pushing %s: %w", filepath.Base(path), err)
		}
		layers = append(layers, d)
	}
	// An OCI 1.1 artifact manifest, as oras.PackManifest writes one: the
	// empty config, the artifact type, the files as layers.
	empty := ocispec.DescriptorEmptyJSON
	if err := pushIfAbsent(ctx, target, empty, empty.Data); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("pushing the lock artifact: %w", err)
	}
	empty.Data = nil
	mb, err := json.Marshal(ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactType,
		Config:       empty,
		Layers:       layers,
	})
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	m := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, mb)
	m.ArtifactType = ArtifactType
	if err := pushIfAbsent(ctx, target, m, mb); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("pushing the lock artifact: %w", err)
	}
	if tag != "" {
		if err := target.Tag(ctx, m, tag); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("tagging the lock artifact %s: %w", tag, err)
		}
	}
	return m, nil
}

// PullArtifact reads the lock artifact reference (a tag or a digest) from
// target into dir, as ferry.lock with ferry.lock.sig and
// ferry.lock.mirror.yaml when the artifact has them, every byte checked
// against the manifest's digests and each file capped at MaxFileSize. It
// returns the lock's path and the manifest's digest. Something that is not
// a lock artifact is errkind.BadInput.
func PullArtifact(ctx context.Context, target ReadOnlyArtifactTarget, reference, dir string) (string, digest.Digest, error) {
	desc, err := target.Resolve(ctx, reference)
	if err != nil {
		if errors.Is(err, errdef.ErrNotFound) {
			return "", "", errkind.Markf(errkind.BadInput, "lock artifact %s: not found: %w", reference, err)
		}
		return "", "", fmt.Errorf("lock artifact %s: %w", reference, err)
	}
	if desc.Size > maxArtifactManifest {
		return "", "", errkind.Markf(errkind.BadInput, "lock artifact %s: a manifest of %d bytes is not a lock artifact", reference, desc.Size)
	}
	mb, err := content.FetchAll(ctx, target, desc)
	if err != nil {
		return "", "", fmt.Errorf("lock artifact %s: %w", reference, err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(mb, &m); err != nil || m.ArtifactType != ArtifactType {
		return "", "", errkind.Markf(errkind.BadInput, "lock artifact %s: artifact type %q, not a ferry lock (%s)", reference, m.ArtifactType, ArtifactType)
	}
	lockPath := filepath.Join(dir, "ferry.lock")
	found := false
	for _, l := range m.Layers {
		for _, f := range artifactFiles {
			if l.MediaType != f.mediaType {
				continue
			}
			if l.Size > MaxFileSize {
				return "", "", errkind.Markf(errkind.BadInput, "lock artifact %s: layer %s of %d bytes is over the %d-byte cap", reference, l.MediaType, l.Size, MaxFileSize)
			}
			data, err := content.FetchAll(ctx, target, l)
			if err != nil {
				return "", "", fmt.Errorf("lock artifact %s: %s: %w", reference, l.MediaType, err)
			}
			if err := WriteFileAtomic(lockPath+f.suffix, data, 0o644); err != nil {
				return "", "", err
			}
			found = found || f.suffix == ""
		}
	}
	if !found {
		return "", "", errkind.Markf(errkind.BadInput, "lock artifact %s has no %s layer", reference, MediaTypeFile)
	}
	return lockPath, desc.Digest, nil
}

func readCapped(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > MaxFileSize {
		return nil, errkind.Markf(errkind.BadInput, "%s: %d bytes is over the %d-byte cap", path, fi.Size(), MaxFileSize)
	}
	return os.ReadFile(path)
}

func pushIfAbsent(ctx context.Context, target content.Storage, d ocispec.Descriptor, data []byte) error {
	ok, err := target.Exists(ctx, d)
	if err != nil || ok {
		return err
	}
	err = target.Push(ctx, d, bytes.NewReader(data))
	if errors.Is(err, errdef.ErrAlreadyExists) {
		return nil
	}
	return err
}
