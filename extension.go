package ferry

import (
	"context"
	"fmt"

	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/resolve"
	"github.com/ferryhq/ferry/verify"
)

// Extension is a format that carries content beyond the registry packages
// of the closure (Porter mixin binaries, downloaded from a feed). It owns a
// section of the lock, which it alone reads and writes, and takes part in
// every step that moves or checks content.
type Extension interface {
	// Name is the format's short name.
	Name() string
	// Lock resolves the extension's content for the new lock l, whose
	// packages are already set, from the inputs and the resolved graph,
	// and writes its section into l. prev is the previous lock, or nil.
	Lock(ctx context.Context, run *Run, in *mirrorset.MirrorSet, g *resolve.Graph, l, prev *lock.Lock) error
	// Prepare fetches and checks everything Transfer will carry for l,
	// before any package is copied, so that a mismatch fails closed with
	// nothing written.
	Prepare(ctx context.Context, run *Run, l *lock.Lock) (Transfer, error)
	// Import pushes the extension's content of an archive to the mirror,
	// checking it against the archived lock l, and records the mirror
	// locations in l.
	Import(ctx context.Context, run *Run, store *oci.ReadOnlyStore, l *lock.Lock, to relocate.Mapping) ([]Moved, error)
	// PrepareFrom reads the extension's content of l from a mirror
	// instead of the feed, before any package is copied: from the mirror
	// from names, or (from nil) the one the lock records, by the locked
	// digests, checked against the lock as Prepare checks the feed's. A
	// mirror that lacks the content fails here, with nothing copied. The
	// Transfer pushes it to the new mirror and records the locations in l.
	PrepareFrom(ctx context.Context, run *Run, l *lock.Lock, from *relocate.Mapping) (Transfer, error)
	// Mirrored reports whether l records a mirror for all of the
	// extension's content (true when l holds none), so that PrepareFrom
	// can stand in for a feed that cannot be reached.
	Mirrored(l *lock.Lock) bool
	// Verify checks the extension's content of l in the mirror (override,
	// when set, replaces the mirror the lock records) and adds every
	// problem to rep.
	Verify(ctx context.Context, run *Run, l *lock.Lock, opts verify.Options, rep *verify.Report) error
}

// Transfer is an extension's content for one lock, fetched and checked,
// ready to be pushed to a registry or written into an archive.
type Transfer interface {
	// Push pushes the content to the mirror and records its locations in
	// the lock.
	Push(ctx context.Context, to relocate.Mapping) ([]Moved, error)
	// Archive writes the content into an archive's OCI layout.
	Archive(ctx context.Context, store *oci.Store) error
}

// Moved reports one item an extension mirrored.
type Moved struct {
	// Format is the extension's name.
	Format string `json:"format"`
	// Name and Version identify the item ("exec", "v1.2.3").
	Name    string `json:"name"`
	Version string `json:"version"`
	// Mirror is "REPO@DIGEST" of the item in the mirror.
	Mirror string `json:"mirror"`
	// Files counts the files the item carries.
	Files int `json:"files,omitempty"`
}

// Run is what an extension needs of the run it takes part in.
type Run struct {
	// Client opens registries and carries the HTTP client (TLS, proxy,
	// timeouts) for downloads.
	Client *client.Client
	// Concurrency bounds parallel work.
	Concurrency int
	// Update reports whether an item's locked version may change.
	Update func(name string) bool
	// Downloads returns the run's download directory, created on first
	// use and removed by Env.Close, so one run downloads each file once.
	Downloads func() (string, error)
	// Warn reports a non-fatal finding.
	Warn func(msg string)
	// Reporter shows the progress of the run's downloads; never nil
	// from Env.Run (progress.Discard when nothing is shown).
	Reporter progress.Reporter
}

// Transfers are the extensions' content for one lock, ready to move.
type Transfers []Transfer

// Prepare fetches and checks every extension's content of l before any
// package is copied (see Extension.Prepare).
func (e *Env) Prepare(ctx context.Context, l *lock.Lock) (Transfers, error) {
	var out Transfers
	run := e.Run(Update{})
	for _, x := range e.Extensions() {
		t, err := x.Prepare(ctx, run, l)
		if err != nil {
			return nil, err
		}
		if t != nil {
			out = append(out, t)
		}
	}
	return out, nil
}

// ExtensionCopy is how a mirror run moves the extensions' content of a
// lock (Porter mixins): from the feeds, or from another mirror (Promote);
// either way fetched and checked before any package is copied
// (Transfers).
type ExtensionCopy struct {
	// Transfers is the content, fetched and checked.
	Transfers Transfers
	// Promote is set when the content is copied from a mirror instead of
	// the feeds.
	Promote bool
}

// PrepareMirror fetches and checks the extensions' content of l for a
// mirror run, before any package is copied. With from (mirror to mirror,
// --from) it is read from that mirror (PrepareFrom). Otherwise it is
// fetched from the feeds (Prepare); when a feed cannot be reached
// (Unreachable) and l records a mirror for all of the content, it is read
// from the mirrors the lock records instead, with a warning. toArchive (an
// archive is written, not a registry) never promotes: the archive must
// carry the feed's content. A signed lock's mirror locations are in its
// sidecar: apply it to l first (lock.MirrorRecord.Apply).
func (e *Env) PrepareMirror(ctx context.Context, l *lock.Lock, from *relocate.Mapping, toArchive bool) (*ExtensionCopy, error) {
	if from != nil && !toArchive {
		return e.prepareFrom(ctx, l, from)
	}
	ts, err := e.Prepare(ctx, l)
	if err != nil && !toArchive && Unreachable(err) && e.mirrored(l) {
		e.warn(fmt.Sprintf("the mixin feed cannot be reached (%v): mixins are copied from the mirror ferry.lock records", err))
		return e.prepareFrom(ctx, l, nil)
	}
	if err != nil {
		return nil, err
	}
	return &ExtensionCopy{Transfers: ts}, nil
}

// prepareFrom reads every extension's content of l from a mirror (see
// Extension.PrepareFrom).
func (e *Env) prepareFrom(ctx context.Context, l *lock.Lock, from *relocate.Mapping) (*ExtensionCopy, error) {
	c := &ExtensionCopy{Promote: true}
	run := e.Run(Update{})
	for _, x := range e.Extensions() {
		t, err := x.PrepareFrom(ctx, run, l, from)
		if err != nil {
			return nil, err
		}
		if t != nil {
			c.Transfers = append(c.Transfers, t)
		}
	}
	return c, nil
}

// mirrored reports whether l records a mirror for all of every
// extension's content.
func (e *Env) mirrored(l *lock.Lock) bool {
	for _, x := range e.Extensions() {
		if !x.Mirrored(l) {
			return false
		}
	}
	return true
}

// Push moves the content to the mirror to and records its locations in
// the lock.
func (c *ExtensionCopy) Push(ctx context.Context, to relocate.Mapping) ([]Moved, error) {
	return c.Transfers.Push(ctx, to)
}

// Push pushes every extension's content to the mirror. On a failure it
// returns what moved before it with the error.
func (ts Transfers) Push(ctx context.Context, to relocate.Mapping) ([]Moved, error) {
	var out []Moved
	for _, t := range ts {
		moved, err := t.Push(ctx, to)
		out = append(out, moved...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// Archive writes every extension's content into an archive's layout.
func (ts Transfers) Archive(ctx context.Context, store *oci.Store) error {
	for _, t := range ts {
		if err := t.Archive(ctx, store); err != nil {
			return err
		}
	}
	return nil
}

// Import pushes every extension's content of an archive to the mirror. On
// a failure it returns what moved before it with the error.
func (e *Env) Import(ctx context.Context, store *oci.ReadOnlyStore, l *lock.Lock, to relocate.Mapping) ([]Moved, error) {
	var out []Moved
	run := e.Run(Update{})
	for _, x := range e.Extensions() {
		moved, err := x.Import(ctx, run, store, l, to)
		out = append(out, moved...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// VerifyExtensions checks every extension's content of l in the mirror.
func (e *Env) VerifyExtensions(ctx context.Context, l *lock.Lock, opts verify.Options, rep *verify.Report) error {
	run := e.Run(Update{})
	for _, x := range e.Extensions() {
		if err := x.Verify(ctx, run, l, opts, rep); err != nil {
			return err
		}
	}
	return nil
}
