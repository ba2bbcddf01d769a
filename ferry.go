// Package ferry ties the pipeline together: resolve a MirrorSet into a
// graph, lock it, mirror it, verify it and install it. Each step is a
// package of its own (resolve, lock, relocate, verify, install); this
// package holds the few decisions that join them, so the CLI stays a thin
// layer of flags.
package ferry

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/resolve"
)

// Env is what every step needs: a registry client, the package formats and
// a concurrency bound.
type Env struct {
	Client      *client.Client
	Formats     []format.Reader
	Concurrency int

	mu        sync.Mutex
	downloads string // the run's mixin binaries, see mixinDir
}

// mixinDir returns the run's directory for mixin binaries. Locking and
// mirroring share it, so a binary is downloaded once per run.
func (e *Env) mixinDir() (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.downloads == "" {
		dir, err := os.MkdirTemp("", "ferry-mixins-")
		if err != nil {
			return "", fmt.Errorf("mixins: %w", err)
		}
		e.downloads = dir
	}
	return e.downloads, nil
}

// Close removes what the run downloaded.
func (e *Env) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.downloads == "" {
		return nil
	}
	err := os.RemoveAll(e.downloads)
	e.downloads = ""
	return err
}

// Resolve resolves a MirrorSet. Versions locked in prev are kept while
// they satisfy every constraint, except for the sources update selects.
func (e *Env) Resolve(ctx context.Context, ms *mirrorset.MirrorSet, prev *lock.Lock, update Update) (*resolve.Graph, error) {
	opts := resolve.Options{
		Registry:    e.Client,
		Formats:     e.Formats,
		Concurrency: e.Concurrency,
		Use:         ms.Use,
		Replace:     ms.ReplaceMap(),
	}
	if prev != nil && !update.All {
		opts.Locked = prev.Locked()
		opts.Update = update.Selects
	}
	if prev != nil {
		opts.Replaced = map[string]string{}
		for _, p := range prev.Packages {
			if p.ReplacedBy != "" {
				opts.Replaced[p.Source] = p.ReplacedBy
			}
		}
	}
	return resolve.Resolve(ctx, ms.Roots(), opts)
}

// Update selects which locked versions may change: all of them, or the
// named ones. A name matches a source exactly or by its last path element.
type Update struct {
	All   bool
	Names []string
}

// Selects reports whether source's locked version may change.
func (u Update) Selects(source string) bool {
	if u.All {
		return true
	}
	for _, n := range u.Names {
		if n == source || filepath.Base(source) == n || strings.HasSuffix(source, "/"+n) {
			return true
		}
	}
	return false
}

// Lock resolves ms and returns the new lock, with the Porter mixins of ms
// and of the resolved bundles (see LockMixins). Mirror locations recorded in
// prev are kept for packages whose digest did not change.
func (e *Env) Lock(ctx context.Context, ms *mirrorset.MirrorSet, prev *lock.Lock, update Update) (*lock.Lock, *resolve.Graph, error) {
	g, err := e.Resolve(ctx, ms, prev, update)
	if err != nil {
		return nil, nil, err
	}
	l := lock.FromGraph(g, ms.Digest())
	if prev != nil {
		for i := range l.Packages {
			p := &l.Packages[i]
			if old := prev.Package(p.Source); old != nil && old.Digest == p.Digest {
				p.Mirror = old.Mirror
			}
		}
	}
	mixins, err := e.LockMixins(ctx, ms, g, prev, update)
	if err != nil {
		return nil, nil, err
	}
	l.Mixins = mixins
	return l, g, nil
}
