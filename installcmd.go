package ferry

import (
	"context"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/trust"
)

// InstallOptions are the options of Install.
type InstallOptions struct {
	// Env is the run's environment; required.
	Env *Env
	// LockPath is the lock to install.
	LockPath string
	// Mirror is the mirror HOST[/PREFIX] to read from ("": the one the
	// lock's sidecar records, else the lock's own).
	Mirror string
	// Dest is the install directory; "" installs only what StageHome
	// stages.
	Dest string
	// LockKey requires the lock's signature LOCK.sig to verify with it;
	// RequireSignedLock refuses a lock without one (the inputs'
	// lock.requireSigned sets it too).
	LockKey           *signature.PublicKey
	RequireSignedLock bool
	// PlainHTTP are the hosts spoken to in plain HTTP, written so into
	// the node configuration (install.Options.PlainHTTP).
	PlainHTTP []string
	// Settings are the format settings given apart from the input file,
	// applied when the lock's input file is read again.
	Settings *mirrorset.MirrorSet
	Trust    TrustOptions
	// StageHome, when set, stages content beside the install directory
	// (the Porter mixins into a PORTER_HOME) from the mirror, once the
	// lock and its signatures are checked; it is committed after the
	// install succeeds and discarded otherwise.
	StageHome func(ctx context.Context, l *lock.Lock, mirror *relocate.Mapping) (StagedHome, error)
	// AllowDowngrade installs a lock older (a lower serial) than the one
	// Dest already holds (install.Options.AllowDowngrade).
	AllowDowngrade bool
	Hooks          Hooks
}

// StagedHome is content StageHome staged.
type StagedHome interface {
	// Commit moves the staged content into place.
	Commit() error
	// Discard removes what is left staged; after Commit it does nothing.
	Discard()
}

// InstallResult is what Install installed.
type InstallResult struct {
	Lock *lock.Lock
	// Plan is what went into Dest (no steps without Dest).
	Plan *install.Plan
	// Untrusted are the packages no trust rule matches, under
	// trust.default: warn.
	Untrusted []trust.Unmatched
}

// Install materialises a lock's closure from the mirror, as ferry install
// does. Before anything is read or written it checks the lock's signature
// (LockKey, RequireSignedLock, lock.requireSigned), the trust policy and,
// in the mirror, every signature the lock records and the policy
// requires; then it stages StageHome's content, installs into Dest and
// commits the staged content.
func Install(ctx context.Context, o InstallOptions) (*InstallResult, error) {
	env := o.Env
	l, sidecar, stale, err := lock.ReadWithMirrors(o.LockPath)
	if err != nil {
		// A lock tampered until it no longer parses is still first of
		// all a bad signature.
		if p := unparsableLockSignature(o.LockPath, o.LockKey); p != nil {
			return nil, errkind.Markf(errkind.Mismatch, "refusing to install: %s", p.Detail)
		}
		return nil, err
	}
	opts := install.Options{Registry: env.Client, Formats: env.Formats, Dest: o.Dest, Concurrency: env.Concurrency, LockKey: o.LockKey, LockFile: o.LockPath,
		Retry: env.Client.RetryPolicy(), RequireSignedLock: o.RequireSignedLock, PlainHTTP: o.PlainHTTP, AllowDowngrade: o.AllowDowngrade}
	opts.Reporter = o.Hooks.start(progress.Transfer)
	defer o.Hooks.stop()
	// A signed lock's mirror locations are in LOCK.mirror.yaml.
	if opts.Mirror, err = env.mirrorOf(o.Mirror, sidecar, stale); err != nil {
		return nil, err
	}
	// The lock's input file, when it is here, sets up what formats write
	// (Crossplane pull secrets).
	ms, inputs, err := env.Inputs(l, o.LockPath, o.Settings)
	if err != nil {
		return nil, err
	}
	if opts.Writers, err = env.Writers(ms); err != nil {
		return nil, err
	}
	if ms != nil && ms.Lock.RequireSigned {
		opts.RequireSignedLock = true
	}
	// Before anything is staged: nothing is read or written for a lock
	// whose signature fails.
	if err := install.CheckLockSignature(l, opts); err != nil {
		return nil, err
	}
	opts.LockKey, opts.RequireSignedLock = nil, false // checked once, here
	pol, err := o.Trust.policy(ms, inputs)
	if err != nil {
		return nil, err
	}
	un, err := env.checkTrustDefault(pol, l) // before anything is written
	if err != nil {
		return nil, err
	}
	if err := env.CheckMirrorTrust(ctx, pol, l, opts.Mirror); err != nil {
		return nil, err
	}
	var home StagedHome
	if o.StageHome != nil {
		if home, err = o.StageHome(ctx, l, opts.Mirror); err != nil {
			return nil, err
		}
		defer home.Discard()
	}
	plan := &install.Plan{}
	if o.Dest != "" {
		if plan, err = install.Install(ctx, l, opts); err != nil {
			return nil, err
		}
	}
	o.Hooks.stop() // the results print after the last bar
	if home != nil {
		if err := home.Commit(); err != nil {
			return nil, err
		}
	}
	return &InstallResult{Lock: l, Plan: plan, Untrusted: un}, nil
}
