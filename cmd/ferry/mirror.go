package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/relocate"
)

func newMirrorCmd(g *globalFlags) *cobra.Command {
	var lockPath, to, version string
	c := &cobra.Command{
		Use:   "mirror [ROOT...|--lock F] --to HOST[/PREFIX]",
		Short: "Copy the locked closure into a mirror registry",
		Long: `Mirror copies every package of the closure into HOST/PREFIX with oras-go:
SRCHOST/PATH lands in HOST/PREFIX/PATH with its digest unchanged, its tag,
and its cosign signatures. Content the mirror has is skipped, blobs already
pushed to another repository of the mirror are mounted, and a re-run after
an interruption copies only what is missing. Mirror locations are written
into the lock.

With ROOTs (or a ferry.yaml and no --lock), the closure is resolved and
locked first, keeping versions already in the lock.`,
		Example: `  ferry mirror --to registry.internal/mirror            # ferry.yaml + ferry.lock
  ferry mirror --lock ferry.lock --to 127.0.0.1:5000/mirror -j 16
  ferry mirror ghcr.io/acme/app:v1.2.0 --to registry.internal/mirror`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
				return err
			}
			if to != "" {
				// A bad --to (say, one with credentials in it) fails before
				// any registry is contacted.
				if _, err := relocate.ParseMapping(to); err != nil {
					return err
				}
			}
			env, err := g.env()
			if err != nil {
				return err
			}
			lockFlag := cmd.Flags().Changed("lock")
			if !lockFlag && len(args) == 0 && !fileExists(mirrorset.DefaultFile) && fileExists(lockPath) {
				// No inputs to resolve: mirror the lock as it is.
				lockFlag = true
			}
			var l *lock.Lock
			var ms *mirrorset.MirrorSet
			if lockFlag && len(args) > 0 {
				return exitcode.BadInput("give ROOTs or --lock, not both")
			}
			if lockFlag {
				if l, err = lock.Read(lockPath); err != nil {
					return err
				}
			} else {
				if ms, _, err = mirrorset.FromArgs(args, version); err != nil {
					return err
				}
				prev, err := readLockIfExists(lockPath)
				if err != nil {
					return err
				}
				if prev != nil && prev.Inputs == ms.Digest() {
					l = prev
				} else {
					nl, gr, err := env.Lock(cmd.Context(), ms, prev, ferryUpdateNone)
					if err != nil {
						return err
					}
					warn(gr.Warnings)
					l = nl
				}
			}
			if to == "" && ms != nil {
				to = ms.Mirror.To
			}
			mapping, err := relocate.ParseMapping(to)
			if err != nil {
				return err
			}
			mixins, err := env.FetchMixins(cmd.Context(), l) // fail closed before copying anything
			if err != nil {
				return err
			}
			defer mixins.Close()
			rep, err := relocate.Mirror(cmd.Context(), l, relocate.Options{
				Source: env.Client, To: mapping, Concurrency: g.jobs,
				Progress: func(r relocate.PackageResult) {
					g.progress("mirrored %s -> %s@%s (copied %d, mounted %d, skipped %d)", r.Source, r.Mirror, r.Digest, r.Copied, r.Mounted, r.Skipped)
				},
			})
			if err != nil {
				return err
			}
			pushed, err := mixins.Push(cmd.Context(), mapping)
			if err != nil {
				return err
			}
			for _, m := range pushed {
				g.progress("mirrored mixin %s %s -> %s", m.Name, m.Version, m.Mirror)
			}
			if err := l.Write(lockPath); err != nil {
				return fmt.Errorf("writing %s: %w", lockPath, err)
			}
			if g.json() {
				return writeJSON(os.Stdout, rep)
			}
			g.progress("mirrored %d packages to %s; lock %s updated", len(rep.Packages), rep.To, lockPath)
			return nil
		},
	}
	c.Flags().StringVar(&lockPath, "lock", lock.DefaultFile, "lock file to mirror and update")
	c.Flags().StringVar(&to, "to", "", "mirror registry HOST[/PREFIX] (default: mirror.to in ferry.yaml)")
	c.Flags().StringVar(&version, "version", "", "semver constraint for ROOT references without a tag")
	return c
}
