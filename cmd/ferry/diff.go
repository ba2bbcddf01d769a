package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ferryhq/ferry/lock"
)

func newDiffCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "diff OLD.lock NEW.lock",
		Short: "Show what changed between two locks",
		Long: `Diff lists packages and mixins added, removed, or changed in version or
digest between two locks, one per line: "+ added", "- removed",
"~ changed".`,
		Example: `  ferry diff ferry.lock.orig ferry.lock
  ferry diff old.lock new.lock -o json`,
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
			if g.json() {
				return writeJSON(os.Stdout, changes)
			}
			for _, c := range changes {
				fmt.Println(c.String())
			}
			return nil
		},
	}
}
