package mixin

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

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/relocate"
)

// Repo returns the mirror repository of a mixin:
// HOST/PREFIX/porter-mixins/NAME (HOST/PREFIX/porter-mixins-NAME with
// to.Flatten).
func Repo(to relocate.Mapping, name string) string {
	return to.Join(RepositoryDir + "/" + name)
}

// Prepare downloads every binary of every mixin of l again, from the URLs
// the lock records, into the run's download directory (binaries Lock
// already downloaded in this run are not fetched twice), and checks each
// against the lock: a binary whose digest or size differs fails closed
// (the error carries errkind.Mismatch and names the file). Nothing is
// pushed yet: the returned Transfer pushes or archives them.
func (Format) Prepare(ctx context.Context, run *ferry.Run, l *lock.Lock) (ferry.Transfer, error) {
	locked, err := FromLock(l)
	if err != nil {
		return nil, err
	}
	b := &batch{client: run.Client, lock: l, locked: locked}
	if len(locked) == 0 {
		return b, nil
	}
	dir, err := runDir(run)
	if err != nil {
		return nil, err
	}
	ctx = progress.NewContext(ctx, run.Reporter) // the downloads' bars
	hc := run.Client.HTTPClient()
	for i := range locked {
		m := &locked[i]
		sub, err := SafeJoin(dir, m.Name, m.Version)
		if err == nil {
			err = FetchLocked(ctx, hc, m, sub, allowPlainHTTP)
		} else {
			err = errkind.Mark(errkind.BadInput, fmt.Errorf("mixin %s %s: %w", m.Name, m.Version, err))
		}
		if err != nil {
			return nil, err
		}
		b.subs = append(b.subs, sub)
	}
	return b, nil
}

// batch holds the binaries of every mixin of a lock, downloaded and
// verified by Prepare.
type batch struct {
	client *client.Client
	lock   *lock.Lock
	locked []Locked
	subs   []string
}

// Push pushes each mixin version as one OCI artifact to
// HOST/PREFIX/porter-mixins/NAME:VERSION and records REPO@DIGEST in the
// lock's mixins[].mirror once every push succeeded.
func (b *batch) Push(ctx context.Context, to relocate.Mapping) ([]ferry.Moved, error) {
	if len(b.locked) == 0 {
		return nil, nil
	}
	out := make([]ferry.Moved, 0, len(b.locked))
	mirrors := make([]string, len(b.locked))
	for i := range b.locked {
		m := &b.locked[i]
		repoName := Repo(to, m.Name)
		repo, err := b.client.Repository(repoName)
		if err != nil {
			return nil, fmt.Errorf("mixin %s %s: %w", m.Name, m.Version, err)
		}
		desc, err := Push(ctx, repo, m, b.subs[i], b.client.RetryPolicy())
		if err != nil {
			return nil, fmt.Errorf("mirroring mixin %s %s to %s: %w", m.Name, m.Version, repoName, err)
		}
		mirrors[i] = repoName + "@" + desc.Digest.String()
		out = append(out, moved(m, mirrors[i]))
	}
	for i := range b.locked {
		b.locked[i].Mirror = mirrors[i]
	}
	if err := SetLock(b.lock, b.locked); err != nil {
		return nil, err
	}
	return out, nil
}

func moved(m *Locked, mirror string) ferry.Moved {
	return ferry.Moved{Format: "mixin", Name: m.Name, Version: m.Version, Mirror: mirror, Files: len(m.Binaries)}
}

// archiveName names a mixin artifact inside an archive:
// porter-mixins/NAME:TAG.
func archiveName(name, tag string) string {
	return RepositoryDir + "/" + name + ":" + tag
}

// namedTarget tags into an archive's layout under a mixin's name, so the
// versions of different mixins do not collide.
type namedTarget struct {
	*oci.Store
	name string
}

// Tag tags desc as porter-mixins/NAME:ref.
func (t namedTarget) Tag(ctx context.Context, desc ocispec.Descriptor, ref string) error {
	return t.Store.Tag(ctx, desc, archiveName(t.name, ref))
}

// Archive writes each downloaded mixin version into an archive's layout
// as the same OCI artifact Push pushes to a registry, tagged
// porter-mixins/NAME:VERSION.
func (b *batch) Archive(ctx context.Context, store *oci.Store) error {
	for i := range b.locked {
		m := &b.locked[i]
		if _, err := Push(ctx, namedTarget{Store: store, name: m.Name}, m, b.subs[i], client.RetryPolicy{Attempts: 1}); err != nil {
			return fmt.Errorf("archiving mixin %s %s: %w", m.Name, m.Version, err)
		}
	}
	return nil
}

// Import copies the mixin artifacts of an archive into the mirror, after
// checking that each holds exactly the binaries the archived lock l names
// (else errkind.Mismatch), and records REPO@DIGEST in l's
// mixins[].mirror.
func (Format) Import(ctx context.Context, run *ferry.Run, store *oci.ReadOnlyStore, l *lock.Lock, to relocate.Mapping) ([]ferry.Moved, error) {
	locked, err := FromLock(l)
	if err != nil || len(locked) == 0 {
		return nil, err
	}
	out := make([]ferry.Moved, 0, len(locked))
	for i := range locked {
		m := &locked[i]
		tag, err := Tag(m.Version)
		if err != nil {
			return nil, err
		}
		desc, err := store.Resolve(ctx, archiveName(m.Name, tag))
		if errors.Is(err, errdef.ErrNotFound) {
			return nil, errkind.Markf(errkind.Mismatch, "mixin %s %s: the archive does not hold it", m.Name, m.Version)
		}
		if err != nil {
			return nil, fmt.Errorf("mixin %s %s: %w", m.Name, m.Version, err)
		}
		if err := checkArchived(ctx, store, desc, m); err != nil {
			return nil, err
		}
		repoName := Repo(to, m.Name)
		repo, err := run.Client.Repository(repoName)
		if err != nil {
			return nil, err
		}
		// The retrying path every registry write takes.
		policy := run.Client.RetryPolicy()
		if err := oras.CopyGraph(ctx, store, relocate.RetryingTarget(repo, store, policy), desc, oras.DefaultCopyGraphOptions); err != nil {
			return nil, fmt.Errorf("importing mixin %s %s into %s: %w", m.Name, m.Version, repoName, err)
		}
		if err := tagRetrying(ctx, repo, desc, tag, policy); err != nil {
			return nil, fmt.Errorf("importing mixin %s %s into %s: %w", m.Name, m.Version, repoName, err)
		}
		m.Mirror = repoName + "@" + desc.Digest.String()
		out = append(out, moved(m, m.Mirror))
	}
	if err := SetLock(l, locked); err != nil {
		return nil, err
	}
	return out, nil
}

// checkArchived fails closed unless the archived artifact holds exactly
// the binaries the lock names, with their digests and sizes.
func checkArchived(ctx context.Context, store *oci.ReadOnlyStore, desc ocispec.Descriptor, m *Locked) error {
	raw, err := content.FetchAll(ctx, store, desc)
	if err != nil {
		return fmt.Errorf("mixin %s %s: %w", m.Name, m.Version, err)
	}
	var man ocispec.Manifest
	if err := json.Unmarshal(raw, &man); err != nil {
		return errkind.Markf(errkind.Mismatch, "mixin %s %s: the archived artifact is not an image manifest: %w", m.Name, m.Version, err)
	}
	seen := map[string]bool{}
	for _, layer := range man.Layers {
		title := layer.Annotations[ocispec.AnnotationTitle]
		b, ok := m.Binaries[title]
		if !ok || b.Digest != layer.Digest.String() || b.Size != layer.Size {
			return errkind.Markf(errkind.Mismatch, "mixin %s %s: archived binary %q (%s, %d bytes) does not match the lock", m.Name, m.Version, title, layer.Digest, layer.Size)
		}
		seen[title] = true
	}
	for _, name := range m.Keys() {
		if !seen[name] {
			return errkind.Markf(errkind.Mismatch, "mixin %s %s: the archive lacks binary %s", m.Name, m.Version, name)
		}
	}
	return nil
}
