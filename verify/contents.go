package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/manifest"
)

// kinded is a format that says which package kinds it reads.
type kinded interface {
	Kinds() []string
}

// checkContents checks the lock against the package itself at the
// mirror (Contents), reading the blobs the run just re-hashed from memory.
func (c *checker) checkContents(ctx context.Context, repo *remote.Repository, repoName string, p *lock.Package, root ocispec.Descriptor) error {
	if len(c.opts.Formats) == 0 || c.rootRaw == nil {
		return nil
	}
	ref := repoName + "@" + root.Digest.String()
	for _, f := range Contents(ctx, smallBlobs{h: c.hashes, next: repo}, c.opts.Formats, p, root, c.rootRaw) {
		c.problem(ref, f.Kind, "%s", f.Detail)
	}
	return nil
}

// Contents checks the lock's record of package p against the package
// itself, the other way round from lock.Package.CheckImages: its root
// manifest (root, with its bytes raw) is read again by the format that
// claims it (format.Reader, as resolution read it, with what else it
// reads taken from fetcher), and the lock must record the kind that
// format gives it, or, when no format claims it, an opaque kind (an
// artifact or an image); and every image the format finds in it (a Porter
// bundle's invocation and component images) must be in images[]. An
// entry deleted from images[] would otherwise leave that image out of
// install's relocation mapping, and an edited kind would install the
// package as something else. Only a format whose packages carry images
// (format.ImageCarrier) reads the package; any other's kinds are judged
// by its Match. It returns each disagreement as a Problem of kind
// ProblemKind, ProblemImage or ProblemUnreadable (Package and Ref unset).
func Contents(ctx context.Context, fetcher content.Fetcher, formats []format.Format, p *lock.Package, root ocispec.Descriptor, raw []byte) []Problem {
	var out []Problem
	add := func(kind, f string, args ...any) {
		out = append(out, Problem{Kind: kind, Detail: fmt.Sprintf(f, args...)})
	}
	// The bytes decide the media type, not the lock (verify reports a
	// difference on its own).
	if mt, err := manifest.MediaType(raw); err == nil {
		root.MediaType = mt
	}
	for _, f := range formats {
		r, ok := f.(format.Reader)
		if !ok || !r.Match(root, raw) {
			continue
		}
		if _, carries := f.(format.ImageCarrier); !carries {
			// The format's kinds are enough to judge the kind; reading
			// the package again (a chart's archive) is not needed.
			if k, ok := f.(kinded); ok && !slices.Contains(k.Kinds(), p.Kind) {
				// Match may claim what is not the format's package (a
				// Crossplane reader claims any index of images, the
				// form a multi-platform xpkg takes): before reporting a
				// disagreement, the format reads it, and a plain image
				// index is left to the other formats.
				if _, err := r.Read(ctx, fetcher, root, raw); errors.Is(err, format.ErrNotPackage) {
					continue
				}
				add(ProblemKind, "the manifest is a %s package (%s), the lock has kind %q", f.Name(), strings.Join(k.Kinds(), " or "), p.Kind)
			}
			return out
		}
		meta, err := r.Read(ctx, fetcher, root, raw)
		if errors.Is(err, format.ErrNotPackage) {
			continue
		}
		if err != nil {
			add(ProblemUnreadable, "reading the package as %s: %v", f.Name(), err)
			return out
		}
		if meta.Kind != p.Kind {
			add(ProblemKind, "the manifest is a %s package (%s), the lock has kind %q", meta.Kind, f.Name(), p.Kind)
		}
		for _, im := range meta.Images {
			if im.Descriptor.Digest == "" {
				continue
			}
			if !slices.ContainsFunc(p.Images, func(x lock.Image) bool { return x.Digest == im.Descriptor.Digest.String() }) {
				add(ProblemImage, "the package carries image %s@%s, which the lock's images[] does not record", im.Name, im.Descriptor.Digest)
			}
		}
		return out
	}
	// No format claims it: an opaque artifact, which the lock may record
	// as the kind a parent gave it (an image a chart deploys), but not as
	// a kind some format reads.
	for _, f := range formats {
		if k, ok := f.(kinded); ok && slices.Contains(k.Kinds(), p.Kind) {
			add(ProblemKind, "the lock has kind %q, but no %s package is there (%s)", p.Kind, f.Name(), describe(root))
		}
	}
	return out
}

// describe names a manifest for a message: its media type and artifact
// type.
func describe(d ocispec.Descriptor) string {
	parts := []string{d.MediaType}
	if d.ArtifactType != "" {
		parts = append(parts, "artifactType "+d.ArtifactType)
	}
	return fmt.Sprint(strings.Join(parts, ", "))
}

// maxSmallBlob bounds the blobs a deep verification keeps in memory once
// re-hashed (config blobs: a bundle's bundle.json), so that checkContents
// reads none of them twice.
const maxSmallBlob = 256 << 10

// smallBlobs serves the blobs the run re-hashed and kept, and reads any
// other from next.
type smallBlobs struct {
	h    *hashes
	next content.Fetcher
}

// Fetch returns desc's bytes from memory when the run kept them.
func (s smallBlobs) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	if b := s.h.small(desc.Digest); b != nil && int64(len(b)) == desc.Size {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return s.next.Fetch(ctx, desc)
}
