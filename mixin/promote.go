package mixin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

// ErrNoMirror: a mixin is to be copied from a mirror, and neither the lock
// (nor a signed lock's sidecar) records one for it, nor is one named.
var ErrNoMirror = errors.New("the lock records no mirror to copy it from")

// PrepareFrom reads every mixin of l from a mirror, without the feed, and
// checks it against the lock, before any package is copied: each artifact
// is read from from's HOST/PREFIX/porter-mixins/NAME (or, with from nil,
// the repository the lock records for it), by the digest the lock (or a
// signed lock's sidecar, applied to l) records, else by its version's tag,
// and every binary is checked against the lock (digest and size, see
// Pull). The returned Transfer pushes the artifacts again and records them
// in l's mixins[].mirror. A mixin with no mirror to read is bad input
// (ErrNoMirror, exit code 2); one the mirror lacks or holds otherwise
// fails, naming it.
func (Format) PrepareFrom(ctx context.Context, run *ferry.Run, l *lock.Lock, from *relocate.Mapping) (ferry.Transfer, error) {
	locked, err := FromLock(l)
	if err != nil {
		return nil, err
	}
	b := &batch{client: run.Client, lock: l, locked: locked}
	if len(locked) == 0 {
		return b, nil
	}
	// Every mixin has a mirror to read before any is read.
	type origin struct{ repo, ref string }
	origins := make([]origin, len(locked))
	for i := range locked {
		m := &locked[i]
		repo, ref, err := location(m, from)
		if err != nil {
			return nil, errkind.Mark(errkind.BadInput, err)
		}
		if repo == "" {
			return nil, errkind.Mark(errkind.BadInput, fmt.Errorf("mixin %s %s: %w (mirror: %q)", m.Name, m.Version, ErrNoMirror, m.Mirror))
		}
		origins[i] = origin{repo, ref}
	}
	dir, err := runDir(run)
	if err != nil {
		return nil, err
	}
	base, err := os.MkdirTemp(dir, "from-mirror-")
	if err != nil {
		return nil, fmt.Errorf("mixins: %w", err)
	}
	for i := range locked {
		m := &locked[i]
		src, err := run.Client.Repository(origins[i].repo)
		if err != nil {
			return nil, fmt.Errorf("mixin %s %s: %w", m.Name, m.Version, err)
		}
		sub, err := SafeJoin(base, m.Name, m.Version)
		if err != nil {
			return nil, errkind.Mark(errkind.BadInput, fmt.Errorf("mixin %s %s: %w", m.Name, m.Version, err))
		}
		if err := Pull(ctx, src, origins[i].ref, m, sub); err != nil {
			return nil, fmt.Errorf("copying mixin %s %s from %s: %w", m.Name, m.Version, origins[i].repo, err)
		}
		b.subs = append(b.subs, sub)
	}
	return b, nil
}

// Mirrored reports whether l records a mirror for every mixin it locks
// (true when it locks none).
func (Format) Mirrored(l *lock.Lock) bool {
	locked, err := FromLock(l)
	if err != nil {
		return false
	}
	for _, m := range locked {
		if !strings.Contains(m.Mirror, "@") {
			return false
		}
	}
	return true
}

// sectionMirrors reads and sets mixins[].mirror for a signed lock's
// sidecar (lock.RegisterSectionMirrors): one item per mixin version.
var sectionMirrors = lock.SectionMirrors{
	Get: func(l *lock.Lock) ([]lock.ItemMirror, error) {
		locked, err := FromLock(l)
		if err != nil {
			return nil, err
		}
		var out []lock.ItemMirror
		for _, m := range locked {
			if m.Mirror != "" {
				out = append(out, lock.ItemMirror{Name: m.Name, Version: m.Version, Mirror: m.Mirror})
			}
		}
		return out, nil
	},
	Set: func(l *lock.Lock, items []lock.ItemMirror) error {
		locked, err := FromLock(l)
		if err != nil {
			return err
		}
		at := map[string]string{}
		for _, it := range items {
			at[it.Name+"@"+it.Version] = it.Mirror
		}
		changed := false
		for i := range locked {
			m := &locked[i]
			mirror, ok := at[m.Name+"@"+m.Version]
			if !ok || mirror == m.Mirror {
				continue
			}
			if _, _, err := location(&Locked{Name: m.Name, Version: m.Version, Mirror: mirror}, nil); err != nil {
				return errkind.Mark(errkind.BadInput, err)
			}
			m.Mirror = mirror
			changed = true
		}
		if !changed {
			return nil
		}
		return SetLock(l, locked)
	},
}
