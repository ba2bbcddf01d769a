package ferry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/relocate"
)

// archiveMixinName names a mixin artifact inside an archive:
// porter-mixins/NAME:TAG.
func archiveMixinName(name, tag string) string {
	return mixin.RepositoryDir + "/" + name + ":" + tag
}

// namedTarget tags into an archive's layout under a mixin's name, so the
// versions of different mixins do not collide.
type namedTarget struct {
	*oci.Store
	name string
}

func (t namedTarget) Tag(ctx context.Context, desc ocispec.Descriptor, ref string) error {
	return t.Store.Tag(ctx, desc, archiveMixinName(t.name, ref))
}

// Archive writes each downloaded mixin version into an archive's layout as
// the same OCI artifact ferry mirror pushes to a registry.
func (b *MixinBatch) Archive(ctx context.Context, store *oci.Store) error {
	for i := range b.lock.Mixins {
		m := &b.lock.Mixins[i]
		if _, err := mixin.Push(ctx, namedTarget{Store: store, name: m.Name}, m, b.subs[i]); err != nil {
			return fmt.Errorf("archiving mixin %s %s: %w", m.Name, m.Version, err)
		}
	}
	return nil
}

// ImportMixins copies the mixin artifacts of an archive into the mirror
// and records REPO@DIGEST in l's mixins[].mirror.
func (e *Env) ImportMixins(ctx context.Context, store *oci.ReadOnlyStore, l *lock.Lock, to relocate.Mapping) ([]MixinResult, error) {
	out := make([]MixinResult, 0, len(l.Mixins))
	for i := range l.Mixins {
		m := &l.Mixins[i]
		tag, err := mixin.Tag(m.Version)
		if err != nil {
			return nil, err
		}
		desc, err := store.Resolve(ctx, archiveMixinName(m.Name, tag))
		if errors.Is(err, errdef.ErrNotFound) {
			return nil, exitcode.Mismatchf("mixin %s %s: the archive does not hold it", m.Name, m.Version)
		}
		if err != nil {
			return nil, err
		}
		if err := checkArchivedMixin(ctx, store, desc, m); err != nil {
			return nil, err
		}
		repoName := MixinRepo(to, m.Name)
		repo, err := e.Client.Repository(repoName)
		if err != nil {
			return nil, err
		}
		if _, err := oras.Copy(ctx, store, archiveMixinName(m.Name, tag), repo, tag, oras.CopyOptions{}); err != nil {
			return nil, fmt.Errorf("importing mixin %s %s into %s: %w", m.Name, m.Version, repoName, err)
		}
		m.Mirror = repoName + "@" + desc.Digest.String()
		out = append(out, MixinResult{Name: m.Name, Version: m.Version, Mirror: m.Mirror, Binaries: len(m.Binaries)})
	}
	return out, nil
}

// checkArchivedMixin fails closed unless the archived artifact holds
// exactly the binaries the lock names, with their digests and sizes.
func checkArchivedMixin(ctx context.Context, store *oci.ReadOnlyStore, desc ocispec.Descriptor, m *lock.Mixin) error {
	raw, err := content.FetchAll(ctx, store, desc)
	if err != nil {
		return fmt.Errorf("mixin %s %s: %w", m.Name, m.Version, err)
	}
	var man ocispec.Manifest
	if err := json.Unmarshal(raw, &man); err != nil {
		return exitcode.Mismatchf("mixin %s %s: the archived artifact is not an image manifest: %w", m.Name, m.Version, err)
	}
	seen := map[string]bool{}
	for _, layer := range man.Layers {
		title := layer.Annotations[ocispec.AnnotationTitle]
		b, ok := m.Binaries[title]
		if !ok || b.Digest != layer.Digest.String() || b.Size != layer.Size {
			return exitcode.Mismatchf("mixin %s %s: archived binary %q (%s, %d bytes) does not match the lock", m.Name, m.Version, title, layer.Digest, layer.Size)
		}
		seen[title] = true
	}
	for name := range m.Binaries {
		if !seen[name] {
			return exitcode.Mismatchf("mixin %s %s: the archive lacks binary %s", m.Name, m.Version, name)
		}
	}
	return nil
}
