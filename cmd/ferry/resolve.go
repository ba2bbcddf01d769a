package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/ferryhq/ferry"

	"github.com/ferryhq/ferry/resolve"
)

func newResolveCmd(g *globalFlags) *cobra.Command {
	var version string
	c := &cobra.Command{
		Use:   "resolve [ROOT...]",
		Short: "Print the dependency closure of ROOTs",
		Long: `Resolve reads each package's metadata from its registry, qualifies partial
references relative to the parent, picks the highest tag satisfying every
constraint, honours use and replaces, and prints the closure. A ROOT is an
OCI reference or a ferry.yaml; with none, ferry.yaml is read.`,
		Example: `  ferry resolve ghcr.io/acme/app:v1.2.0
  ferry resolve ghcr.io/acme/app --version '^1.2' -o json
  ferry resolve -o plan            # install order for ferry.yaml
  ferry resolve -o dot | dot -Tsvg > closure.svg`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.checkOutput(resolve.OutputTree, resolve.OutputJSON, resolve.OutputDot, resolve.OutputPlan); err != nil {
				return err
			}
			ms, _, err := g.inputs(args, version)
			if err != nil {
				return err
			}
			env, err := g.env()
			if err != nil {
				return err
			}
			defer env.Close()
			graph, err := ferry.Resolve(cmd.Context(), ferry.ResolveOptions{Env: env, Inputs: ms, Hooks: g.hooks()})
			if err != nil {
				return err
			}
			return resolve.WriteGraph(os.Stdout, graph, g.output)
		},
	}
	c.Flags().StringVar(&version, "version", "", "semver constraint for ROOT references without a tag")
	g.registerSelection(c)
	return c
}
