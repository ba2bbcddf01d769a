package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
)

func newWhyCmd(g *globalFlags) *cobra.Command {
	var lockPath string
	c := &cobra.Command{
		Use:   "why REF [--lock F]",
		Short: "Show which roots pull REF in, and by which paths",
		Long: `Why prints every path from a root to the package REF (a source repository,
optionally with tag or digest, or the last element of its path), using the
lock alone. For a replaced source it explains the redirect.`,
		Example: `  ferry why ghcr.io/acme/mysql
  ferry why mysql -o json`,
		Args: cobraExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
				return err
			}
			l, err := lock.Read(lockPath)
			if err != nil {
				return err
			}
			ans, err := l.Why(args[0])
			if err != nil {
				return exitcode.With(exitcode.Failure, err)
			}
			if g.json() {
				return writeJSON(os.Stdout, ans)
			}
			if ans.ReplacedBy != "" {
				fmt.Printf("%s is replaced by %s\n", ans.Source, ans.ReplacedBy)
			}
			for _, p := range ans.Paths {
				fmt.Println(strings.Join(p, " -> "))
			}
			return nil
		},
	}
	c.Flags().StringVar(&lockPath, "lock", lock.DefaultFile, "lock file to read")
	return c
}
