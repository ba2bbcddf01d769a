package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/relocate"
)

func newMirrorCmd(g *globalFlags) *cobra.Command {
	var lockPath, to, version, toArchive, fromArchive string
	c := &cobra.Command{
		Use:   "mirror [ROOT...|--lock F] --to HOST[/PREFIX] | --to-archive FILE.tar",
		Short: "Copy the locked closure into a mirror registry",
		Long: `Mirror copies every package of the closure into HOST/PREFIX with oras-go:
SRCHOST/PATH lands in HOST/PREFIX/PATH with its digest unchanged, its tag,
and its cosign signatures. Content the mirror has is skipped, blobs already
pushed to another repository of the mirror are mounted, and a re-run after
an interruption copies only what is missing. Mirror locations are written
into the lock.

With ROOTs (or a ferry.yaml and no --lock), the closure is resolved and
locked first, keeping versions already in the lock.

For an air gap, --to-archive writes the closure, its mixins and the lock
into one tar (an OCI image layout with ferry.lock inside); on the other
side, --from-archive FILE.tar --to HOST[/PREFIX] pushes it into the
private registry and writes the lock with its mirror locations.

A failed push is retried with its content read again; a package that
still fails does not stop the others, and every failure is reported at
the end (exit 1). --to-archive builds the archive in .FILE.tar.ferry-stage-KEY
beside it (KEY: from the lock's digest), kept after a failure or a kill:
the next run with the same lock resumes it. ferry gc removes what is left.`,
		Example: `  ferry mirror --to registry.internal/mirror            # ferry.yaml + ferry.lock
  ferry mirror --lock ferry.lock --to 127.0.0.1:5000/mirror -j 16
  ferry mirror ghcr.io/acme/app:v1.2.0 --to registry.internal/mirror
  ferry mirror --to-archive closure.tar                  # connected side
  ferry mirror --from-archive closure.tar --to registry.airgap/mirror`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
				return err
			}
			if err := checkMirrorFlags(args, to, toArchive, fromArchive); err != nil {
				return err
			}
			env, err := g.env()
			if err != nil {
				return err
			}
			defer env.Close()
			progress := func(r relocate.PackageResult) {
				g.progress("mirrored %s -> %s (%s; copied %d, mounted %d, skipped %d)", r.Source, r.Mirror, r.Digest, r.Copied, r.Mounted, r.Skipped)
			}
			if fromArchive != "" {
				mapping, _ := relocate.ParseMapping(to)
				l, rep, err := relocate.FromArchive(cmd.Context(), fromArchive, relocate.Options{
					Source: env.Client, To: mapping, Concurrency: g.jobs, Progress: progress, Formats: env.Formats,
					Retry: env.Client.RetryPolicy(),
				}, func(ctx context.Context, store *oci.ReadOnlyStore, l *lock.Lock) error {
					run := env.Run(ferryUpdateNone)
					for _, x := range env.Extensions() {
						moved, err := x.Import(ctx, run, store, l, mapping)
						progressMoved(g, moved)
						if err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return err
				}
				return finishMirror(g, l, lockPath, rep)
			}
			l, ms, err := lockToMirror(cmd, g, env, args, lockPath, version)
			if err != nil {
				return err
			}
			transfers, err := prepareExtensions(cmd.Context(), env, l) // fail closed before copying anything
			if err != nil {
				return err
			}
			if toArchive != "" {
				rep, err := relocate.ToArchive(cmd.Context(), l, toArchive, relocate.Options{
					Source: env.Client, Concurrency: g.jobs, Progress: progress, Formats: env.Formats,
					Retry: env.Client.RetryPolicy(),
				}, func(ctx context.Context, store *oci.Store) error {
					for _, t := range transfers {
						if err := t.Archive(ctx, store); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return err
				}
				return finishMirror(g, l, lockPath, rep)
			}
			if to == "" && ms != nil {
				to = ms.Mirror.To
			}
			mapping, err := relocate.ParseMapping(to)
			if err != nil {
				return err
			}
			rep, err := relocate.Mirror(cmd.Context(), l, relocate.Options{
				Source: env.Client, To: mapping, Concurrency: g.jobs, Progress: progress, Formats: env.Formats,
				Retry: env.Client.RetryPolicy(),
			})
			if err != nil {
				return err
			}
			for _, t := range transfers {
				moved, err := t.Push(cmd.Context(), mapping)
				progressMoved(g, moved)
				if err != nil {
					return err
				}
			}
			return finishMirror(g, l, lockPath, rep)
		},
	}
	c.Flags().StringVar(&lockPath, "lock", lock.DefaultFile, "lock file to mirror and update")
	c.Flags().StringVar(&to, "to", "", "mirror registry HOST[/PREFIX] (default: mirror.to in ferry.yaml)")
	c.Flags().StringVar(&version, "version", "", "semver constraint for ROOT references without a tag")
	c.Flags().StringVar(&toArchive, "to-archive", "", "write the closure, its mixins and the lock into this tar archive instead of a registry")
	c.Flags().StringVar(&fromArchive, "from-archive", "", "copy an archive written by --to-archive into the registry named by --to")
	return c
}

// prepareExtensions fetches and checks, for every extension (Porter
// mixins), what it carries beside the packages of l, before anything is
// copied.
func prepareExtensions(ctx context.Context, env *ferry.Env, l *lock.Lock) ([]ferry.Transfer, error) {
	run := env.Run(ferryUpdateNone)
	var out []ferry.Transfer
	for _, x := range env.Extensions() {
		t, err := x.Prepare(ctx, run, l)
		if err != nil {
			return nil, err
		}
		if t != nil {
			out = append(out, t)
		}
	}
	return out, nil
}

// progressMoved reports the items an extension mirrored.
func progressMoved(g *globalFlags, moved []ferry.Moved) {
	for _, m := range moved {
		g.progress("mirrored %s %s %s -> %s", m.Format, m.Name, m.Version, m.Mirror)
	}
}

// checkMirrorFlags rejects contradictory flags before any registry is
// contacted: one destination, and an archive import takes no ROOTs.
func checkMirrorFlags(args []string, to, toArchive, fromArchive string) error {
	switch {
	case toArchive != "" && fromArchive != "":
		return exitcode.BadInput("give --to-archive or --from-archive, not both")
	case toArchive != "" && to != "":
		return exitcode.BadInput("give --to or --to-archive, not both")
	case fromArchive != "" && len(args) > 0:
		return exitcode.BadInput("--from-archive takes no ROOTs: the archive carries its lock")
	case fromArchive != "" && to == "":
		return exitcode.BadInput("--from-archive needs --to HOST[/PREFIX]")
	}
	if to != "" {
		// A bad --to (say, one with credentials in it) fails before any
		// registry is contacted.
		if _, err := relocate.ParseMapping(to); err != nil {
			return err
		}
	}
	return nil
}

// lockToMirror returns the lock to mirror: the --lock file as it is, or
// the closure of ROOTs (or ferry.yaml) locked afresh, keeping versions the
// existing lock holds.
func lockToMirror(cmd *cobra.Command, g *globalFlags, env *ferry.Env, args []string, lockPath, version string) (*lock.Lock, *mirrorset.MirrorSet, error) {
	lockFlag := cmd.Flags().Changed("lock")
	if !lockFlag && len(args) == 0 && !fileExists(mirrorset.DefaultFile) && fileExists(lockPath) {
		// No inputs to resolve: mirror the lock as it is.
		lockFlag = true
	}
	if lockFlag && len(args) > 0 {
		return nil, nil, exitcode.BadInput("give ROOTs or --lock, not both")
	}
	if lockFlag {
		l, err := lock.Read(lockPath)
		return l, nil, err
	}
	ms, input, err := g.inputs(args, version)
	if err != nil {
		return nil, nil, err
	}
	prev, err := readLockIfExists(lockPath)
	if err != nil {
		return nil, nil, err
	}
	if prev != nil && prev.Inputs == ms.Digest() {
		return prev, ms, nil
	}
	l, graph, err := env.Lock(cmd.Context(), ms, prev, ferryUpdateNone)
	if err != nil {
		return nil, nil, err
	}
	warn(graph.Warnings)
	ferry.RecordInput(l, input, lockPath)
	return l, ms, nil
}

// finishMirror writes the lock with its mirror locations and reports.
func finishMirror(g *globalFlags, l *lock.Lock, lockPath string, rep *relocate.Report) error {
	if err := l.Write(lockPath); err != nil {
		return fmt.Errorf("writing %s: %w", lockPath, err)
	}
	if g.json() {
		return writeJSON(os.Stdout, rep)
	}
	g.progress("mirrored %d packages to %s; lock %s updated", len(rep.Packages), rep.To, lockPath)
	return nil
}
