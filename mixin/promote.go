package mixin

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

// Promote copies every mixin of l from a mirror to the mixin repositories
// of to, without the feed: each artifact is read from from's
// HOST/PREFIX/porter-mixins/NAME (or, with from nil, the mirror the lock
// records for it) by its recorded digest, every binary is checked against
// the lock (digest and size, see Pull), and the artifact is pushed again
// and recorded in l's mixins[].mirror.
func (Format) Promote(ctx context.Context, run *ferry.Run, l *lock.Lock, from *relocate.Mapping, to relocate.Mapping) ([]ferry.Moved, error) {
	locked, err := FromLock(l)
	if err != nil || len(locked) == 0 {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ferry-mixins-")
	if err != nil {
		return nil, fmt.Errorf("mixins: %w", err)
	}
	defer os.RemoveAll(dir)
	out := make([]ferry.Moved, 0, len(locked))
	for i := range locked {
		m := &locked[i]
		what := "mixin " + m.Name + " " + m.Version
		srcName, ref, ok := strings.Cut(m.Mirror, "@")
		if !ok {
			return nil, exitcode.BadInput("%s: ferry.lock records no mirror to copy it from (mirror: %q)", what, m.Mirror)
		}
		if from != nil {
			srcName = Repo(*from, m.Name)
		}
		src, err := run.Client.Repository(srcName)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		sub := fmt.Sprintf("%s/%d", dir, i)
		if err := Pull(ctx, src, ref, m, sub); err != nil {
			return nil, fmt.Errorf("copying %s from %s: %w", what, srcName, err)
		}
		dstName := Repo(to, m.Name)
		dst, err := run.Client.Repository(dstName)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		desc, err := Push(ctx, dst, m, sub, run.Client.RetryPolicy())
		if err != nil {
			return nil, fmt.Errorf("mirroring %s to %s: %w", what, dstName, err)
		}
		m.Mirror = dstName + "@" + desc.Digest.String()
		out = append(out, moved(m, m.Mirror))
	}
	if err := SetLock(l, locked); err != nil {
		return nil, err
	}
	return out, nil
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
