package ferry

import (
	"context"
	"fmt"
	"strings"
	"time"

	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/internal/runblobs"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/trust"
)

// MirrorOptions are the options of Mirror. One of To (a registry),
// ToArchive or FromArchive (with To) names where the closure goes.
type MirrorOptions struct {
	// Env is the run's environment; required.
	Env *Env
	// LockPath is the lock to mirror and to write.
	LockPath string
	// Inputs, when set, are resolved and locked first, keeping the
	// versions the lock at LockPath holds; nil mirrors that lock as it
	// is. Input is the file they were read from, Roots the command-line
	// ROOTs, LockNamed whether LockPath was named explicitly (see
	// GuardLock).
	Inputs    *mirrorset.MirrorSet
	Input     string
	Roots     []string
	LockNamed bool
	// Config is the settings file whose source mirrors apply to a lock
	// mirrored as it is, and whose lock.requireSigned applies to an
	// import (default: the ferry.yaml beside the lock).
	Config string
	// Settings are the format settings given apart from the input file,
	// applied when the lock's input file is read again (Env.Inputs).
	Settings *mirrorset.MirrorSet
	Trust    TrustOptions

	// To is the mirror HOST[/PREFIX] (default: the inputs' mirror.to).
	To string
	// ToArchive writes the closure into this tar archive instead;
	// Archive shapes it (an incremental archive since an older lock,
	// parts of a maximum size), and SincePath names that older lock in
	// progress lines.
	ToArchive string
	Archive   relocate.ArchiveOptions
	SincePath string
	// FromArchive pushes an archive written with ToArchive to To.
	// LockKey, when set, refuses it before anything is pushed unless its
	// lock signature verifies.
	FromArchive string
	LockKey     *signature.PublicKey
	// From reads every package and extension item from this mirror
	// instead of the sources (mirror to mirror).
	From *relocate.Mapping
	// Shard copies one part of the lock (see relocate.MirrorShard),
	// waiting up to ShardWait for the other shards' blobs.
	Shard     *relocate.Shard
	ShardWait time.Duration
	// SignKey signs the lock written.
	SignKey *signature.PrivateKey
	// Flatten joins each repository path below To's namespace into one
	// component (relocate.Mapping.Flatten), for registries that take
	// NAMESPACE/NAME only.
	Flatten bool
	// AllowBrokenReferences lets through a layout that breaks partially
	// qualified dependency references, listed in the report instead
	// (relocate.Options.AllowBrokenReferences).
	AllowBrokenReferences bool
	// AllowDowngrade imports an archive whose lock is older (a lower
	// serial) than the lock at LockPath; refused otherwise
	// (*lock.DowngradeError, a mismatch).
	AllowDowngrade bool
	Hooks          Hooks
}

// MirrorResult is what Mirror did.
type MirrorResult struct {
	// Lock is the lock mirrored, with its mirror locations.
	Lock   *lock.Lock
	Report *relocate.Report
	// Wrote says what was written of the lock: "lock F", or for a signed
	// lock left as it is, where its mirror locations went.
	Wrote string
	// Untrusted are the packages no trust rule matches, carried
	// unchecked (trust.default: warn).
	Untrusted []trust.Unmatched
}

// ErrNoDestination is a mirror run with nowhere to copy to: no To, no
// ToArchive and no mirror.to in the inputs. It is bad input.
var ErrNoDestination = errkind.BadInputError("mirror needs a destination")

// SignedLockChangedError refuses a run that would change a signed lock
// without a key to sign the new one, before anything is copied. It is
// bad input.
type SignedLockChangedError struct{ Lock string }

func (e *SignedLockChangedError) Error() string {
	return fmt.Sprintf("%s is signed (%s) and this run would change it: sign the new lock", e.Lock, e.Lock+signature.SigSuffix)
}

// Is makes a SignedLockChangedError bad input (errkind.BadInput).
func (e *SignedLockChangedError) Is(target error) bool { return target == errkind.BadInput }

// UnrecordedSignaturesError refuses to mirror a signed lock that does not
// record signatures the trust policy verified at the source (attached
// after the lock was written): the signed lock cannot gain them, and
// verify and install would look for them in the mirror. It is a
// mismatch; nothing was copied.
type UnrecordedSignaturesError struct {
	Lock       string
	Signatures []trust.Unrecorded
}

func (e *UnrecordedSignaturesError) Error() string {
	lines := make([]string, len(e.Signatures))
	for i, u := range e.Signatures {
		lines[i] = u.String()
	}
	return fmt.Sprintf("%s is signed and does not record %d signatures the trust policy verified at the source (attached after the lock was written), which verify and install would look for in the mirror:\n%s",
		e.Lock, len(e.Signatures), strings.Join(lines, "\n"))
}

// Is makes an UnrecordedSignaturesError a mismatch (errkind.Mismatch).
func (e *UnrecordedSignaturesError) Is(target error) bool { return target == errkind.Mismatch }

// ArchiveLockError refuses, before anything is pushed, an archive whose
// lock signature is missing (Err nil) or does not verify with the key
// given. It is a mismatch.
type ArchiveLockError struct {
	Archive string
	Err     error
}

func (e *ArchiveLockError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("refusing to import %s: it carries no %s", e.Archive, relocate.ArchiveLockSigFile)
	}
	return fmt.Sprintf("refusing to import %s: its %s does not sign its %s: %v", e.Archive, relocate.ArchiveLockSigFile, relocate.ArchiveLockFile, e.Err)
}

// Unwrap returns why the signature does not verify.
func (e *ArchiveLockError) Unwrap() error { return e.Err }

// Is makes an ArchiveLockError a mismatch (errkind.Mismatch).
func (e *ArchiveLockError) Is(target error) bool { return target == errkind.Mismatch }

// Mirror copies a lock's closure, as ferry mirror does: into the mirror
// registry o.To, into the archive o.ToArchive, from the archive
// o.FromArchive into o.To, from the mirror o.From to o.To, or one shard
// of it. It holds the whole order of the run: the closure locked first
// when o.Inputs are given; then, before anything is copied, the signed
// lock's state (a signed lock is never rewritten in place, and an
// unsigned one never replaces a signed one), the trust policy and the
// signatures the lock records, and the extensions' content fetched and
// checked; then the copy; then the lock written with its mirror
// locations, or, signed, its sidecar LOCK.mirror.yaml.
func Mirror(ctx context.Context, o MirrorOptions) (*MirrorResult, error) {
	defer o.Hooks.stop()
	if o.FromArchive != "" {
		return mirrorFromArchive(ctx, o)
	}
	env := o.Env
	// The image configs this run's resolution reads go to its copy,
	// which does not read them again (never to a verification).
	blobs := runblobs.New()
	l, ms, err := mirrorLock(ctx, o, blobs)
	if err != nil {
		return nil, err
	}
	// The resolution's Reporter has ended: the copy's counts start from
	// zero.
	reporter := o.Hooks.start(progress.Transfer)
	// A signed lock is never rewritten in place (see lock/sidecar.go).
	keep, lockSig, err := signedLockToMirror(o.LockPath, l, o.SignKey)
	if err != nil {
		return nil, err
	}
	// A signed lock's mirror locations, its mixins' included, are in its
	// sidecar: mirror to mirror reads them there. (An archive carries the
	// lock's own bytes, with its signature.)
	if o.ToArchive == "" {
		fromName := ""
		if o.From != nil {
			fromName = o.From.String()
		}
		if err := lock.ApplyMirrors(o.LockPath, l, fromName); err != nil {
			return nil, err
		}
	}
	pol, err := env.lockTrustPolicy(l, ms, o.LockPath, o.Settings, o.Trust)
	if err != nil {
		return nil, err
	}
	var origin func(*lock.Package) string
	if o.ToArchive == "" {
		if origin, err = env.Origin(ctx, l, o.LockPath, o.From); err != nil {
			return nil, err
		}
	}
	un, err := env.checkTrustDefault(pol, l) // before anything is copied
	if err != nil {
		return nil, err
	}
	unrecorded, err := env.CheckTrustAt(ctx, pol, l, origin) // before anything is copied
	if err != nil {
		return nil, err
	}
	if err := env.unrecordedSignatures(o.LockPath, unrecorded, keep != nil); err != nil {
		return nil, err
	}
	// Extension content (the mixins) comes from the feed, or, from
	// mirror to mirror, from the other mirror; fetched and checked before
	// anything is copied.
	ext, err := env.PrepareMirror(ctx, l, o.From, o.ToArchive != "")
	if err != nil {
		return nil, err
	}
	sources, err := env.Sources(ms)
	if err != nil {
		return nil, err
	}
	ropts := relocate.Options{
		Source: sources, Target: env.Client, Concurrency: env.Concurrency, Progress: o.progress, Reporter: reporter, Formats: env.Formats,
		Retry: env.Client.RetryPolicy(), AllowBrokenReferences: o.AllowBrokenReferences, Blobs: blobs,
	}
	if o.ToArchive != "" {
		if o.SignKey != nil {
			if lockSig, err = env.WriteLock(l, o.LockPath, o.SignKey, o.Hooks); err != nil {
				return nil, err
			}
		}
		rep, written, err := relocate.ToArchiveParts(ctx, l, lockSig, o.ToArchive, ropts, o.Archive, func(ctx context.Context, store *oci.Store) error {
			return ext.Transfers.Archive(ctx, store)
		})
		if err != nil {
			return nil, err
		}
		for i, p := range written.Paths {
			o.Hooks.logf("wrote %s (%d bytes, part %d of %d)", p, written.Sizes[i], i+1, len(written.Paths))
		}
		if o.Archive.Since != nil {
			o.Hooks.logf("incremental archive since %s: %d blobs and manifests left out, %d carried", o.SincePath, written.Omitted, written.Blobs)
		}
		o.Hooks.stop() // results and the lock's report after the last bar
		return env.finishMirror(l, o, rep, keep, "", un)
	}
	to := o.To
	if to == "" && ms != nil {
		to = ms.Mirror.To
	}
	mapping, err := relocate.ParseMapping(to)
	if err != nil {
		return nil, err
	}
	mapping.Flatten = o.Flatten
	if err := mapping.CheckFlatten(); err != nil {
		return nil, err
	}
	ropts.To, ropts.Origin = mapping, origin
	var rep *relocate.Report
	if o.Shard != nil {
		rep, err = relocate.MirrorShard(ctx, l, ropts, relocate.ShardOptions{Shard: *o.Shard, Wait: o.ShardWait, Log: o.Hooks.logf})
		if o.Shard.Index != 1 {
			ext = nil // extension content goes up with shard 1 alone
		}
	} else {
		rep, err = relocate.Mirror(ctx, l, ropts)
	}
	if err != nil {
		return nil, err
	}
	if ext != nil {
		moved, err := ext.Push(ctx, mapping)
		o.logMoved(moved)
		if err != nil {
			return nil, err
		}
	}
	o.Hooks.stop() // results and the lock's report after the last bar
	return env.finishMirror(l, o, rep, keep, mapping.String(), un)
}

// progress reports one package mirrored.
func (o MirrorOptions) progress(r relocate.PackageResult) {
	if o.ToArchive != "" {
		// The package went into the archive, under its own name there:
		// the line names the archive, not that name.
		o.Hooks.logf("archived %s -> %s (%s; copied %d, skipped %d)", r.Source, o.ToArchive, r.Digest, r.Copied, r.Skipped)
		return
	}
	o.Hooks.logf("mirrored %s -> %s (%s; copied %d, mounted %d, skipped %d)", r.Source, r.Mirror, r.Digest, r.Copied, r.Mounted, r.Skipped)
}

// logMoved reports the items an extension mirrored.
func (o MirrorOptions) logMoved(moved []Moved) {
	for _, m := range moved {
		o.Hooks.logf("mirrored %s %s %s -> %s", m.Format, m.Name, m.Version, m.Mirror)
	}
}

// mirrorLock returns the lock to mirror: the lock at o.LockPath as it is
// (o.Inputs nil), or o.Inputs locked afresh, keeping the versions that
// lock holds. A run with no destination fails with ErrNoDestination
// before any registry is contacted. Resolution gives blobs the small
// blobs it reads (Env.resolve).
func mirrorLock(ctx context.Context, o MirrorOptions, blobs *runblobs.Cache) (*lock.Lock, *mirrorset.MirrorSet, error) {
	env := o.Env
	needTo := o.ToArchive == "" && o.To == ""
	if o.Inputs == nil {
		l, err := lock.Read(o.LockPath)
		if err == nil && needTo {
			err = ErrNoDestination
		}
		if err == nil && o.Config != "" {
			// The settings file's mirrors: read the sources from them.
			// The run's source mirrors are set by the first Sources
			// call.
			var cfg *mirrorset.MirrorSet
			if cfg, err = mirrorset.LoadSettings(o.Config, env.Formats); err == nil {
				_, err = env.Sources(cfg)
			}
		}
		return l, nil, err
	}
	ms := o.Inputs
	if needTo && ms.Mirror.To == "" {
		return nil, nil, ErrNoDestination
	}
	prev, err := ReadLockIfExists(o.LockPath)
	if err != nil {
		return nil, nil, err
	}
	if err := GuardLock(prev, ms, o.Input, o.LockPath, o.Roots, o.LockNamed); err != nil {
		return nil, nil, err
	}
	if prev != nil && prev.Inputs == ms.Digest() {
		return prev, ms, nil
	}
	o.Hooks.start(progress.Resolution) // ended before the copy's Reporter starts
	l, graph, err := env.lock(ctx, ms, prev, Update{}, blobs)
	o.Hooks.stop()
	if err != nil {
		return nil, nil, err
	}
	env.warnAll(graph.Warnings)
	RecordInput(l, o.Input, o.LockPath)
	return l, ms, nil
}

// signedLockToMirror decides how mirroring l writes lockPath. When a
// signature is beside the lock and l is exactly the lock, the lock is kept
// as it is (keep, with its signature sig, which an archive carries); with
// key, l is written and signed anew; a signed lock this run would change
// is refused before anything is copied.
func signedLockToMirror(lockPath string, l *lock.Lock, key *signature.PrivateKey) (keep *lock.Lock, sig []byte, err error) {
	data, sig, same, err := lock.SignedState(lockPath, l)
	if err != nil || sig == nil || key != nil {
		return nil, nil, err
	}
	if !same {
		return nil, nil, &SignedLockChangedError{Lock: lockPath}
	}
	if keep, err = lock.Parse(data); err != nil {
		return nil, nil, err
	}
	return keep, sig, nil
}

// unrecordedSignatures handles the signatures the trust check verified at
// the sources that the lock did not record (a lock written before the
// packages were signed): they are now in the lock and are copied, with a
// warning that names them. A signed lock cannot gain them: the run is
// refused before anything is copied (UnrecordedSignaturesError).
func (e *Env) unrecordedSignatures(lockPath string, added []trust.Unrecorded, signed bool) error {
	if len(added) == 0 {
		return nil
	}
	if signed {
		return &UnrecordedSignaturesError{Lock: lockPath, Signatures: added}
	}
	for _, u := range added {
		e.warn(fmt.Sprintf("%s did not record %s, which the trust policy verified at the source (attached after the lock was written): recorded and copied; run ferry lock to record signatures when locking", lockPath, u.String()))
	}
	return nil
}

// finishMirror ends a mirror run: keep, when set, is the signed lock on
// disk, left as it is, the mirror locations going to its sidecar
// LOCK.mirror.yaml (to: the mirror, empty for an archive, which records
// none); otherwise the lock is written with its mirror locations (and
// signed with o.SignKey when set).
func (e *Env) finishMirror(l *lock.Lock, o MirrorOptions, rep *relocate.Report, keep *lock.Lock, to string, un []trust.Unmatched) (*MirrorResult, error) {
	res := &MirrorResult{Lock: l, Report: rep, Untrusted: un}
	lockPath := o.LockPath
	if keep == nil {
		if _, err := e.WriteLock(l, lockPath, o.SignKey, o.Hooks); err != nil {
			return nil, err
		}
		if err := lock.RemoveMirrors(lockPath); err != nil {
			return nil, err
		}
		res.Wrote = "lock " + lockPath
		return res, nil
	}
	if to == "" {
		res.Wrote = "signed lock " + lockPath + " unchanged"
		return res, nil
	}
	m, err := lock.NewMirrors(keep, l, to)
	if err != nil {
		return nil, err
	}
	if err := m.Write(lockPath); err != nil {
		return nil, fmt.Errorf("writing %s: %w", lock.MirrorsPath(lockPath), err)
	}
	res.Wrote = "signed lock " + lockPath + " unchanged, mirror locations in " + lock.MirrorsPath(lockPath)
	return res, nil
}

// CheckArchiveLock refuses, before anything is pushed, an archive whose
// lock is not signed by key: its ferry.lock.sig must verify over its
// ferry.lock's exact bytes (data, sig). No key checks nothing.
func CheckArchiveLock(archive string, key *signature.PublicKey, data, sig []byte) error {
	if key == nil {
		return nil
	}
	if sig == nil {
		return &ArchiveLockError{Archive: archive}
	}
	if err := key.Verify(data, signature.DecodeBlobSignature(sig)); err != nil {
		return &ArchiveLockError{Archive: archive, Err: err}
	}
	return nil
}

// mirrorFromArchive pushes the archive o.FromArchive into the mirror
// o.To and writes its lock: a signed archive's lock bytes and signature
// as carried, with the mirror locations in LOCK.mirror.yaml; an unsigned
// one never replaces a signed lock, nor one lock.requireSigned asks for.
func mirrorFromArchive(ctx context.Context, o MirrorOptions) (*MirrorResult, error) {
	env := o.Env
	reporter := o.Hooks.start(progress.Transfer)
	mapping, _ := relocate.ParseMapping(o.To)
	mapping.Flatten = o.Flatten
	if err := mapping.CheckFlatten(); err != nil {
		return nil, err
	}
	var signedData, signedSig []byte
	check := func(l *lock.Lock, data, sig []byte) error { // before anything is pushed
		if err := CheckArchiveLock(o.FromArchive, o.LockKey, data, sig); err != nil {
			return err
		}
		if err := env.checkFresh(l, o.FromArchive+"'s "+relocate.ArchiveLockFile, o.LockPath, o.AllowDowngrade); err != nil {
			return err
		}
		if sig == nil && o.SignKey == nil {
			if err := lock.CheckUnsignedWrite(o.LockPath, env.RequireSignedLock(o.Config, o.LockPath)); err != nil {
				return errkind.Mark(errkind.Mismatch, err)
			}
		}
		if sig != nil && o.SignKey == nil {
			signedData, signedSig = data, sig
		}
		return nil
	}
	l, rep, err := relocate.FromArchiveChecked(ctx, o.FromArchive, relocate.Options{
		Source: env.Client, To: mapping, Concurrency: env.Concurrency, Progress: o.progress, Reporter: reporter, Formats: env.Formats,
		Retry: env.Client.RetryPolicy(), AllowBrokenReferences: o.AllowBrokenReferences,
	}, check, func(ctx context.Context, store *oci.ReadOnlyStore, l *lock.Lock) error {
		moved, err := env.Import(ctx, store, l, mapping)
		o.logMoved(moved)
		return err
	})
	if err != nil {
		return nil, err
	}
	o.Hooks.stop() // results and the lock's report after the last bar
	if signedSig == nil {
		return env.finishMirror(l, o, rep, nil, "", nil)
	}
	signed, err := lock.Parse(signedData)
	if err != nil {
		return nil, err
	}
	m, err := lock.NewMirrors(signed, l, mapping.String())
	if err != nil {
		return nil, err
	}
	if err := lock.WriteSigned(o.LockPath, signedData, signedSig, m); err != nil {
		return nil, err
	}
	return &MirrorResult{Lock: l, Report: rep,
		Wrote: "signed lock " + o.LockPath + " and " + o.LockPath + signature.SigSuffix + " as carried, mirror locations in " + lock.MirrorsPath(o.LockPath)}, nil
}

// checkFresh refuses a lock l (what names it) older than the lock held at
// heldPath (TUF's rollback rule: *lock.DowngradeError, a mismatch), unless
// allow is set, when it is a warning.
func (env *Env) checkFresh(l *lock.Lock, what, heldPath string, allow bool) error {
	held, ok, err := lock.ReadSerial(heldPath)
	if err != nil || !ok {
		return err
	}
	err = lock.CheckFresh(what, l.Serial, heldPath, held)
	if err != nil && allow {
		env.warn(err.Error() + ": accepted, a downgrade was allowed")
		return nil
	}
	return err
}
