package lock

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/manifest"
)

// ImageError reports images a package records that are not in the graph
// under its root manifest: the lock names content the package does not
// carry, so the mirror could not hold it and relocation-mapping.json
// would point at nothing (or at something else).
type ImageError struct {
	// Package is the package's source.
	Package string
	// Digest is the package's root manifest digest.
	Digest string
	// Images are the images not found, as NAME@DIGEST.
	Images []string
}

func (e *ImageError) Error() string {
	return fmt.Sprintf("package %s@%s: the lock records image %s, not in the package's manifest graph: the lock was edited or does not match the registry",
		e.Package, e.Digest, strings.Join(e.Images, ", "))
}

// CheckImages checks that every image the package records (images[].digest)
// is the digest of a descriptor in the graph under the package's root
// manifest. inGraph reports whether a digest is in that graph; callers
// that walked it already (verify, relocate, install) pass what they
// collected, others use WalkGraph. The error is an *ImageError naming the
// package and every image missing, with exit code 3 (errkind.Mismatch).
//
// A Porter bundle's images are manifests in the bundle's index
// (cnab-to-oci's layout: porter/reader.go locates them there by
// annotation or digest); Crossplane packages and artifacts record none.
func (p *Package) CheckImages(inGraph func(d digest.Digest) bool) error {
	var missing []string
	for _, im := range p.Images {
		if !inGraph(digest.Digest(im.Digest)) {
			missing = append(missing, im.Name+"@"+im.Digest)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return errkind.Mark(errkind.Mismatch, &ImageError{Package: p.Source, Digest: p.Digest, Images: missing})
}

// MaxGraphManifests bounds the manifests WalkGraph fetches for one package.
var MaxGraphManifests = 10000

// maxManifestBytes bounds one manifest WalkGraph reads (oras-go's default
// MaxMetadataBytes is 4 MiB too).
const maxManifestBytes = 4 << 20

// WalkGraph fetches the package's root manifest from fetcher and every
// manifest under it (not blobs), each checked against its descriptor's
// digest and size, and returns the digests of every descriptor in the
// graph, the root's included: the set CheckImages needs,
//
//	set, err := p.WalkGraph(ctx, repo)
//	if err == nil { err = p.CheckImages(func(d digest.Digest) bool { return set[d] }) }
//
// A child is walked when its media type is a manifest or index (OCI or
// Docker schema2).
func (p *Package) WalkGraph(ctx context.Context, fetcher content.Fetcher) (map[digest.Digest]bool, error) {
	seen := map[digest.Digest]bool{}
	root := p.Descriptor()
	seen[root.Digest] = true
	queue := []ocispec.Descriptor{root}
	fetched := 0
	for len(queue) > 0 {
		desc := queue[0]
		queue = queue[1:]
		if fetched++; fetched > MaxGraphManifests {
			return nil, fmt.Errorf("package %s: more than %d manifests under %s", p.Source, MaxGraphManifests, root.Digest)
		}
		if desc.Size > maxManifestBytes {
			return nil, fmt.Errorf("package %s: manifest %s of %d bytes is too large", p.Source, desc.Digest, desc.Size)
		}
		raw, err := content.FetchAll(ctx, fetcher, desc)
		if err != nil {
			return nil, fmt.Errorf("package %s: fetching manifest %s: %w", p.Source, desc.Digest, err)
		}
		children, err := manifest.Children(raw)
		if err != nil {
			return nil, fmt.Errorf("package %s: manifest %s: %w", p.Source, desc.Digest, err)
		}
		for _, c := range children {
			if seen[c.Digest] {
				continue
			}
			seen[c.Digest] = true
			if manifest.IsManifest(c.MediaType) {
				queue = append(queue, c)
			}
		}
	}
	return seen, nil
}

// IsImageError reports whether err is, or wraps, an *ImageError.
func IsImageError(err error) bool {
	var e *ImageError
	return errors.As(err, &e)
}
