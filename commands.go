package ferry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/trust"
)

// This file holds what the command calls (Resolve, Lock, Mirror, Verify,
// Install) share: how they report as they go, how a run's trust policy is
// made, and how a lock is written, signed or kept. Each command is one
// call that holds the whole order of its steps; the CLI maps flags to its
// options and its result or error to output and an exit code, as crane's
// cmd/crane/cmd/copy.go does over pkg/crane.

// Hooks are how a command call reports while it runs. Every field may be
// nil: nothing is then shown.
type Hooks struct {
	// Logf reports a progress line (what was mirrored, written, signed).
	Logf func(format string, args ...any)
	// Start starts showing a phase (resolution, transfer) and returns its
	// Reporter; Env.Progress must return it until Stop is called.
	Start func(progress.Phase) progress.Reporter
	// Stop ends the phase Start began; calling it again does nothing.
	Stop func()
}

func (h Hooks) logf(format string, args ...any) {
	if h.Logf != nil {
		h.Logf(format, args...)
	}
}

func (h Hooks) start(p progress.Phase) progress.Reporter {
	if h.Start == nil {
		return progress.Discard
	}
	return progress.Or(h.Start(p))
}

func (h Hooks) stop() {
	if h.Stop != nil {
		h.Stop()
	}
}

// TrustOptions add to the trust policy of the inputs' `trust:` section:
// keys every package no rule matches must be signed with, and the
// Sigstore trusted root of keyless rules (see TrustPolicy).
type TrustOptions struct {
	VerifyKeys  []string
	TrustedRoot string
}

// policy returns the trust policy of ms (read from file; both may be
// empty) with o.
func (o TrustOptions) policy(ms *mirrorset.MirrorSet, file string) (*trust.Policy, error) {
	return TrustPolicy(ms, file, o.VerifyKeys, o.TrustedRoot)
}

// lockTrustPolicy returns the policy for a lock being mirrored: ms when
// the inputs were read, else the input file the lock records, if it is
// still there, read with settings.
func (e *Env) lockTrustPolicy(l *lock.Lock, ms *mirrorset.MirrorSet, lockPath string, settings *mirrorset.MirrorSet, o TrustOptions) (*trust.Policy, error) {
	file := ""
	if l.Input != "" {
		file = filepath.Join(filepath.Dir(lockPath), filepath.FromSlash(l.Input))
	}
	if ms == nil {
		var err error
		if ms, file, err = e.Inputs(l, lockPath, settings); err != nil {
			return nil, err
		}
	}
	return o.policy(ms, file)
}

// checkTrustDefault applies pol's trust.default to l's packages before
// anything is written or copied: under require, the packages no rule
// matches are an error naming each (a mismatch); under warn, a warning
// names them and they are returned for the run's report.
func (e *Env) checkTrustDefault(pol *trust.Policy, l *lock.Lock) ([]trust.Unmatched, error) {
	un, err := pol.CheckDefault(l.Resolved())
	if err != nil {
		return nil, err
	}
	if w := trust.UnmatchedWarning(un); w != "" {
		e.warn(w)
	}
	return un, nil
}

// RequireSignedLock reports whether the ferry.yaml for lockPath (config
// when set, else the one beside the lock) sets lock.requireSigned.
func (e *Env) RequireSignedLock(config, lockPath string) bool {
	path := config
	if path == "" {
		path = mirrorset.ConfigBeside(lockPath)
	}
	if path == "" {
		return false
	}
	ms, err := mirrorset.LoadSettings(path, e.Formats)
	return err == nil && ms.Lock.RequireSigned
}

// ReadLockIfExists reads path, or returns nil when there is no lock yet.
// A lock that does not parse is bad input.
func ReadLockIfExists(path string) (*lock.Lock, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	l, err := lock.Read(path)
	if err != nil {
		return nil, errkind.Mark(errkind.BadInput, err)
	}
	return l, nil
}

// OverwriteError refuses to overwrite a lock made from other inputs
// (ferry.yaml's lock replaced by an ad-hoc one): see GuardLock. It is
// bad input; the caller says how to name another lock file.
type OverwriteError struct {
	// Lock is the lock file; From what it was made from ("other
	// command-line references" when it records no input file); Roots
	// what this run would make it from.
	Lock  string
	From  string
	Roots []string
}

func (e *OverwriteError) Error() string {
	return fmt.Sprintf("%s was made from %s, not from %s: refusing to overwrite it", e.Lock, e.From, strings.Join(e.Roots, " "))
}

// Is makes an OverwriteError bad input (errkind.BadInput).
func (e *OverwriteError) Is(target error) bool { return target == errkind.BadInput }

// GuardLock keeps a run given ROOTs (roots) from overwriting a lock made
// from other inputs: unless the lock file was named explicitly (named),
// an existing lock prev is written again only when it was made from the
// same inputs (its inputs: digest, mirrorset.MirrorSet.Digest) or from
// the same input file (its input:). Otherwise it returns an
// *OverwriteError.
func GuardLock(prev *lock.Lock, ms *mirrorset.MirrorSet, input, lockPath string, roots []string, named bool) error {
	if prev == nil || len(roots) == 0 || named {
		return nil
	}
	if prev.Inputs == ms.Digest() {
		return nil
	}
	if input != "" && prev.Input != "" {
		same := &lock.Lock{}
		RecordInput(same, input, lockPath)
		if same.Input == prev.Input {
			return nil
		}
	}
	from := "other command-line references"
	if prev.Input != "" {
		from = prev.Input
	}
	return &OverwriteError{Lock: lockPath, From: from, Roots: roots}
}

// WriteLock writes l to path and, with key, its cosign blob signature
// path.sig, returning the signature. Without key, a signature beside a
// lock that changes no longer signs it: that is warned about.
func (e *Env) WriteLock(l *lock.Lock, path string, key *signature.PrivateKey, h Hooks) ([]byte, error) {
	_, oldSig, same, err := lock.SignedState(path, l)
	if err != nil {
		return nil, err
	}
	if err := l.Write(path); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if key == nil {
		if oldSig != nil && !same {
			e.warn(fmt.Sprintf("%s changed: %s no longer signs it (sign the new lock again)", path, path+signature.SigSuffix))
		}
		return nil, nil
	}
	data, err := l.Marshal()
	if err != nil {
		return nil, err
	}
	if err := signature.SignFile(key, path, data); err != nil {
		return nil, err
	}
	sig, err := os.ReadFile(path + signature.SigSuffix)
	if err != nil {
		return nil, err
	}
	h.logf("signed %s into %s", path, path+signature.SigSuffix)
	return sig, nil
}
