package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
)

// diffJSON is `ferry diff -o json`: digests replaced under an unchanged
// version in a key of their own, every other change in `changes`.
type diffJSON struct {
	// Identical reports that the locks hold the same packages and mixins
	// at the same versions and digests.
	Identical bool `json:"identical"`
	// Replaced lists digest changes under an unchanged version, and
	// versions moved up onto the same digest (lock.OpRollback).
	Replaced []lock.Change `json:"replaced"`
	// Changes lists versions changed, entries added and removed.
	Changes []lock.Change `json:"changes"`
}

func newDiffCmd(g *globalFlags) *cobra.Command {
	var exitCode bool
	c := &cobra.Command{
		Use:   "diff OLD.lock NEW.lock [--exit-code]",
		Short: "Show what changed between two locks",
		Long: `Diff lists packages and mixins added, removed, or changed in version or
digest between two locks, one per line: "+ added", "- removed",
"~ changed". A tag of a package's digest added or removed while the
package stays (two tags of one digest, both locked) is listed as
"+ tag SOURCE TAG DIGEST" or "- tag SOURCE TAG DIGEST".

A digest that changed while the version stayed the same is listed first,
as "! REPLACED": the content behind a version was swapped (a tag moved to
other content, a feed binary re-uploaded), which a new release never does.
A warning on stderr counts them. In -o json they are under "replaced",
every other change under "changes".

--exit-code exits 1 when the locks differ and 0 when they do not, as
"git diff --exit-code" does; without it, diff exits 0 either way.`,
		Example: `  ferry diff ferry.lock.orig ferry.lock
  ferry diff old.lock new.lock -o json
  ferry diff --exit-code old.lock new.lock || echo "the lock changed"`,
		Args: cobraExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
				return err
			}
			a, err := lock.Read(args[0])
			if err != nil {
				return err
			}
			b, err := lock.Read(args[1])
			if err != nil {
				return err
			}
			changes := lock.Diff(a, b)
			replaced, others := lock.Replaced(changes)
			if g.json() {
				if err := writeJSON(os.Stdout, diffJSON{Identical: len(changes) == 0, Replaced: replaced, Changes: others}); err != nil {
					return err
				}
			} else {
				for _, c := range changes {
					fmt.Println(c.String())
				}
			}
			rollbacks := 0
			for _, c := range replaced {
				if c.Op == lock.OpRollback {
					rollbacks++
				}
			}
			if n := len(replaced) - rollbacks; n > 0 {
				// Not subject to --quiet: it is the point of the command.
				fmt.Fprintf(os.Stderr, "ferry diff: WARNING: %d digest(s) changed under an unchanged version: the content behind a version was replaced; check where it came from before trusting %s\n", n, args[1])
			}
			if rollbacks > 0 {
				fmt.Fprintf(os.Stderr, "ferry diff: WARNING: %d version(s) moved up onto the digest they had: an older release under a newer tag; check where it came from before trusting %s\n", rollbacks, args[1])
			}
			if exitCode && len(changes) > 0 {
				return exitSilently(exitcode.Failure)
			}
			return nil
		},
	}
	c.Flags().BoolVar(&exitCode, "exit-code", false, "exit 1 when the locks differ, 0 when they do not (as git diff --exit-code)")
	return c
}
