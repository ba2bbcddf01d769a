package crossplane

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/klauspost/compress/zstd"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/format"
)

// Layout constants of the xpkg image format.
const (
	// AnnotationKey annotates the layer that holds package.yaml.
	AnnotationKey = "io.crossplane.xpkg"
	// AnnotationBase is AnnotationKey's value on that layer.
	AnnotationBase = "base"
	// PackageFile is the file in that layer holding the package stream.
	PackageFile = "package.yaml"
)

// Size limits that bound what Read fetches.
const (
	// MaxManifestSize bounds a manifest or index Read fetches.
	MaxManifestSize = 4 << 20
	// MaxPackageSize bounds package.yaml, and the size of each layer Read
	// streams through: the base layer, or a layer searched by the
	// flattening fallback (larger layers are skipped by the fallback).
	MaxPackageSize = 64 << 20
	// MaxFallbackLayer bounds the unannotated top layer Read searches for
	// package.yaml.
	MaxFallbackLayer = 4 << 20
)

// Media types Read recognises besides the OCI ones in ocispec.
const (
	mediaTypeDockerManifest     = "application/vnd.docker.distribution.manifest.v2+json"
	mediaTypeDockerManifestList = "application/vnd.docker.distribution.manifest.list.v2+json"
	cnabAnnotation              = "io.cnab.manifest.type"
)

// Reader reads Crossplane packages. It implements format.Reader.
//
// Match decides from the manifest bytes alone:
//   - an OCI or Docker image manifest matches when one of its layers is
//     annotated `io.crossplane.xpkg: base`;
//   - an OCI index or Docker manifest list matches when it could be an
//     xpkg: it has image manifests, no CNAB annotations and no
//     artifactType. Whether it is one is only known after fetching the
//     platform manifest, so Read returns an error wrapping
//     format.ErrNotPackage when that manifest holds no package.yaml
//     (typically an index of plain images), and the resolver then treats
//     the manifest as an opaque artifact.
//
// Read fetches, for an index, the linux/amd64 manifest (else the first
// one that is not an attestation), then the base layer, streaming it
// through gzip (or zstd, or none) and tar until package.yaml. That is at
// most two requests beyond the root manifest the resolver already holds:
// the platform manifest (under an index) and the base layer. Images without
// the annotation (built before it existed) keep package.yaml in their top
// layer: Read searches that layer alone, when it is at most
// MaxFallbackLayer, so a plain image costs at most one small read.
type Reader struct{}

var _ format.Reader = Reader{}

// manifestProbe decodes the fields of a manifest or index Match and Read
// look at.
type manifestProbe struct {
	MediaType    string               `json:"mediaType"`
	ArtifactType string               `json:"artifactType"`
	Config       *ocispec.Descriptor  `json:"config"`
	Layers       []ocispec.Descriptor `json:"layers"`
	Manifests    []ocispec.Descriptor `json:"manifests"`
}

func probe(desc ocispec.Descriptor, manifest []byte) (manifestProbe, string, error) {
	var p manifestProbe
	if err := json.Unmarshal(manifest, &p); err != nil {
		return p, "", fmt.Errorf("decoding manifest %s: %w", desc.Digest, err)
	}
	mt := desc.MediaType
	if mt == "" {
		mt = p.MediaType
	}
	if mt == "" { // schema 2 without mediaType: infer from shape
		switch {
		case p.Manifests != nil:
			mt = ocispec.MediaTypeImageIndex
		case p.Config != nil:
			mt = ocispec.MediaTypeImageManifest
		}
	}
	return p, mt, nil
}

func isImageManifest(mt string) bool {
	return mt == ocispec.MediaTypeImageManifest || mt == mediaTypeDockerManifest
}

func isIndex(mt string) bool {
	return mt == ocispec.MediaTypeImageIndex || mt == mediaTypeDockerManifestList
}

// baseLayer returns the layer annotated as the package's base layer.
func baseLayer(layers []ocispec.Descriptor) (ocispec.Descriptor, bool) {
	for _, l := range layers {
		if l.Annotations[AnnotationKey] == AnnotationBase {
			return l, true
		}
	}
	return ocispec.Descriptor{}, false
}

// Match implements format.Reader; see Reader for the rules.
func (Reader) Match(desc ocispec.Descriptor, manifest []byte) bool {
	p, mt, err := probe(desc, manifest)
	if err != nil {
		return false
	}
	switch {
	case isImageManifest(mt):
		_, ok := baseLayer(p.Layers)
		return ok
	case isIndex(mt):
		if p.ArtifactType != "" {
			return false
		}
		images := 0
		for _, m := range p.Manifests {
			if _, ok := m.Annotations[cnabAnnotation]; ok {
				return false
			}
			if isImageManifest(m.MediaType) {
				images++
			}
		}
		return images > 0
	}
	return false
}

// Read implements format.Reader: it finds package.yaml and returns the
// package's kind, name, dependencies, replaces and Crossplane constraint.
func (Reader) Read(ctx context.Context, repo content.Fetcher, desc ocispec.Descriptor, manifest []byte) (*format.Metadata, error) {
	p, mt, err := probe(desc, manifest)
	if err != nil {
		return nil, err
	}
	if isIndex(mt) {
		plat, ok := pickPlatform(p.Manifests)
		if !ok {
			return nil, fmt.Errorf("index %s has no image manifest: %w", desc.Digest, format.ErrNotPackage)
		}
		b, err := fetchAll(ctx, repo, plat, MaxManifestSize)
		if err != nil {
			return nil, fmt.Errorf("fetching platform manifest %s of index %s: %w", plat.Digest, desc.Digest, err)
		}
		desc, manifest = plat, b
		if p, mt, err = probe(desc, manifest); err != nil {
			return nil, err
		}
	}
	if !isImageManifest(mt) {
		return nil, fmt.Errorf("manifest %s has media type %q, not an image manifest: %w", desc.Digest, mt, format.ErrNotPackage)
	}
	data, err := findPackageYAML(ctx, repo, desc, p.Layers)
	if err != nil {
		return nil, err
	}
	m, err := ParsePackageYAML(data)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", desc.Digest, err)
	}
	return &format.Metadata{
		Kind:         m.FormatKind(),
		Name:         m.Name,
		Dependencies: m.Dependencies(),
		Replaces:     m.Replaces,
		Attributes:   m.attributes(),
	}, nil
}

// pickPlatform picks linux/amd64 from an index, else the first image
// manifest that is not an attestation (platform unknown/unknown), else the
// first image manifest.
func pickPlatform(ms []ocispec.Descriptor) (ocispec.Descriptor, bool) {
	var first, firstReal *ocispec.Descriptor
	for i := range ms {
		m := &ms[i]
		if !isImageManifest(m.MediaType) {
			continue
		}
		if m.Platform != nil && m.Platform.OS == "linux" && m.Platform.Architecture == "amd64" {
			return *m, true
		}
		if first == nil {
			first = m
		}
		if firstReal == nil && (m.Platform == nil || m.Platform.OS != "unknown") {
			firstReal = m
		}
	}
	switch {
	case firstReal != nil:
		return *firstReal, true
	case first != nil:
		return *first, true
	}
	return ocispec.Descriptor{}, false
}

// findPackageYAML reads package.yaml from the base layer, or by flattening
// the layers when none is annotated.
func findPackageYAML(ctx context.Context, repo content.Fetcher, img ocispec.Descriptor, layers []ocispec.Descriptor) ([]byte, error) {
	if base, ok := baseLayer(layers); ok {
		data, found, err := scanLayer(ctx, repo, base)
		if err != nil {
			return nil, fmt.Errorf("image %s: base layer %s: %w", img.Digest, base.Digest, err)
		}
		if !found {
			return nil, fmt.Errorf("image %s: base layer %s (annotated %s: %s) holds no %s", img.Digest, base.Digest, AnnotationKey, AnnotationBase, PackageFile)
		}
		return data, nil
	}
	// Without the annotation (xpkgs built before it existed) package.yaml
	// is in the topmost layer. Only that layer is read, and only when it is
	// small: a plain image is not downloaded whole to find out that it is
	// not a package, and a layer that is not a tar simply holds no package.
	if n := len(layers); n > 0 && layers[n-1].Size <= MaxFallbackLayer {
		data, found, err := scanLayer(ctx, repo, layers[n-1])
		if err == nil && found {
			return data, nil
		}
	}
	return nil, fmt.Errorf("image %s has no layer annotated %s: %s and no %s in its top layer: %w", img.Digest, AnnotationKey, AnnotationBase, PackageFile, format.ErrNotPackage)
}

// fetchAll fetches a small object whole, verifying size and digest.
func fetchAll(ctx context.Context, repo content.Fetcher, desc ocispec.Descriptor, limit int64) ([]byte, error) {
	if desc.Size > limit {
		return nil, fmt.Errorf("%s is %d bytes, over the %d byte limit", desc.Digest, desc.Size, limit)
	}
	rc, err := repo.Fetch(ctx, desc)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", desc.Digest, err)
	}
	defer rc.Close()
	b, err := content.ReadAll(rc, desc)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", desc.Digest, err)
	}
	return b, nil
}

// scanLayer streams one layer looking for package.yaml at its root. It
// reports whether the layer holds the file. The
// whole layer is read and its digest verified before anything is returned.
func scanLayer(ctx context.Context, repo content.Fetcher, l ocispec.Descriptor) (data []byte, found bool, err error) {
	if l.Size > MaxPackageSize {
		return nil, false, fmt.Errorf("layer is %d bytes, over the %d byte limit", l.Size, MaxPackageSize)
	}
	rc, err := repo.Fetch(ctx, l)
	if err != nil {
		return nil, false, fmt.Errorf("fetching: %w", err)
	}
	defer rc.Close()
	vr := content.NewVerifyReader(rc, l)
	tr, closeDecomp, err := decompress(l.MediaType, vr)
	if err != nil {
		return nil, false, err
	}
	defer closeDecomp()
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, fmt.Errorf("reading tar: %w", err)
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "/"))
		switch {
		case name == PackageFile && hdr.Typeflag == tar.TypeReg:
			if hdr.Size > MaxPackageSize {
				return nil, false, fmt.Errorf("%s is %d bytes, over the %d byte limit", PackageFile, hdr.Size, MaxPackageSize)
			}
			b, err := io.ReadAll(io.LimitReader(tr, MaxPackageSize+1))
			if err != nil {
				return nil, false, fmt.Errorf("reading %s: %w", PackageFile, err)
			}
			data, found = b, true
		}
	}
	// Drain what the tar reader left (padding, compressed trailer) so the
	// digest covers the whole blob.
	if _, err := io.Copy(io.Discard, vr); err != nil {
		return nil, false, fmt.Errorf("reading layer: %w", err)
	}
	if err := vr.Verify(); err != nil {
		return nil, false, fmt.Errorf("verifying layer: %w", err)
	}
	return data, found, nil
}

// decompress wraps r in a tar reader, decompressing gzip or zstd when the
// magic bytes say so (media types are not always accurate).
func decompress(mediaType string, r io.Reader) (*tar.Reader, func(), error) {
	br := bufio.NewReader(r)
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("layer (%s): gzip: %w", mediaType, err)
		}
		zr.Multistream(true)
		return tar.NewReader(zr), func() { _ = zr.Close() }, nil
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, fmt.Errorf("layer (%s): zstd: %w", mediaType, err)
		}
		return tar.NewReader(zr), zr.Close, nil
	default:
		return tar.NewReader(br), func() {}, nil
	}
}
