package porter

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/format"
)

// Media types and annotations of the cnab-to-oci layout.
const (
	// MediaTypeCNABConfig is the media type of bundle.json as a config blob.
	MediaTypeCNABConfig = "application/vnd.cnab.config.v1+json"
	// MediaTypeDockerManifestList is a Docker manifest list, the fallback
	// cnab-to-oci pushes to registries that refuse OCI indexes.
	MediaTypeDockerManifestList = "application/vnd.docker.distribution.manifest.list.v2+json"
	// MediaTypeDockerManifest is a Docker schema2 image manifest.
	MediaTypeDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
	// MediaTypeDockerConfig is a Docker schema2 image config, the last
	// config fallback of cnab-to-oci.
	MediaTypeDockerConfig = "application/vnd.docker.container.image.v1+json"
	// ArtifactTypeCNAB is the index's `org.opencontainers.artifactType`.
	ArtifactTypeCNAB = "application/vnd.cnab.manifest.v1"

	// AnnotationManifestType tells what an index entry is: one of the
	// ManifestType constants.
	AnnotationManifestType = "io.cnab.manifest.type"
	// AnnotationComponentName names a component image entry.
	AnnotationComponentName = "io.cnab.component.name"
	// AnnotationRuntimeVersion is the index's CNAB runtime version.
	AnnotationRuntimeVersion = "io.cnab.runtime_version"
	// AnnotationArtifactType is the index's artifact type annotation.
	AnnotationArtifactType = "org.opencontainers.artifactType"

	// ManifestTypeConfig marks the config manifest (bundle.json).
	ManifestTypeConfig = "config"
	// ManifestTypeInvocation marks the invocation image.
	ManifestTypeInvocation = "invocation"
	// ManifestTypeComponent marks a component image.
	ManifestTypeComponent = "component"
)

// Reader reads Porter bundles published in the cnab-to-oci layout. It
// implements format.Reader.
type Reader struct {
	// Strategy is the version strategy for dependencies with a range;
	// empty: StrategyExact, Porter's default.
	Strategy VersionStrategy
	// outside collects, across one resolution, the requests whose tag
	// version strategy exact locked outside their declared range, for
	// CheckGraph to report; set by Configure.
	outside *outsideRange
	// roots are the interface documents of a porter.yaml ROOT's
	// dependencies, set by Configure.
	roots *[]rootInterface
}

var _ format.Reader = Reader{}

// index is an OCI image index or a Docker manifest list.
type index struct {
	MediaType   string               `json:"mediaType"`
	Manifests   []ocispec.Descriptor `json:"manifests"`
	Annotations map[string]string    `json:"annotations"`
}

func parseIndex(desc ocispec.Descriptor, manifest []byte) (*index, bool) {
	mt := desc.MediaType
	var ix index
	if err := json.Unmarshal(manifest, &ix); err != nil {
		return nil, false
	}
	if mt == "" {
		mt = ix.MediaType
	}
	if mt != ocispec.MediaTypeImageIndex && mt != MediaTypeDockerManifestList {
		return nil, false
	}
	return &ix, true
}

// configDescriptor returns the index entry holding bundle.json: the one
// annotated `io.cnab.manifest.type: config`, else manifests[0] of an index
// annotated as a CNAB artifact.
func (ix *index) configDescriptor() (ocispec.Descriptor, bool) {
	for _, m := range ix.Manifests {
		if m.Annotations[AnnotationManifestType] == ManifestTypeConfig {
			return m, true
		}
	}
	if ix.Annotations[AnnotationArtifactType] == ArtifactTypeCNAB && len(ix.Manifests) > 0 {
		return ix.Manifests[0], true
	}
	return ocispec.Descriptor{}, false
}

// Match reports whether manifest is a cnab-to-oci index: an OCI index or
// Docker manifest list with an entry annotated `io.cnab.manifest.type:
// config` (or annotated as a CNAB artifact). It fetches nothing.
func (Reader) Match(desc ocispec.Descriptor, manifest []byte) bool {
	ix, ok := parseIndex(desc, manifest)
	if !ok {
		return false
	}
	_, ok = ix.configDescriptor()
	return ok
}

// imageManifest is an OCI or Docker schema2 image manifest.
type imageManifest struct {
	MediaType string             `json:"mediaType"`
	Config    ocispec.Descriptor `json:"config"`
}

// Read fetches the config manifest and its config blob (bundle.json), two
// requests, and returns the bundle's metadata. An index that turns out not
// to hold a CNAB config fails with an error wrapping format.ErrNotPackage.
// The metadata's Data is the bundle's *Declarations.
func (Reader) Read(ctx context.Context, repo content.Fetcher, desc ocispec.Descriptor, manifest []byte) (*format.Metadata, error) {
	b, ix, _, err := readBundle(ctx, repo, desc, manifest)
	if err != nil {
		return nil, err
	}
	return metadata(b, ix)
}

// readBundle fetches and parses the bundle.json of the cnab-to-oci index
// desc (manifest its bytes), and returns its bytes too.
func readBundle(ctx context.Context, repo content.Fetcher, desc ocispec.Descriptor, manifest []byte) (*Bundle, *index, []byte, error) {
	ix, ok := parseIndex(desc, manifest)
	if !ok {
		return nil, nil, nil, fmt.Errorf("porter bundle %s: not an OCI image index or Docker manifest list: %w", desc.Digest, format.ErrNotPackage)
	}
	cfgDesc, ok := ix.configDescriptor()
	if !ok {
		return nil, nil, nil, fmt.Errorf("porter bundle %s: no index entry annotated %s: %s: %w", desc.Digest, AnnotationManifestType, ManifestTypeConfig, format.ErrNotPackage)
	}
	cfgManifest, err := fetchCapped(ctx, repo, cfgDesc, MaxManifestSize)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("porter bundle %s: fetching config manifest %s: %w", desc.Digest, cfgDesc.Digest, err)
	}
	var im imageManifest
	if err := json.Unmarshal(cfgManifest, &im); err != nil {
		return nil, nil, nil, fmt.Errorf("porter bundle %s: config manifest %s: %w", desc.Digest, cfgDesc.Digest, err)
	}
	switch im.Config.MediaType {
	case MediaTypeCNABConfig, ocispec.MediaTypeImageConfig, MediaTypeDockerConfig:
	default:
		return nil, nil, nil, fmt.Errorf("porter bundle %s: config manifest %s: config media type %q is not a CNAB config: %w", desc.Digest, cfgDesc.Digest, im.Config.MediaType, format.ErrNotPackage)
	}
	if err := im.Config.Digest.Validate(); err != nil {
		return nil, nil, nil, fmt.Errorf("porter bundle %s: config manifest %s: config digest: %w", desc.Digest, cfgDesc.Digest, err)
	}
	blob, err := fetchCapped(ctx, repo, im.Config, MaxBundleSize)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("porter bundle %s: fetching bundle.json %s: %w", desc.Digest, im.Config.Digest, err)
	}
	b, err := parseBundle(blob, "bundle.json in "+im.Config.Digest.String())
	if err != nil {
		return nil, nil, nil, err
	}
	return b, ix, blob, nil
}

// Caps on what Read fetches whole: a descriptor stating more is refused
// before a byte is read. oras-go caps manifests at 4 MiB too
// (registry/remote/repository.go, defaultMaxMetadataBytes).
var (
	// MaxManifestSize caps the bundle's config manifest.
	MaxManifestSize int64 = 4 << 20
	// MaxBundleSize caps bundle.json.
	MaxBundleSize int64 = 16 << 20
)

// fetchCapped fetches desc whole, verifying its size and digest, unless it
// states more than limit bytes.
func fetchCapped(ctx context.Context, repo content.Fetcher, desc ocispec.Descriptor, limit int64) ([]byte, error) {
	if desc.Size > limit || desc.Size < 0 {
		return nil, fmt.Errorf("%s states %d bytes, over the %d-byte limit", desc.Digest, desc.Size, limit)
	}
	return content.FetchAll(ctx, repo, desc)
}

// metadata builds the resolver's view of bundle b published with index ix.
// Its Data is the bundle's *Declarations, for the PEP003 interface check
// (Declarations.Missing) after resolution.
func metadata(b *Bundle, ix *index) (*format.Metadata, error) {
	deps, err := b.Dependencies()
	if err != nil {
		return nil, err
	}
	decl, err := b.Declarations()
	if err != nil {
		return nil, err
	}
	mixins, warnings := b.Mixins()
	md := &format.Metadata{
		Kind:         format.KindPorterBundle,
		Name:         b.Name,
		Version:      b.Version,
		Dependencies: deps,
		Mixins:       mixins,
		Warnings:     warnings,
		Data:         decl,
	}
	// Porter publishes a bundle as REGISTRY/NAME:vVERSION (getporter/porter
	// docs/content/development/distribute-bundles.md), so a bundle found
	// under another semver tag was moved there.
	md.TaggedByVersion = true

	var invocation []ocispec.Descriptor
	components := map[string]ocispec.Descriptor{}
	byDigest := map[digest.Digest]ocispec.Descriptor{}
	for _, m := range ix.Manifests {
		byDigest[m.Digest] = m
		switch m.Annotations[AnnotationManifestType] {
		case ManifestTypeInvocation:
			invocation = append(invocation, m)
		case ManifestTypeComponent:
			if n := m.Annotations[AnnotationComponentName]; n != "" {
				components[n] = m
			}
		}
	}
	// locate finds an image in the index: by annotation, else by the
	// digest bundle.json records, else from bundle.json's own fields.
	locate := func(im Image, annotated ocispec.Descriptor, found bool) ocispec.Descriptor {
		if found {
			return annotated
		}
		if d, ok := byDigest[digest.Digest(im.ContentDigest)]; ok && im.ContentDigest != "" {
			return d
		}
		return ocispec.Descriptor{MediaType: im.MediaType, Digest: digest.Digest(im.ContentDigest), Size: im.Size}
	}
	for i, im := range b.InvocationImages {
		name := ManifestTypeInvocation
		if i > 0 {
			name = fmt.Sprintf("%s-%d", ManifestTypeInvocation, i)
		}
		var annotated ocispec.Descriptor
		found := i < len(invocation)
		if found {
			annotated = invocation[i]
		}
		md.Images = append(md.Images, format.Image{Name: name, Ref: im.Image, Descriptor: locate(im, annotated, found)})
	}
	names := make([]string, 0, len(b.Images))
	for n := range b.Images {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		im := b.Images[n]
		annotated, found := components[n]
		md.Images = append(md.Images, format.Image{Name: n, Ref: im.Image, Descriptor: locate(im, annotated, found)})
	}
	return md, nil
}
