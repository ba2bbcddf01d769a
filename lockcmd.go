package ferry

import (
	"context"

	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/resolve"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/trust"
)

// ResolveOptions are the options of Resolve.
type ResolveOptions struct {
	// Env is the run's environment; required.
	Env *Env
	// Inputs are the roots and settings to resolve; required.
	Inputs *mirrorset.MirrorSet
	Hooks  Hooks
}

// Resolve resolves the closure of o.Inputs, as ferry resolve does: the
// resolution's progress is shown while it runs, and its warnings are
// reported through Env.Warn.
func Resolve(ctx context.Context, o ResolveOptions) (*resolve.Graph, error) {
	o.Hooks.start(progress.Resolution)
	defer o.Hooks.stop()
	g, err := o.Env.Resolve(ctx, o.Inputs, nil, Update{})
	o.Hooks.stop() // the warnings print after the last frame
	if err != nil {
		return nil, err
	}
	o.Env.warnAll(g.Warnings)
	return g, nil
}

// warnAll reports each of msgs through Env.Warn.
func (e *Env) warnAll(msgs []string) {
	for _, m := range msgs {
		e.warn(m)
	}
}

// LockOptions are the options of Lock.
type LockOptions struct {
	// Env is the run's environment; required.
	Env *Env
	// Inputs are the roots and settings to lock; required. Input is the
	// file they were read from ("" for command-line references), Roots
	// the command-line ROOTs, if any.
	Inputs *mirrorset.MirrorSet
	Input  string
	Roots  []string
	// LockPath is the lock to write; LockNamed says it was named
	// explicitly, which lets a run given Roots replace a lock made from
	// other inputs (see GuardLock).
	LockPath  string
	LockNamed bool
	// Update selects the locked versions that may change.
	Update Update
	// Check, when set, runs on the lock there is (nil when none) before
	// anything is resolved: an error stops the run.
	Check func(prev *lock.Lock) error
	// BeforeWrite, when set, runs on the new lock once it passed every
	// check, just before it is written: an error leaves nothing written.
	BeforeWrite func(l *lock.Lock) error
	// SignKey, when set, signs the lock written (LOCK.sig).
	SignKey *signature.PrivateKey
	Trust   TrustOptions
	Hooks   Hooks
}

// LockResult is what Lock wrote.
type LockResult struct {
	Lock  *lock.Lock
	Graph *resolve.Graph
	// Untrusted are the packages no trust rule matches, under
	// trust.default: warn.
	Untrusted []trust.Unmatched
}

// Lock resolves o.Inputs and writes the lock, as ferry lock does: it
// refuses to replace a lock made from other inputs (GuardLock), keeps the
// versions the lock holds except those o.Update selects, checks every
// package against the trust policy (recording its signatures) before
// anything is written, and signs the lock with o.SignKey.
func Lock(ctx context.Context, o LockOptions) (*LockResult, error) {
	env := o.Env
	pol, err := o.Trust.policy(o.Inputs, o.Input)
	if err != nil {
		return nil, err
	}
	prev, err := ReadLockIfExists(o.LockPath)
	if err != nil {
		return nil, err
	}
	if err := GuardLock(prev, o.Inputs, o.Input, o.LockPath, o.Roots, o.LockNamed); err != nil {
		return nil, err
	}
	if o.Check != nil {
		if err := o.Check(prev); err != nil {
			return nil, err
		}
	}
	o.Hooks.start(progress.Resolution) // the closure, then the mixins' downloads
	defer o.Hooks.stop()
	l, graph, err := env.Lock(ctx, o.Inputs, prev, o.Update)
	o.Hooks.stop() // warnings and results print after the last frame
	if err != nil {
		return nil, err
	}
	env.warnAll(graph.Warnings)
	RecordInput(l, o.Input, o.LockPath)
	un, err := env.checkTrustDefault(pol, l) // before the lock is written
	if err != nil {
		return nil, err
	}
	if err := env.CheckTrust(ctx, pol, l, false); err != nil { // before the lock is written
		return nil, err
	}
	if o.BeforeWrite != nil {
		if err := o.BeforeWrite(l); err != nil {
			return nil, err
		}
	}
	if _, err := env.WriteLock(l, o.LockPath, o.SignKey, o.Hooks); err != nil {
		return nil, err
	}
	return &LockResult{Lock: l, Graph: graph, Untrusted: un}, nil
}
