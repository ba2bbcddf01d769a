package mixin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/internal/lazyregexp"
	"github.com/ferryhq/ferry/relocate"
)

// ArtifactType is the artifactType of a mirrored mixin version.
const ArtifactType = "application/vnd.ferry.porter.mixin.v1"

// LayerMediaType is the media type of every binary layer.
const LayerMediaType = "application/octet-stream"

// createdEpoch is the fixed creation time written into every artifact, so
// that pushing the same binaries always gives the same manifest digest.
const createdEpoch = "1970-01-01T00:00:00Z"

// maxManifestSize bounds how much of a manifest is read.
const maxManifestSize = 4 << 20

var tagPattern = lazyregexp.New(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// Tag returns the OCI tag of a mixin version: the version with "+" written
// as "_", as Helm and ferry write semver build metadata in tags.
func Tag(version string) (string, error) {
	t := strings.ReplaceAll(version, "+", "_")
	if !tagPattern.MatchString(t) {
		return "", fmt.Errorf("mixin version %q cannot be written as an OCI tag", version)
	}
	return t, nil
}

// Push pushes the binaries of locked, read from files in dir named by their
// file names, to target as ONE OCI artifact tagged with the version: an
// image manifest v1.1 of artifactType ArtifactType with the empty config and
// one application/octet-stream layer per binary, titled with its file name
// and sorted by title. Files are streamed from disk after being checked
// against the lock; blobs target already has are skipped, and the manifest
// is reproducible, so pushing the same content again changes nothing. It
// returns the manifest's descriptor; the caller records
// REPO@DIGEST as locked.Mirror.
//
// Every write goes through the retrying path packages' blobs take
// (relocate.RetryingTarget, client.RetryPolicy): a push that fails with a
// transient error is tried again within policy, its content re-read from
// the file (or the packed manifest); the zero policy is
// client.DefaultRetryPolicy.
func Push(ctx context.Context, target oras.Target, locked *Locked, dir string, policy client.RetryPolicy) (ocispec.Descriptor, error) {
	if err := locked.Validate(); err != nil {
		return ocispec.Descriptor{}, err
	}
	tag, err := Tag(locked.Version)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	what := "mixin " + locked.Name + " " + locked.Version
	layers := make([]ocispec.Descriptor, 0, len(locked.Binaries))
	for _, k := range locked.Keys() { // sorted by title
		b := locked.Binaries[k]
		desc := ocispec.Descriptor{
			MediaType:   LayerMediaType,
			Digest:      digest.Digest(b.Digest),
			Size:        b.Size,
			Annotations: map[string]string{ocispec.AnnotationTitle: k},
		}
		if err := pushFile(ctx, target, desc, filepath.Join(dir, k), what+": "+k, policy); err != nil {
			return ocispec.Descriptor{}, err
		}
		layers = append(layers, desc)
	}
	// Pack in memory first: a manifest the target already has is not sent
	// again.
	packed := memory.New()
	desc, err := oras.PackManifest(ctx, packed, oras.PackManifestVersion1_1, ArtifactType, oras.PackManifestOptions{
		Layers:              layers,
		ManifestAnnotations: map[string]string{ocispec.AnnotationCreated: createdEpoch},
	})
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s: packing manifest: %w", what, err)
	}
	// The layers are in the target already; CopyGraph sends the empty
	// config and the manifest unless the target has them.
	if err := oras.CopyGraph(ctx, packed, relocate.RetryingTarget(target, packed, policy), desc, oras.DefaultCopyGraphOptions); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s: pushing manifest: %w", what, err)
	}
	if err := tagRetrying(ctx, target, desc, tag, policy); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s: %w", what, err)
	}
	return ocispec.Descriptor{MediaType: desc.MediaType, ArtifactType: desc.ArtifactType, Digest: desc.Digest, Size: desc.Size}, nil
}

// pushFile pushes the file at p as desc unless target already has it. The
// file is hashed first so that a file that differs from the lock is named
// clearly instead of being refused by the registry.
func pushFile(ctx context.Context, target oras.Target, desc ocispec.Descriptor, p, what string, policy client.RetryPolicy) error {
	exists, err := target.Exists(ctx, desc)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if exists {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	want := Binary{Digest: desc.Digest.String(), Size: desc.Size}
	if err := verifyReader(f, what, want); err != nil {
		return err
	}
	// Each try streams the file from its start: a failed upload's body
	// cannot be replayed.
	err = policy.Do(ctx, "pushing "+desc.Digest.String(), func() error {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		err := target.Push(ctx, desc, struct{ io.Reader }{f})
		if errors.Is(err, errdef.ErrAlreadyExists) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: pushing %s: %w", what, desc.Digest, err)
	}
	return nil
}

// tagRetrying tags desc as tag in target unless the tag already points at
// it (a re-run), retrying a transient failure within policy.
func tagRetrying(ctx context.Context, target oras.Target, desc ocispec.Descriptor, tag string, policy client.RetryPolicy) error {
	return policy.Do(ctx, "tagging "+tag, func() error {
		if cur, err := target.Resolve(ctx, tag); err == nil && cur.Digest == desc.Digest {
			return nil
		}
		if err := target.Tag(ctx, desc, tag); err != nil {
			return fmt.Errorf("tagging %s: %w", tag, err)
		}
		return nil
	})
}

// verifyReader reads r to its end and checks it against want.
func verifyReader(r io.Reader, what string, want Binary) error {
	vr := content.NewVerifyReader(r, ocispec.Descriptor{Digest: digest.Digest(want.Digest), Size: want.Size})
	if _, err := io.Copy(io.Discard, vr); err != nil {
		return errkind.Mark(errkind.Mismatch, fmt.Errorf("%s does not match ferry.lock (%s, %d bytes): %w", what, want.Digest, want.Size, err))
	}
	if err := vr.Verify(); err != nil {
		return errkind.Mark(errkind.Mismatch, fmt.Errorf("%s does not match ferry.lock (%s, %d bytes): %w", what, want.Digest, want.Size, err))
	}
	return nil
}

// artifact is a mixin artifact's manifest with its layers by title.
type artifact struct {
	desc     ocispec.Descriptor
	manifest ocispec.Manifest
	layers   map[string]ocispec.Descriptor
}

// readArtifact resolves ref in src and reads the mixin artifact's manifest.
func readArtifact(ctx context.Context, src oras.ReadOnlyTarget, ref string) (*artifact, error) {
	desc, err := src.Resolve(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", ref, err)
	}
	if desc.Size > maxManifestSize {
		return nil, fmt.Errorf("%s: manifest of %d bytes is too large", ref, desc.Size)
	}
	raw, err := content.FetchAll(ctx, src, desc)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", ref, err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: invalid manifest: %w", ref, err)
	}
	if m.ArtifactType != ArtifactType {
		return nil, fmt.Errorf("%s: artifactType %q, want %q: not a mirrored mixin", ref, m.ArtifactType, ArtifactType)
	}
	a := &artifact{desc: desc, manifest: m, layers: map[string]ocispec.Descriptor{}}
	for _, l := range m.Layers {
		title := l.Annotations[ocispec.AnnotationTitle]
		if title == "" {
			continue
		}
		a.layers[title] = l
	}
	return a, nil
}

// layer returns the layer of binary k, checked against the lock.
func (a *artifact) layer(ref, k string, want Binary) (ocispec.Descriptor, error) {
	l, ok := a.layers[k]
	if !ok {
		return ocispec.Descriptor{}, errkind.Mark(errkind.Mismatch, fmt.Errorf("%s: %s is in ferry.lock but not in the mirror artifact %s: %w", ref, k, a.desc.Digest, errMissing))
	}
	if l.Digest.String() != want.Digest || l.Size != want.Size {
		return ocispec.Descriptor{}, errkind.Mark(errkind.Mismatch, fmt.Errorf("%s: %s in the mirror is %s (%d bytes), ferry.lock has %s (%d bytes)", ref, k, l.Digest, l.Size, want.Digest, want.Size))
	}
	return l, nil
}

// artifactRef returns the reference to read locked's artifact by: the
// digest recorded in Mirror when there is one, else the version's tag.
func artifactRef(locked *Locked) (string, error) {
	if _, d, ok := strings.Cut(locked.Mirror, "@"); ok {
		if _, err := digest.Parse(d); err != nil {
			return "", fmt.Errorf("mixin %s: mirror %q: %w", locked.Name, locked.Mirror, err)
		}
		return d, nil
	}
	return Tag(locked.Version)
}

// Pull downloads every binary locked lists from the mixin artifact ref in
// src into dest, named by file name, checking each against the lock (digest
// and size). A binary the artifact lacks is an error, and nothing is
// written unless every binary verifies.
func Pull(ctx context.Context, src oras.ReadOnlyTarget, ref string, locked *Locked, dest string) error {
	if err := locked.Validate(); err != nil {
		return err
	}
	what := "mixin " + locked.Name + " " + locked.Version
	a, err := readArtifact(ctx, src, ref)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	keys := locked.Keys()
	descs := make([]ocispec.Descriptor, len(keys))
	for i, k := range keys {
		if descs[i], err = a.layer(ref, k, locked.Binaries[k]); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	temps := make([]string, 0, len(keys))
	defer func() {
		for _, t := range temps {
			os.Remove(t)
		}
	}()
	for i, k := range keys {
		tmp, err := fetchVerified(ctx, src, descs[i], dest, what+": "+k, locked.Binaries[k], 0o755)
		if err != nil {
			return err
		}
		temps = append(temps, tmp)
	}
	for i, k := range keys {
		if err := os.Rename(temps[i], filepath.Join(dest, k)); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	temps = nil
	return nil
}

// fetchVerified streams the blob desc from src into a temporary file in dir,
// verified against want.
func fetchVerified(ctx context.Context, src oras.ReadOnlyTarget, desc ocispec.Descriptor, dir, what string, want Binary, mode os.FileMode) (string, error) {
	rc, err := src.Fetch(ctx, desc)
	if err != nil {
		return "", fmt.Errorf("%s: fetching %s: %w", what, desc.Digest, err)
	}
	defer rc.Close()
	return writeVerified(rc, dir, what, want, mode)
}
