package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newVersionCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ferry's version",
		Example: `  ferry version
  ferry version -o json`,
		Args: cobraExactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			v := version
			if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
				v = bi.Main.Version
			}
			if g.json() {
				return writeJSON(cmd.OutOrStdout(), map[string]string{"version": v})
			}
			fmt.Fprintln(cmd.OutOrStdout(), "ferry "+v)
			return nil
		},
	}
}
