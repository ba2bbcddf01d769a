package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=..."
// (scripts/dist.sh and scripts/release.sh set it from `git describe`).
var version = "dev"

// buildInfo is what `ferry version` reports, as oras and helm report
// theirs: the release, the commit it was built from, the Go toolchain and
// the platform.
type buildInfo struct {
	Version      string `json:"version"`
	GitCommit    string `json:"gitCommit,omitempty"`
	GitTreeState string `json:"gitTreeState,omitempty"`
	GoVersion    string `json:"goVersion"`
	Platform     string `json:"platform"`
}

// readBuildInfo fills buildInfo from -X main.version and from what the Go
// toolchain records in the binary: the module version for `go install
// …@vX.Y.Z`, and vcs.revision / vcs.modified for a build in a checkout.
func readBuildInfo() buildInfo {
	info := buildInfo{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	if info.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.GitCommit = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				info.GitTreeState = "dirty"
			} else {
				info.GitTreeState = "clean"
			}
		}
	}
	return info
}

func newVersionCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print ferry's version, commit, Go version and platform",
		Example: `  ferry version
  ferry version -o json`,
		Args: cobraExactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			info := readBuildInfo()
			if g.json() {
				return writeJSON(cmd.OutOrStdout(), info)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintln(w, "ferry "+info.Version)
			if info.GitCommit != "" {
				fmt.Fprintf(w, "  commit:     %s (%s)\n", info.GitCommit, info.GitTreeState)
			}
			fmt.Fprintf(w, "  go version: %s\n", info.GoVersion)
			fmt.Fprintf(w, "  platform:   %s\n", info.Platform)
			return nil
		},
	}
}
