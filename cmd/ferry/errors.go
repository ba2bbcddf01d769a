package main

import (
	"errors"
	"fmt"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/resolve"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/sourcemirror"
)

// flagError words the typed errors of package ferry with the flags that
// remedy them (the library names no flag), keeping their exit codes; args
// are the command's ROOTs. Any other error is returned as it is.
func flagError(err error, args []string) error {
	var (
		overwrite  *ferry.OverwriteError
		changed    *ferry.SignedLockChangedError
		unrecorded *ferry.UnrecordedSignaturesError
		archive    *ferry.ArchiveLockError
		gone       *ferry.InputsGoneError
		unsigned   *lock.UnsignedReplaceError
		required   *install.SignedLockRequiredError
		noMirror   *install.NoMirrorError
		mixinNone  *mixin.NoMirrorError
		partSize   *relocate.PartSizeError
		downgrade  *lock.DowngradeError
	)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ferry.ErrNoMirror):
		return exitcode.BadInput("%w: run ferry mirror first, or pass --mirror HOST[/PREFIX]", err)
	case errors.Is(err, ferry.ErrNoDestination):
		return missingTo(args)
	case errors.As(err, &overwrite):
		return exitcode.BadInput("%w; pass --lock FILE to write this lock elsewhere (or --lock %s to replace it)", err, overwrite.Lock)
	case errors.As(err, &changed):
		return exitcode.BadInput("%s is signed (%s) and this run would change it: pass --sign-key cosign.key to sign the new lock", changed.Lock, changed.Lock+signature.SigSuffix)
	case errors.As(err, &unrecorded):
		return exitcode.Mismatchf("%w\nrun ferry lock --sign-key cosign.key to record them, or ferry mirror --sign-key cosign.key to sign the lock this run writes", err)
	case errors.As(err, &archive) && archive.Err == nil:
		return exitcode.Mismatchf("refusing to import %s: it carries no %s (sign the lock with ferry lock --sign-key cosign.key before mirror --to-archive)", archive.Archive, relocate.ArchiveLockSigFile)
	case errors.As(err, &unsigned) && unsigned.Required:
		return exitcode.Mismatchf("%w; sign it (ferry lock --sign-key) before it is carried", err)
	case errors.As(err, &unsigned):
		return exitcode.Mismatchf("%w; sign it (ferry lock --sign-key, or mirror --to-archive --sign-key on the connected side), or write it elsewhere with --lock", err)
	case errors.As(err, &required) && required.Missing:
		return exitcode.Mismatchf("%w (sign with ferry lock --sign-key cosign.key)", err)
	case errors.As(err, &required):
		return exitcode.BadInput("a signed lock is required: pass --lock-key cosign.pub to check %s", required.Sig)
	case errors.As(err, &noMirror):
		return exitcode.BadInput("%w: run ferry mirror first, or pass --mirror", err)
	case errors.As(err, &mixinNone):
		return exitcode.BadInput("%w: run ferry mirror first, or pass --mirror", err)
	case errors.As(err, &downgrade):
		return exitcode.Mismatchf("%w (pass --allow-downgrade to accept it)", err)
	case errors.As(err, &partSize):
		return exitcode.BadInput("--max-size: %w", err)
	case errors.As(err, &gone):
		flag := "--resolve"
		if gone.Sources {
			flag = "--resolve-sources"
		}
		return exitcode.BadInput("%s needs the inputs the lock was made from: %s", flag, inputsWhy(gone.Path))
	}
	return err
}

// hooks reports a library call's progress on stderr: its lines, and the
// bars of its phases (startPhase).
func (g *globalFlags) hooks() ferry.Hooks {
	return ferry.Hooks{Logf: g.progress, Start: g.startPhase, Stop: g.stopProgress}
}

// trustOptions are --verify-key and --trusted-root.
func (g *globalFlags) trustOptions() ferry.TrustOptions {
	return ferry.TrustOptions{VerifyKeys: g.verifyKeys, TrustedRoot: g.trustedRoot}
}

// flagHints adds to an error of any command the flag that remedies it,
// where a library returned a sentinel or typed error that names none. The
// hint goes at the end of the message, whatever wraps the error; the exit
// code is kept.
func flagHints(err error) error {
	var (
		notRegistry *client.NotRegistryError
		noLatest    *resolve.NoLatestError
		plain       *client.PlainHTTPError
		tlsErr      *client.TLSError
	)
	switch {
	case errors.Is(err, signature.ErrNoTrustedRoot):
		return fmt.Errorf("%w (pass --trusted-root trusted_root.json)", err)
	case errors.Is(err, sourcemirror.ErrNoLocation):
		return fmt.Errorf("%w (or --mirror-source HOST=LOCATION)", err)
	case errors.As(err, &plain) && plain.Answered:
		return fmt.Errorf("%w; pass --plain-http=%s if it only speaks HTTP", err, plain.Host)
	case errors.As(err, &plain):
		return fmt.Errorf("%w; pass --plain-http=%s to allow it", err, plain.Host)
	case errors.As(err, &tlsErr) && tlsErr.UnknownAuthority:
		return fmt.Errorf("%w; pass --ca-file with the CA certificate that signed it", err)
	case errors.As(err, &notRegistry):
		return fmt.Errorf("%w; check the HOST of --to", err)
	case errors.As(err, &noLatest) && noLatest.Range() != "":
		return fmt.Errorf("%w (from the command line: --version '%s')", err, noLatest.Range())
	}
	return err
}
