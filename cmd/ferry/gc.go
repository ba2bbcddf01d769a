package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ferryhq/ferry/relocate"
)

// gcReport is what ferry gc -o json prints.
type gcReport struct {
	// Removed are the staging directories removed.
	Removed []gcEntry `json:"removed"`
	// InUse are staging directories another ferry process holds.
	InUse []string `json:"inUse,omitempty"`
	// Bytes is the total freed.
	Bytes int64 `json:"bytes"`
}

type gcEntry struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

func newGCCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "gc [PATH...]",
		Short: "Remove staging left by interrupted archive and install runs",
		Long: `mirror --to-archive FILE and install --dest DIR build their result in a
staging directory beside it, .NAME.ferry-stage-KEY (KEY: the first 16 hex
digits of the SHA-256 of the lock), holding the marker ferry-stage.json.
It is kept after a failure or a kill, so the next run with the same lock
resumes it, and removed once the result is in place; a run also removes
the staging of its destination under another lock.

gc removes the staging left beside each PATH (a destination: an archive
or an install directory; the staging of what a symbolic link points to
too) and, when PATH is a directory, inside it; default: the current
directory. It lists what it removed and the bytes freed. A directory
without the marker is never touched, nor one a running ferry holds.`,
		Example: `  ferry gc                      # staging in the current directory
  ferry gc closure.tar ./install
  ferry gc -o json /srv/archives`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
				return err
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			found, err := relocate.FindStaging(args)
			if err != nil {
				return err
			}
			rep := gcReport{Removed: []gcEntry{}}
			var errs []error
			for _, dir := range found {
				n, err := relocate.RemoveStaging(dir)
				switch {
				case errors.Is(err, relocate.ErrStageInUse):
					rep.InUse = append(rep.InUse, dir)
				case err != nil:
					errs = append(errs, err)
				default:
					rep.Removed = append(rep.Removed, gcEntry{Path: dir, Bytes: n})
					rep.Bytes += n
				}
			}
			if g.json() {
				if err := writeJSON(os.Stdout, rep); err != nil {
					return err
				}
			} else {
				for _, e := range rep.Removed {
					fmt.Printf("removed %s (%d bytes)\n", e.Path, e.Bytes)
				}
				for _, d := range rep.InUse {
					g.progress("kept %s: a running ferry is using it", d)
				}
				g.result("removed %d staging directories, %d bytes freed", len(rep.Removed), rep.Bytes)
			}
			return errors.Join(errs...)
		},
	}
}
