package ferry

import (
	"context"
	"fmt"
	"strings"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/trust"
	"github.com/ferryhq/ferry/verify"
)

// VerifyOptions are the options of Verify.
type VerifyOptions struct {
	// Env is the run's environment; required unless Archive is set.
	Env *Env
	// LockPath is the lock to verify.
	LockPath string
	// Archive, when set, checks this archive offline instead (its lock,
	// its lock signature with LockKey, every node re-hashed).
	Archive string
	// Mirror is the mirror HOST[/PREFIX] to read from; "" reads the one
	// the lock's sidecar records, else the lock's own mirror: fields.
	Mirror string
	// Deep downloads and re-hashes every blob.
	Deep bool
	// Key requires every package's signature in the mirror to verify
	// with it; LockKey requires the lock's own signature (LOCK.sig).
	Key, LockKey *signature.PublicKey
	// Settings are the format settings given apart from the input file,
	// applied when the lock's input file is read again.
	Settings *mirrorset.MirrorSet
	Trust    TrustOptions
	// Resolve resolves the inputs again from the mirror alone;
	// ResolveSources at the sources. Both need the input file the lock
	// was made from (InputsGoneError otherwise).
	Resolve, ResolveSources bool
	Hooks                   Hooks
}

// InputsGoneError is a check that needs the inputs a lock was made from
// when they are not here: the lock was made from command-line roots
// (Path ""), or its input file Path is gone. Sources says the check was
// against the sources. It is bad input.
type InputsGoneError struct {
	Path    string
	Sources bool
}

func (e *InputsGoneError) Error() string {
	if e.Path == "" {
		return "resolving again needs the inputs the lock was made from: it was made from command-line roots"
	}
	return fmt.Sprintf("resolving again needs the inputs the lock was made from: %s is gone", e.Path)
}

// Is makes an InputsGoneError bad input (errkind.BadInput).
func (e *InputsGoneError) Is(target error) bool { return target == errkind.BadInput }

// Verify checks a lock against a mirror, as ferry verify does, and
// returns every problem found in its report (none: rep.OK()). Errors are
// what kept the check from running.
func Verify(ctx context.Context, o VerifyOptions) (*verify.Report, error) {
	defer o.Hooks.stop()
	if o.Archive != "" {
		// Offline: the archive alone, before any import.
		rep, info, err := verify.ArchiveDetail(ctx, o.Archive, o.LockKey)
		if err != nil {
			return nil, err
		}
		if len(info.Paths) > 1 {
			o.Hooks.logf("checked %d parts: %s", len(info.Paths), strings.Join(info.Paths, ", "))
		}
		if info.Since != "" {
			// Not a problem: the import checks them in the mirror.
			o.Hooks.logf("incremental archive (since the lock %s): %d nodes are expected from the earlier import", info.Since, len(info.Expected))
			for _, e := range info.Expected {
				o.Hooks.logf("  expected in the mirror: %s %s (%s, %d bytes)", e.Package, e.Digest, e.MediaType, e.Size)
			}
		}
		return rep, nil
	}
	env := o.Env
	l, sidecar, stale, err := lock.ReadWithMirrors(o.LockPath)
	if err != nil {
		// A lock tampered until it no longer parses is still first of
		// all a bad signature.
		if p := unparsableLockSignature(o.LockPath, o.LockKey); p != nil {
			return &verify.Report{Problems: []verify.Problem{*p}}, nil
		}
		return nil, err
	}
	opts := verify.Options{Registry: env.Client, Deep: o.Deep, Concurrency: env.Concurrency, Key: o.Key, LockKey: o.LockKey, LockFile: o.LockPath, Formats: env.Formats}
	if o.Deep {
		opts.Reporter = o.Hooks.start(progress.Transfer)
	}
	// A signed lock's mirror locations are in LOCK.mirror.yaml.
	if opts.Mirror, err = env.mirrorOf(o.Mirror, sidecar, stale); err != nil {
		return nil, err
	}
	ms, inputs, err := env.Inputs(l, o.LockPath, o.Settings)
	if err != nil {
		return nil, err
	}
	// Inputs that are not here (the far side of an air gap) cannot be
	// compared; the lock is all there is.
	if ms != nil {
		opts.Inputs, opts.InputsFile = ms.Digest(), inputs
	}
	if opts.Trust, err = o.Trust.policy(ms, inputs); err != nil {
		return nil, err
	}
	if (o.Resolve || o.ResolveSources) && ms == nil {
		return nil, &InputsGoneError{Path: inputs, Sources: !o.Resolve}
	}
	rep, err := verify.Verify(ctx, l, opts)
	o.Hooks.stop()
	if err != nil {
		return nil, err
	}
	if opts.Trust.Default == trust.DefaultWarn && len(rep.Untrusted) > 0 {
		env.warn(trust.UnmatchedWarning(rep.Untrusted))
	}
	if err := env.VerifyExtensions(ctx, l, opts, rep); err != nil {
		return nil, err
	}
	if o.Resolve {
		problems, err := env.ReresolveMirror(ctx, ms, l, opts.Mirror)
		if err != nil {
			return nil, err
		}
		rep.Problems = append(rep.Problems, problems...)
	}
	if o.ResolveSources {
		problems, err := env.Reresolve(ctx, ms, l)
		if err != nil {
			return nil, err
		}
		rep.Problems = append(rep.Problems, problems...)
	}
	return rep, nil
}

// mirrorOf returns the mirror verify and install read from: mirror when
// given, else the one the lock's sidecar LOCK.mirror.yaml records (a
// signed lock's mirror locations), else none (nil: the lock's own). A
// stale sidecar is warned about and ignored.
func (e *Env) mirrorOf(mirror string, sidecar *lock.Mirrors, stale error) (*relocate.Mapping, error) {
	if stale != nil {
		e.warn(stale.Error() + ": ignored")
	}
	if mirror == "" && sidecar != nil {
		mirror = sidecar.To
	}
	if mirror == "" {
		return nil, nil
	}
	m, err := relocate.ParseMapping(mirror)
	if err != nil {
		return nil, err
	}
	m = m.WithFormats(e.Formats)
	return &m, nil
}

// unparsableLockSignature returns the lock's signature problem when key is
// set and path's signature is missing or does not verify, for a lock that
// could not be read as one.
func unparsableLockSignature(path string, key *signature.PublicKey) *verify.Problem {
	if key == nil {
		return nil
	}
	if _, err := signature.VerifyFile(key, path); signature.IsMismatch(err) {
		return &verify.Problem{Package: "(lock)", Ref: path + signature.SigSuffix, Kind: verify.ProblemSignature, Detail: err.Error()}
	}
	return nil
}
