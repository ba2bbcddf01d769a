package mixin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/verify"
)

// location returns the mirror repository of m and the reference to read
// its artifact by: the digest the lock records when there is one, else
// the version's tag. With override, the repository is override's
// HOST/PREFIX/porter-mixins/NAME. It returns "" when m was never mirrored
// and there is no override.
func location(m *Locked, override *relocate.Mapping) (repo, ref string, err error) {
	repo, d, hasDigest := strings.Cut(m.Mirror, "@")
	if override != nil {
		repo = Repo(*override, m.Name)
	}
	if repo == "" {
		return "", "", nil
	}
	if hasDigest {
		if _, err := digest.Parse(d); err != nil {
			return "", "", fmt.Errorf("mixin %s %s: mirror %q: %w", m.Name, m.Version, m.Mirror, err)
		}
		return repo, d, nil
	}
	tag, err := Tag(m.Version)
	return repo, tag, err
}

// Verify checks every mixin of l against the mirror and adds what it
// finds to rep: the artifact's manifest, by the digest the lock records,
// must be there and be a ferry mixin artifact; every locked binary must be
// one of its layers with the locked digest and size, and present in the
// repository; the tag NAME:VERSION must point at the artifact. With
// opts.Deep every binary is downloaded and re-hashed. opts.Mirror reads
// from another mirror. The error is for failures that stop the check, such
// as an unreachable registry or a malformed lock section.
func (Format) Verify(ctx context.Context, run *ferry.Run, l *lock.Lock, opts verify.Options, rep *verify.Report) error {
	locked, err := FromLock(l)
	if err != nil {
		return err
	}
	for i := range locked {
		if err := verifyOne(ctx, run.Client, &locked[i], opts, rep); err != nil {
			return err
		}
	}
	return nil
}

func verifyOne(ctx context.Context, c *client.Client, m *Locked, opts verify.Options, rep *verify.Report) error {
	label := "mixin " + m.Name + " " + m.Version
	problem := func(ref, kind, format string, args ...any) {
		rep.Problems = append(rep.Problems, verify.Problem{Package: label, Ref: ref, Kind: kind, Detail: fmt.Sprintf(format, args...)})
	}
	repoName, ref, err := location(m, opts.Mirror)
	if err != nil {
		problem("", verify.ProblemUnreadable, "%v", err)
		return nil
	}
	if repoName == "" {
		problem("", verify.ProblemNotMirrored, "the lock records no mirror for this mixin: run ferry mirror, or name the mirror to read")
		return nil
	}
	repo, err := c.Repository(repoName)
	if err != nil {
		return err
	}
	byDigest := strings.HasPrefix(ref, "sha256:")
	full := repoName + ":" + ref
	if byDigest {
		full = repoName + "@" + ref
	}
	rep.Manifests++
	desc, rc, err := repo.Manifests().FetchReference(ctx, ref)
	if errors.Is(err, errdef.ErrNotFound) {
		problem(full, verify.ProblemMissing, "the mixin artifact is not in the mirror")
		return nil
	}
	if err != nil {
		return fmt.Errorf("fetching %s: %w", full, err)
	}
	raw, err := io.ReadAll(io.LimitReader(rc, maxManifestSize))
	rc.Close()
	if err != nil {
		problem(full, verify.ProblemUnreadable, "%v", err)
		return nil
	}
	if got := digest.FromBytes(raw); got != desc.Digest || (byDigest && got.String() != ref) {
		problem(full, verify.ProblemDigest, "manifest hashes to %s", got)
		return nil
	}
	var man ocispec.Manifest
	if err := json.Unmarshal(raw, &man); err != nil || man.ArtifactType != ArtifactType {
		problem(full, verify.ProblemUnreadable, "not a ferry mixin artifact (artifactType %q, want %q)", man.ArtifactType, ArtifactType)
		return nil
	}
	layers := map[string]ocispec.Descriptor{}
	for _, ly := range man.Layers {
		layers[ly.Annotations[ocispec.AnnotationTitle]] = ly
	}
	for _, k := range m.Keys() {
		want := m.Binaries[k]
		ly, ok := layers[k]
		if !ok {
			problem(full, verify.ProblemMissing, "binary %s is in the lock but not in the mirror artifact", k)
			continue
		}
		if ly.Digest.String() != want.Digest {
			problem(full, verify.ProblemDigest, "binary %s is %s in the mirror artifact, the lock has %s", k, ly.Digest, want.Digest)
			continue
		}
		if ly.Size != want.Size {
			problem(full, verify.ProblemSize, "binary %s is %d bytes in the mirror artifact, the lock has %d", k, ly.Size, want.Size)
			continue
		}
		rep.Blobs++
		blobRef := repoName + "@" + want.Digest
		bd, err := repo.Blobs().Resolve(ctx, want.Digest)
		if errors.Is(err, errdef.ErrNotFound) {
			problem(blobRef, verify.ProblemMissing, "binary %s is not in the mirror", k)
			continue
		}
		if err != nil {
			return fmt.Errorf("checking %s: %w", blobRef, err)
		}
		if bd.Size != want.Size {
			problem(blobRef, verify.ProblemSize, "binary %s is %d bytes in the mirror, the lock has %d", k, bd.Size, want.Size)
			continue
		}
		if opts.Deep {
			if err := rehash(ctx, repo.Blobs(), ly, func(got digest.Digest, n int64) {
				problem(blobRef, verify.ProblemDigest, "binary %s hashes to %s (%d bytes), the lock has %s", k, got, n, want.Digest)
			}); err != nil {
				return fmt.Errorf("downloading %s: %w", blobRef, err)
			}
		}
	}
	if tag, err := Tag(m.Version); err == nil {
		td, err := repo.Resolve(ctx, tag)
		switch {
		case errors.Is(err, errdef.ErrNotFound):
			problem(repoName+":"+tag, verify.ProblemTag, "tag %s is missing from the mirror", tag)
		case err != nil:
			return fmt.Errorf("resolving %s:%s: %w", repoName, tag, err)
		case td.Digest != desc.Digest:
			problem(repoName+":"+tag, verify.ProblemTag, "tag %s points at %s, the lock has %s", tag, td.Digest, desc.Digest)
		}
	}
	return nil
}

type fetcher interface {
	Fetch(ctx context.Context, target ocispec.Descriptor) (io.ReadCloser, error)
}

// rehash downloads a blob and calls bad when its content does not hash to
// its digest.
func rehash(ctx context.Context, f fetcher, desc ocispec.Descriptor, bad func(got digest.Digest, n int64)) error {
	rc, err := f.Fetch(ctx, desc)
	if err != nil {
		return err
	}
	defer rc.Close()
	h := desc.Digest.Algorithm().Hash()
	n, err := io.Copy(h, rc)
	if got := digest.NewDigest(desc.Digest.Algorithm(), h); got != desc.Digest || n != desc.Size {
		bad(got, n)
		return nil
	}
	return err
}
