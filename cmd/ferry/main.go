// Command ferry carries packages, and everything they depend on, into
// private and air-gapped OCI registries, and proves with a digest-verified
// lockfile that what gets installed is exactly what was resolved.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/redact"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var caught os.Signal
	done := make(chan struct{})
	go func() {
		select {
		case caught = <-sigs:
			cancel()
		case <-done:
		}
	}()
	stopProfile := startCPUProfile(os.Getenv("FERRY_CPUPROFILE"))
	err := newRootCmd().ExecuteContext(ctx)
	stopProfile()
	close(done)
	signal.Stop(sigs)
	if err != nil && ctx.Err() != nil {
		// Interrupted: one line, and the shell's code for the signal
		// (128+2 for Ctrl-C, 128+15 for SIGTERM), as skopeo and the
		// shells exit. What was staged is removed by the commands
		// themselves; nothing half-written is left.
		code := interruptedCode(caught)
		fmt.Fprintf(os.Stderr, "ferry: interrupted (%v); nothing was half-written, and a re-run continues where this one stopped\n", caught)
		os.Exit(code)
	}
	cancel()
	if err != nil {
		err = flagHints(err)
		var silent *silentError
		if !errors.As(err, &silent) {
			// Redacted once more: no credential reaches the terminal,
			// whichever layer wrote the message.
			fmt.Fprintln(os.Stderr, "ferry: "+redact.Error(err).Error())
		}
		os.Exit(exitcode.Of(err))
	}
}

// interruptedCode is the exit status a shell gives a process ended by sig:
// 128 plus the signal's number (130 for SIGINT, 143 for SIGTERM).
func interruptedCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// silentError carries an exit code for a failure the command has already
// reported in full.
type silentError struct{ code int }

func (e *silentError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func exitSilently(code int) error { return exitcode.With(code, &silentError{code: code}) }

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "ferry",
		Short: "Carry packages and their whole dependency closure into private OCI registries",
		Long: `ferry resolves the full dependency closure of Porter bundles, Porter mixins
and Crossplane packages, locks it by digest in ferry.lock, mirrors it into a
private registry, verifies a lock against a mirror, and installs from the
mirror using only the lock.`,
		Example: `  ferry resolve ghcr.io/acme/app:v1.2.0
  ferry lock                       # reads ferry.yaml, writes ferry.lock
  ferry mirror --to registry.internal/mirror
  ferry verify --deep
  ferry install --dest ./install`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// An unknown command is a usage error (exit 2), as a bad flag is;
	// cobra's own check (legacyArgs) would exit 1. Without a command,
	// ferry prints its help.
	root.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		hint := ""
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			hint = ": did you mean " + strings.Join(s, " or ") + "?"
		}
		return exitcode.BadInput("unknown command %q for %q%s (see %s --help)", args[0], c.CommandPath(), hint, c.CommandPath())
	}
	root.RunE = func(c *cobra.Command, args []string) error { return c.Help() }
	// Suggestions by edit distance as well as by prefix ("verfy",
	// "mirrror"): cobra's SuggestionsFor uses the distance as set, and
	// only its own error path defaults it to 2.
	root.SuggestionsMinimumDistance = 2
	// --log-level is checked before any command does anything.
	// A --lock naming a lock artifact (oci://…) is pulled first; ferry
	// lock --push-lock pushes the lock it wrote (lockartifact.go).
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		if err := g.checkLogLevel(); err != nil {
			return err
		}
		return g.pullLockArtifact(c)
	}
	root.PersistentPostRunE = func(c *cobra.Command, args []string) error { return g.pushLockArtifact(c) }
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exitcode.BadInput("%w (see %s --help)", err, c.CommandPath())
	})
	g.register(root)
	root.AddCommand(
		newResolveCmd(g), newLockCmd(g), newMirrorCmd(g), newVerifyCmd(g),
		newInstallCmd(g), newServeCmd(g), newWhyCmd(g), newDiffCmd(g), newVersionCmd(g),
		newLoginCmd(g), newLogoutCmd(g), newGCCmd(g),
	)
	return root
}

// startCPUProfile writes a CPU profile of this run to path (the
// FERRY_CPUPROFILE environment variable, for developers: CONTRIBUTING.md)
// until the returned function is called; an empty path profiles nothing.
func startCPUProfile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferry: FERRY_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
