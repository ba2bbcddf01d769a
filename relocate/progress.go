package relocate

import (
	"context"
	"io"
	"path"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/progress"
)

// ReportProgress makes a copy of a graph into dst (oras.CopyGraph with
// opts, from the storage it returns) tell rep of every blob: started
// (PreCopy), its bytes as they are read from src, and how it got there
// (PostCopy: copied, OnMounted: mounted, OnCopySkipped: skipped). The
// callbacks opts already has still run, after rep is told; what is copied
// does not change.
func ReportProgress(rep progress.Reporter, dst string, src content.ReadOnlyStorage, opts *oras.CopyGraphOptions) content.ReadOnlyStorage {
	pre, post, skipped, mounted := opts.PreCopy, opts.PostCopy, opts.OnCopySkipped, opts.OnMounted
	opts.PreCopy = func(ctx context.Context, desc ocispec.Descriptor) error {
		rep.BlobStarted(blobID(dst, desc), blobLabel(dst, desc), desc.Size)
		if pre != nil {
			return pre(ctx, desc)
		}
		return nil
	}
	opts.PostCopy = func(ctx context.Context, desc ocispec.Descriptor) error {
		rep.BlobDone(blobID(dst, desc), progress.Copied)
		if post != nil {
			return post(ctx, desc)
		}
		return nil
	}
	opts.OnCopySkipped = func(ctx context.Context, desc ocispec.Descriptor) error {
		rep.BlobDone(blobID(dst, desc), progress.Skipped)
		if skipped != nil {
			return skipped(ctx, desc)
		}
		return nil
	}
	opts.OnMounted = func(ctx context.Context, desc ocispec.Descriptor) error {
		rep.BlobDone(blobID(dst, desc), progress.Mounted)
		if mounted != nil {
			return mounted(ctx, desc)
		}
		return nil
	}
	return counted{ReadOnlyStorage: src, rep: rep, dst: dst}
}

// blobID names desc's copy into dst for a progress.Reporter: the same blob
// may travel to several repositories at once.
func blobID(dst string, desc ocispec.Descriptor) string {
	return dst + " " + desc.Digest.String()
}

// blobLabel is what a progress bar shows for desc's copy into dst: the
// last element of the destination and the digest's first 12 hex digits.
func blobLabel(dst string, desc ocispec.Descriptor) string {
	enc := desc.Digest.Encoded()
	if len(enc) > 12 {
		enc = enc[:12]
	}
	return path.Base(dst) + " " + enc
}

// counted reports the bytes read from an origin to a progress.Reporter.
// The bytes themselves pass through untouched.
type counted struct {
	content.ReadOnlyStorage
	rep progress.Reporter
	dst string
}

func (c counted) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	rc, err := c.ReadOnlyStorage.Fetch(ctx, desc)
	if err != nil {
		return nil, err
	}
	return progress.NewReader(rc, c.rep, blobID(c.dst, desc)), nil
}
