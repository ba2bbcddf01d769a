package main

import (
	"path/filepath"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/trust"
)

// trustPolicy returns the policy of ms's `trust:` section (ms read from
// file; both may be empty) and of --verify-key and --trusted-root.
func (g *globalFlags) trustPolicy(ms *mirrorset.MirrorSet, file string) (*trust.Policy, error) {
	return ferry.TrustPolicy(ms, file, g.verifyKeys, g.trustedRoot)
}

// lockTrustPolicy returns the policy for a lock being mirrored: ms when
// the inputs were read, else the input file the lock records, if it is
// still there, and the flags.
func (g *globalFlags) lockTrustPolicy(env *ferry.Env, l *lock.Lock, ms *mirrorset.MirrorSet, lockPath string) (*trust.Policy, error) {
	file := ""
	if l.Input != "" {
		file = filepath.Join(filepath.Dir(lockPath), filepath.FromSlash(l.Input))
	}
	if ms == nil {
		var err error
		if ms, file, err = g.lockInputs(env, l, lockPath); err != nil {
			return nil, err
		}
	}
	return g.trustPolicy(ms, file)
}

// checkTrustDefault applies pol's trust.default to l's packages before
// anything is written or copied: under require, the packages no rule
// matches are an error naming each (exit code 3); under warn, a warning
// names them and the run's -o json lists them (untrusted).
func (g *globalFlags) checkTrustDefault(pol *trust.Policy, l *lock.Lock) error {
	un, err := pol.CheckDefault(l.Resolved())
	if err != nil {
		return err
	}
	g.untrusted = un
	if w := trust.UnmatchedWarning(un); w != "" {
		warn([]string{w})
	}
	return nil
}
