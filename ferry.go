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
	"sort"
	"strings"
	"sync"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/internal/runblobs"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/resolve"
	"github.com/ferryhq/ferry/sourcemirror"
)

// Env is what every step needs: a registry client, the package formats and
// a concurrency bound.
type Env struct {
	Client *client.Client
	// Formats are the package formats, as registered in package formats.
	Formats     []format.Format
	Concurrency int
	// MetadataConcurrency bounds the registry reads resolution has in
	// flight (resolve.Options.Concurrency; 0: resolve's default).
	MetadataConcurrency int
	// Warn reports non-fatal findings; nil drops them.
	Warn func(msg string)
	// MirrorSources are source mirrors given by flags (--mirror-source
	// HOST=LOCATION), by prefix: they replace ferry.yaml's `mirrors:`
	// entry of the same prefix.
	MirrorSources map[string][]string
	// Offline never reads a source itself, only its mirrors.
	Offline bool
	// Progress, when set, returns the Reporter of the moment: a command
	// switches reporters between its phases (resolution, then transfer),
	// and each step reports to the one current when it begins.
	Progress func() progress.Reporter

	mu        sync.Mutex
	downloads string // the run's downloads, see Run.Downloads
	// registry, when set, opens the repositories resolution reads instead
	// of Client (see Env.ReresolveMirror).
	registry resolve.Repositories
	// mirrors is the run's source mirrors (see Env.sources).
	mirrors *sourcemirror.Table
}

// downloadDir returns the run's directory for downloaded files (mixin
// binaries). Locking and mirroring share it, so a file is downloaded once
// per run.
func (e *Env) downloadDir() (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.downloads == "" {
		dir, err := os.MkdirTemp("", "ferry-downloads-")
		if err != nil {
			return "", fmt.Errorf("downloads: %w", err)
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

// reporter returns the Reporter of the moment (see Env.Progress).
func (e *Env) reporter() progress.Reporter {
	if e.Progress == nil {
		return progress.Discard
	}
	return progress.Or(e.Progress())
}

// Run returns what an extension needs of this run; update selects the
// items whose locked version may change.
func (e *Env) Run(update Update) *Run {
	return &Run{Client: e.Client, Concurrency: e.Concurrency, Update: update.Selects, Downloads: e.downloadDir, Warn: e.warn, Reporter: e.reporter()}
}

// warn reports msg through e.Warn, when set.
func (e *Env) warn(msg string) {
	if e.Warn != nil {
		e.Warn(msg)
	}
}

// Extensions returns the formats that carry content beyond packages.
func (e *Env) Extensions() []Extension {
	var out []Extension
	for _, f := range e.Formats {
		if x, ok := f.(Extension); ok {
			out = append(out, x)
		}
	}
	return out
}

// Configurable is a format whose rules take settings from the inputs
// (ferry.yaml `porter: {versionStrategy}`, `crossplane:
// {defaultRegistry}`).
type Configurable interface {
	format.Format
	// Configure returns the format set up for ms.
	Configure(ms *mirrorset.MirrorSet) (format.Format, error)
}

// configured returns the formats set up for ms.
func (e *Env) configured(ms *mirrorset.MirrorSet) ([]format.Format, error) {
	out := make([]format.Format, 0, len(e.Formats))
	for _, f := range e.Formats {
		if c, ok := f.(Configurable); ok {
			cf, err := c.Configure(ms)
			if err != nil {
				// A format's settings that do not hold (a bad
				// porter.versionStrategy, from ferry.yaml or the
				// environment) are bad input (exit 2), however the
				// inputs were given.
				return nil, errkind.Mark(errkind.BadInput, err)
			}
			f = cf
		}
		out = append(out, f)
	}
	return out, nil
}

// Writers returns the formats that write files of their own into an
// install directory, set up for ms (the lock's inputs; nil when they are
// not here).
func (e *Env) Writers(ms *mirrorset.MirrorSet) ([]install.Writer, error) {
	if ms == nil {
		ms = &mirrorset.MirrorSet{}
	}
	fs, err := e.configured(ms)
	if err != nil {
		return nil, err
	}
	var out []install.Writer
	for _, f := range fs {
		if w, ok := f.(install.Writer); ok {
			out = append(out, w)
		}
	}
	return out, nil
}

// Resolve resolves a MirrorSet. Versions locked in prev are kept while
// they satisfy every constraint, except for the sources update selects.
func (e *Env) Resolve(ctx context.Context, ms *mirrorset.MirrorSet, prev *lock.Lock, update Update) (*resolve.Graph, error) {
	return e.resolve(ctx, ms, prev, update, nil)
}

// resolve is Resolve, giving the small blobs resolution reads to blobs
// (nil keeps none): a mirror run's copy takes them from there.
func (e *Env) resolve(ctx context.Context, ms *mirrorset.MirrorSet, prev *lock.Lock, update Update, blobs *runblobs.Cache) (*resolve.Graph, error) {
	formats, err := e.configured(ms)
	if err != nil {
		return nil, err
	}
	regs, table, err := e.readRegistries(ms)
	if err != nil {
		return nil, err
	}
	opts := resolve.Options{
		Registry:    regs,
		Formats:     formats,
		Concurrency: e.MetadataConcurrency,
		Use:         map[string]resolve.Use{},
		Replace:     ms.ReplaceMap(),
		Progress:    e.reporter(),
		Blobs:       blobs,
	}
	for k, u := range ms.Use {
		opts.Use[k] = resolve.Use{Ref: u.Ref, Force: u.Force}
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
	roots, err := ms.AllRoots(formats)
	if err != nil {
		return nil, err
	}
	g, err := resolve.Resolve(ctx, roots, opts)
	if err != nil {
		return nil, err
	}
	if table != nil {
		for _, p := range g.Packages {
			p.ReadFrom = table.ReadFrom(p.Source, p.Descriptor.Digest.String())
		}
	}
	return g, nil
}

// Mirrors returns the source mirrors of a run: ms's `mirrors:` (ms may be
// nil) with the flags' entries (MirrorSources) over them, offline when
// Offline is set.
func (e *Env) Mirrors(ms *mirrorset.MirrorSet) (*sourcemirror.Table, error) {
	byPrefix := map[string][]string{}
	if ms != nil {
		for k, v := range ms.Mirrors {
			byPrefix[k] = v
		}
	}
	for k, v := range e.MirrorSources {
		byPrefix[k] = v
	}
	keys := make([]string, 0, len(byPrefix))
	for k := range byPrefix {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	entries := make([]sourcemirror.Entry, 0, len(keys))
	for _, k := range keys {
		entries = append(entries, sourcemirror.Entry{Prefix: k, Locations: byPrefix[k]})
	}
	t, err := sourcemirror.New(entries, e.Offline)
	if err != nil {
		return nil, errkind.Mark(errkind.BadInput, err)
	}
	return t, nil
}

// Sources returns what packages are read with: the registry client, or,
// with source mirrors (see Mirrors), a Registries that reads each source
// from its mirrors first while it keeps its name. Resolution and every
// copy from the sources (relocate.Options.Source) use it.
func (e *Env) Sources(ms *mirrorset.MirrorSet) (format.Registries, error) {
	regs, _, err := e.sources(ms)
	return regs, err
}

// The first call of a run builds its Table, which later calls share
// (whatever ms they pass): one run reads one set of inputs, and the
// Table records where each package was read.
func (e *Env) sources(ms *mirrorset.MirrorSet) (format.Registries, *sourcemirror.Table, error) {
	e.mu.Lock()
	t := e.mirrors
	e.mu.Unlock()
	if t == nil {
		nt, err := e.Mirrors(ms)
		if err != nil {
			return nil, nil, err
		}
		e.mu.Lock()
		if e.mirrors == nil {
			e.mirrors = nt
		}
		t = e.mirrors
		e.mu.Unlock()
	}
	if t.Empty() {
		return e.Client, nil, nil
	}
	return sourcemirror.Registries{Inner: e.Client, Table: t}, t, nil
}

// readRegistries returns what resolution opens repositories with: the
// mirror alone when verifying it (ReresolveMirror), else Sources.
func (e *Env) readRegistries(ms *mirrorset.MirrorSet) (resolve.Repositories, *sourcemirror.Table, error) {
	if e.registry != nil {
		return e.registry, nil, nil
	}
	return e.sources(ms)
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

// Lock resolves ms and returns the new lock, with what every extension
// adds to it (the Porter mixins). Mirror locations recorded in prev are
// kept for packages whose digest did not change.
func (e *Env) Lock(ctx context.Context, ms *mirrorset.MirrorSet, prev *lock.Lock, update Update) (*lock.Lock, *resolve.Graph, error) {
	return e.lock(ctx, ms, prev, update, nil)
}

// lock is Lock, resolving with blobs (see Env.resolve).
func (e *Env) lock(ctx context.Context, ms *mirrorset.MirrorSet, prev *lock.Lock, update Update, blobs *runblobs.Cache) (*lock.Lock, *resolve.Graph, error) {
	g, err := e.resolve(ctx, ms, prev, update, blobs)
	if err != nil {
		return nil, nil, err
	}
	l := lock.FromGraph(g, ms.Digest())
	if prev != nil {
		// By source and digest, once: a lookup per package in prev
		// would grow with the square of the closure.
		mirrors := make(map[[2]string]string, len(prev.Packages))
		for _, old := range prev.Packages {
			k := [2]string{old.Source, old.Digest}
			if _, dup := mirrors[k]; !dup {
				mirrors[k] = old.Mirror
			}
		}
		for i := range l.Packages {
			p := &l.Packages[i]
			if m, ok := mirrors[[2]string{p.Source, p.Digest}]; ok {
				p.Mirror = m
			}
		}
	}
	run := e.Run(update)
	for _, x := range e.Extensions() {
		if err := x.Lock(ctx, run, ms, g, l, prev); err != nil {
			return nil, nil, err
		}
	}
	formats, err := e.configured(ms)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range formats {
		if r, ok := f.(LockRecorder); ok {
			if err := r.RecordLock(ms, g, l); err != nil {
				return nil, nil, err
			}
		}
	}
	return l, g, nil
}

// LockRecorder is a format that records in a lock section of its own
// (lock.RegisterSection) what its inputs say about the closure beyond
// its packages: the KUDO format, the instances a local operator package,
// which is not itself locked, creates with its tasks (their names and
// parameter files), so that ferry install can write them from the lock
// alone.
type LockRecorder interface {
	format.Format
	// RecordLock writes the format's section of l, made from the inputs
	// ms and their resolved graph g (whose RootID maps each root to its
	// package).
	RecordLock(ms *mirrorset.MirrorSet, g *resolve.Graph, l *lock.Lock) error
}
