package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/formats"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/trust"
)

func newMirrorCmd(g *globalFlags) *cobra.Command {
	var lockPath, to, version, toArchive, fromArchive, from string
	var flatten bool
	var signKeyPath, lockKeyPath, sincePath, maxSizeFlag string
	var shardFlag string
	var allowDowngrade bool
	var shardWait time.Duration
	var installByDigest bool
	c := &cobra.Command{
		Use:   "mirror [ROOT...|--lock F] [--from HOST[/PREFIX]] --to HOST[/PREFIX] | --to-archive FILE.tar",
		Short: "Copy the locked closure into a mirror registry",
		Long: `Mirror copies every package of the closure into HOST/PREFIX with oras-go:
SRCHOST/PATH lands in HOST/PREFIX/PATH with its digest unchanged, its tag,
and the cosign signatures and OCI referrers of every manifest of its graph
(exactly those the lock names, when it records them; what it does not
name is left behind with a warning). Content the mirror has is skipped, blobs already
pushed to another repository of the mirror are mounted, and a re-run after
an interruption copies only what is missing. Mirror locations are written
into the lock; a signed lock (LOCK.sig beside it, or carried by the
archive) is left as it is, and they go to LOCK.mirror.yaml beside it,
which verify and install read. --sign-key cosign.key signs the lock
written. --from-archive --lock-key cosign.pub refuses, before pushing
anything, an archive whose ferry.lock.sig is missing or does not verify.

With ROOTs (or a ferry.yaml and no --lock), the closure is resolved and
locked first, keeping versions already in the lock. A lock made from
other inputs (ferry.yaml's, when ROOTs are references) is never
overwritten: that is exit 2, and --lock F writes the new lock to F.

For an air gap, --to-archive writes the closure, its mixins and the lock
into one tar (an OCI image layout with ferry.lock inside); on the other
side, --from-archive FILE.tar --to HOST[/PREFIX] pushes it into the
private registry and writes the lock with its mirror locations.

For real media: --since OLD.lock writes only what an earlier import of
OLD.lock lacks (the full new lock, but no blob or manifest reachable from
OLD.lock's packages, no mixin binary OLD.lock names); its import checks,
before pushing anything, that every node the lock names is in the archive
or already in the mirror, and fails (exit 3) listing what is missing.
--max-size 4GiB (KiB, MiB, GiB, KB, MB, GB or bytes) splits the archive
into FILE.part1.tar, FILE.part2.tar, … (FILE without .tar), each a tar of
an OCI layout no larger than the limit, each carrying the lock, its
ferry.lock.sig and ferry-archive.json (lock digest, part K of N); an
archive that fits in one part is written to FILE.tar. --from-archive and
verify --archive take any part (or FILE.tar) and read all parts as one; a
missing part is exit 2, a part of another archive exit 3. A blob larger
than the limit is exit 2, before any tar is written.

Mirror to mirror: --lock F --from HOST[/PREFIX] --to NEW reads every
package from HOST/PREFIX/PATH instead of its source and every mixin from
HOST/PREFIX/porter-mixins/NAME instead of the feed; without --from, the
packages of a source registry that cannot be reached, and the mixins when
the feed cannot be reached, are read from the mirror the lock records
(with a warning). Everything is copied by the locked digest and checked
as from the source: this is how content moves from one mirror to the next
inside an air gap. The mixins are read and checked before any package is
copied. A signed lock's mirrors are in its sidecar LOCK.mirror.yaml, which
records every destination (the latest on top, the default of verify and
install) and where the mixins went.

A failed push is retried with its content read again; a package that
still fails does not stop the others, and every failure is reported at
the end (exit 1). --to-archive builds the archive in .FILE.tar.ferry-stage-KEY
beside it (KEY: from the lock's digest), kept after a failure or a kill:
the next run with the same lock resumes it. ferry gc removes what is left.

Before anything is copied, the packages are checked against the trust
policy (ferry.yaml trust:, --verify-key, see ferry lock --help) and the
signatures the lock records must be at the source with those digests; any
failure is listed with its rule and exits 3, with nothing copied. A
signature a rule verifies that the lock does not record (a lock written
before signing) is added to the lock and copied, with a warning; a signed
lock cannot gain it and the run exits 3 (run ferry lock again).

Sharded: --lock F --to HOST[/PREFIX] --shard I/N (1 ≤ I ≤ N) copies one
deterministic part of the lock, so N processes on N machines (a
Kubernetes Indexed Job, a CI matrix) mirror it together with no
coordination but the mirror. The blobs are dealt to the shards by size;
each is uploaded by its shard into one repository of the mirror. Each
package's manifests, tag and signatures are pushed by one shard after
every blob of the package is in the mirror (it waits, up to --shard-wait,
for the other shards' uploads, then mounts them). Every shard writes the
same lock; shard 1 pushes the mixins. A killed shard is run again with the
same I/N. ferry verify after the last shard checks the whole mirror.`,
		Example: `  ferry mirror --to registry.internal/mirror            # ferry.yaml + ferry.lock
  ferry mirror --lock ferry.lock --to 127.0.0.1:5000/mirror -j 16
  ferry mirror ghcr.io/acme/app:v1.2.0 --to registry.internal/mirror
  ferry mirror --to-archive closure.tar                  # connected side
  ferry mirror --from-archive closure.tar --to registry.airgap/mirror
  ferry mirror --to-archive update.tar --since last-sent.lock --max-size 4GiB
  ferry mirror --from-archive update.part1.tar --to registry.airgap/mirror
  ferry mirror --lock ferry.lock --from registry.dmz/mirror --to registry.prod/mirror
  ferry mirror --lock ferry.lock --to registry.internal/mirror --shard 2/4`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
				return err
			}
			if err := checkMirrorFlags(args, to, toArchive, fromArchive); err != nil {
				return err
			}
			shard, err := shardFlagValue(shardFlag, args, toArchive, fromArchive)
			if err != nil {
				return err
			}
			if shard == nil && cmd.Flags().Changed("shard-wait") {
				return exitcode.BadInput("--shard-wait goes with --shard I/N")
			}
			aopts, err := archiveOptions(toArchive, sincePath, maxSizeFlag)
			if err != nil {
				return err
			}
			fromMap, err := mirrorFlag(from)
			if err != nil {
				return err
			}
			if fromMap != nil && (toArchive != "" || fromArchive != "" || len(args) > 0) {
				return exitcode.BadInput("--from copies a lock's closure from one mirror registry to another: give --lock F --to HOST[/PREFIX], no ROOTs, no archive")
			}
			signKey, err := loadSignKey(signKeyPath)
			if err != nil {
				return err
			}
			lockKey, err := loadKey(lockKeyPath)
			if err != nil {
				return err
			}
			env, err := g.env()
			if err != nil {
				return err
			}
			defer env.Close()
			defer g.stopProgress()
			progress := func(r relocate.PackageResult) {
				g.progress("mirrored %s -> %s (%s; copied %d, mounted %d, skipped %d)", r.Source, r.Mirror, r.Digest, r.Copied, r.Mounted, r.Skipped)
			}
			if fromArchive != "" {
				reporter := g.startProgress() // bars on a terminal, plain lines on a pipe
				mapping, _ := relocate.ParseMapping(to)
				mapping.Flatten = flatten
				if err := mapping.CheckFlatten(); err != nil {
					return err
				}
				var signedData, signedSig []byte
				check := func(l *lock.Lock, data, sig []byte) error { // before anything is pushed
					if err := checkArchiveLock(fromArchive, lockKey, data, sig); err != nil {
						return err
					}
					if err := checkFreshLock(l, fromArchive+"'s "+relocate.ArchiveLockFile, lockPath, allowDowngrade); err != nil {
						return err
					}
					if sig == nil && signKey == nil {
						if err := lock.CheckUnsignedWrite(lockPath, g.requireSignedLock(env, lockPath)); err != nil {
							return exitcode.With(exitcode.Mismatch, err)
						}
					}
					if sig != nil && signKey == nil {
						signedData, signedSig = data, sig
					}
					return nil
				}
				l, rep, err := relocate.FromArchiveChecked(cmd.Context(), fromArchive, relocate.Options{
					Source: env.Client, To: mapping, Concurrency: g.jobs, Progress: progress, Reporter: reporter, Formats: env.Formats,
					Retry: env.Client.RetryPolicy(), AllowBrokenReferences: installByDigest,
				}, check, func(ctx context.Context, store *oci.ReadOnlyStore, l *lock.Lock) error {
					moved, err := env.Import(ctx, store, l, mapping)
					progressMoved(g, moved)
					return err
				})
				if err != nil {
					return brokenLayoutHint(err)
				}
				if signedSig != nil {
					g.stopProgress() // results and the lock's report after the last bar
					return finishSignedImport(g, l, lockPath, signedData, signedSig, mapping.String(), rep)
				}
				g.stopProgress() // results and the lock's report after the last bar
				return finishMirrorSigned(g, l, lockPath, rep, signKey, nil, "")
			}
			l, ms, err := lockToMirror(cmd, g, env, args, lockPath, version, toArchive == "" && to == "")
			if err != nil {
				return err
			}
			// The resolution's Reporter (lockToMirror) has ended: the
			// copy's counts start from zero.
			reporter := g.startProgress() // bars on a terminal, plain lines on a pipe
			// A signed lock is never rewritten in place (see lock/sidecar.go).
			keep, lockSig, err := signedLockToMirror(lockPath, l, signKey)
			if err != nil {
				return err
			}
			// A signed lock's mirror locations, its mixins' included, are
			// in its sidecar: mirror to mirror reads them there. (An
			// archive carries the lock's own bytes, with its signature.)
			if toArchive == "" {
				fromName := ""
				if fromMap != nil {
					fromName = fromMap.String()
				}
				if err := lock.ApplyMirrors(lockPath, l, fromName); err != nil {
					return err
				}
			}
			pol, err := g.lockTrustPolicy(env, l, ms, lockPath)
			if err != nil {
				return err
			}
			var origin func(*lock.Package) string
			if toArchive == "" {
				if origin, err = env.Origin(cmd.Context(), l, lockPath, fromMap); err != nil {
					return err
				}
			}
			if err := g.checkTrustDefault(pol, l); err != nil { // before anything is copied
				return err
			}
			unrecorded, err := env.CheckTrustAt(cmd.Context(), pol, l, origin) // before anything is copied
			if err != nil {
				return err
			}
			if err := unrecordedSignatures(lockPath, unrecorded, keep != nil); err != nil {
				return err
			}
			// Mixins come from the feed, or, from mirror to mirror, from
			// the other mirror; fetched and checked before anything is
			// copied.
			ext, err := env.PrepareMirror(cmd.Context(), l, fromMap, toArchive != "")
			if err != nil {
				return err
			}
			if toArchive != "" {
				if signKey != nil {
					if lockSig, err = writeLock(g, l, lockPath, signKey); err != nil {
						return err
					}
				}
				sources, err := env.Sources(ms)
				if err != nil {
					return err
				}
				rep, written, err := relocate.ToArchiveParts(cmd.Context(), l, lockSig, toArchive, relocate.Options{
					Source: sources, Target: env.Client, Concurrency: g.jobs, Progress: progress, Reporter: reporter, Formats: env.Formats,
					Retry: env.Client.RetryPolicy(),
				}, aopts, func(ctx context.Context, store *oci.Store) error {
					return ext.Transfers.Archive(ctx, store)
				})
				if err != nil {
					return err
				}
				for i, p := range written.Paths {
					g.progress("wrote %s (%d bytes, part %d of %d)", p, written.Sizes[i], i+1, len(written.Paths))
				}
				if aopts.Since != nil {
					g.progress("incremental archive since %s: %d blobs and manifests left out, %d carried", sincePath, written.Omitted, written.Blobs)
				}
				g.stopProgress() // results and the lock's report after the last bar
				return finishMirrorSigned(g, l, lockPath, rep, signKey, keep, "")
			}
			if to == "" && ms != nil {
				to = ms.Mirror.To
			}
			mapping, err := relocate.ParseMapping(to)
			if err != nil {
				return err
			}
			mapping.Flatten = flatten
			if err := mapping.CheckFlatten(); err != nil {
				return err
			}
			sources, err := env.Sources(ms)
			if err != nil {
				return err
			}
			ropts := relocate.Options{
				Source: sources, Target: env.Client, To: mapping, Concurrency: g.jobs, Progress: progress, Reporter: reporter, Formats: env.Formats,
				Retry: env.Client.RetryPolicy(), Origin: origin, AllowBrokenReferences: installByDigest,
			}
			var rep *relocate.Report
			if shard != nil {
				rep, err = relocate.MirrorShard(cmd.Context(), l, ropts, relocate.ShardOptions{Shard: *shard, Wait: shardWait, Log: g.progress})
				if shard.Index != 1 {
					ext = nil // mixins go up with shard 1 alone
				}
			} else {
				rep, err = relocate.Mirror(cmd.Context(), l, ropts)
			}
			if err != nil {
				return brokenLayoutHint(err)
			}
			if ext != nil {
				moved, err := ext.Push(cmd.Context(), mapping)
				progressMoved(g, moved)
				if err != nil {
					return err
				}
			}
			g.stopProgress() // results and the lock's report after the last bar
			return finishMirrorSigned(g, l, lockPath, rep, signKey, keep, mapping.String())
		},
	}
	c.Flags().StringVar(&lockPath, "lock", lock.DefaultFile, "lock file to mirror and update")
	c.Flags().StringVar(&to, "to", "", "mirror registry HOST[/PREFIX] (default: mirror.to in ferry.yaml)")
	c.Flags().StringVar(&version, "version", "", "semver constraint for ROOT references without a tag")
	g.registerSelection(c)
	c.Flags().StringVar(&toArchive, "to-archive", "", "write the closure, its mixins and the lock into this tar archive instead of a registry")
	c.Flags().BoolVar(&allowDowngrade, "allow-downgrade", false, "with --from-archive: import an archive whose lock is older (a lower serial) than the one --lock already holds; refused with exit code 3 otherwise")
	c.Flags().StringVar(&fromArchive, "from-archive", "", "copy an archive written by --to-archive into the registry named by --to")
	c.Flags().StringVar(&signKeyPath, "sign-key", "", "cosign private key (cosign.key; password in $COSIGN_PASSWORD): sign the lock written into LOCK.sig, as cosign sign-blob does")
	c.Flags().StringVar(&lockKeyPath, "lock-key", "", "with --from-archive: cosign public key (cosign.pub); refuse the archive before pushing anything unless its ferry.lock.sig verifies over its ferry.lock")
	c.Flags().StringVar(&sincePath, "since", "", "with --to-archive: write only what an earlier import of this lock (OLD.lock) lacks; the import takes the rest from the mirror")
	c.Flags().StringVar(&maxSizeFlag, "max-size", "", "with --to-archive: split the archive into parts FILE.part1.tar, FILE.part2.tar, … of at most this size (4GiB, 700MB, bytes)")
	c.Flags().StringVar(&shardFlag, "shard", "", "copy one part I/N of the lock (1 ≤ I ≤ N; auto/N takes I from $JOB_COMPLETION_INDEX+1 or $CI_NODE_INDEX), for N processes run at once (a Kubernetes Indexed Job, a CI matrix): each blob is uploaded by one shard, each package's manifests and tag by one shard once its blobs are in the mirror")
	c.Flags().DurationVar(&shardWait, "shard-wait", time.Hour, "with --shard: how long a package waits for the blobs other shards upload")
	c.Flags().BoolVar(&flatten, "flatten", false, "join each repository path below --to HOST/NAMESPACE into one component (a/b/c -> NAMESPACE/a-b-c), for registries that take NAMESPACE/NAME only (Quay, Docker Hub); the lock records where each package went")
	c.Flags().BoolVar(&installByDigest, "install-by-digest", false, "allow a --to HOST/PREFIX that breaks partially qualified dependency references (Crossplane's org/name): the cluster installs with ferry install's manifests, which pin every package by digest and turn dependency resolution off, so no reference is qualified inside the mirror; the broken references are listed as warnings")
	c.Flags().StringVar(&from, "from", "", "mirror to mirror: read the lock's packages and mixins from this mirror HOST[/PREFIX] instead of the sources and the feed")
	return c
}

// shardFlagValue reads --shard I/N before any registry is contacted; nil
// when it is not given.
func shardFlagValue(s string, args []string, toArchive, fromArchive string) (*relocate.Shard, error) {
	if s == "" {
		return nil, nil
	}
	if len(args) > 0 {
		return nil, exitcode.BadInput("--shard copies part of a lock: run ferry lock first, then every shard with --lock F (no ROOTs)")
	}
	if toArchive != "" || fromArchive != "" {
		return nil, exitcode.BadInput("--shard splits a mirror run to a registry (--lock F --to HOST[/PREFIX]), not an archive")
	}
	sh, err := relocate.ParseShard(s)
	if err != nil {
		return nil, exitcode.BadInput("--shard: %w", err)
	}
	return &sh, nil
}

// archiveOptions reads --since and --max-size, which only --to-archive
// takes.
func archiveOptions(toArchive, sincePath, maxSize string) (relocate.ArchiveOptions, error) {
	var out relocate.ArchiveOptions
	if toArchive == "" && (sincePath != "" || maxSize != "") {
		return out, exitcode.BadInput("--since and --max-size shape an archive: give them with --to-archive")
	}
	if maxSize != "" {
		n, err := relocate.ParseSize(maxSize)
		if err != nil {
			return out, exitcode.BadInput("--max-size: %w", err)
		}
		out.MaxSize = n
	}
	if sincePath != "" {
		old, err := lock.Read(sincePath)
		if err != nil {
			return out, exitcode.BadInput("--since: %w", err)
		}
		data, err := os.ReadFile(sincePath)
		if err != nil {
			return out, exitcode.BadInput("--since: %w", err)
		}
		out.Since, out.SinceData = old, data
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
// existing lock holds. With ROOTs, --lock F names the lock to write.
// needTo (neither --to nor --to-archive) requires mirror.to from the
// inputs: it is checked before any registry is contacted.
func lockToMirror(cmd *cobra.Command, g *globalFlags, env *ferry.Env, args []string, lockPath, version string, needTo bool) (*lock.Lock, *mirrorset.MirrorSet, error) {
	lockFlag := cmd.Flags().Changed("lock") && len(args) == 0
	if !lockFlag && len(args) == 0 && !fileExists(mirrorset.DefaultFile) && fileExists(lockPath) {
		// No inputs to resolve: mirror the lock as it is.
		lockFlag = true
	}
	if lockFlag {
		l, err := lock.Read(lockPath)
		if err == nil && needTo {
			err = missingTo(args)
		}
		if err == nil && g.config != "" {
			// --config's mirrors: read the sources from them. The run's
			// source mirrors are set by the first Sources call.
			var cfg *mirrorset.MirrorSet
			if cfg, err = mirrorset.LoadSettings(g.config, formats.All()); err == nil {
				_, err = env.Sources(cfg)
			}
		}
		return l, nil, err
	}
	ms, input, err := g.inputs(args, version)
	if err != nil {
		return nil, nil, err
	}
	if needTo && ms.Mirror.To == "" {
		return nil, nil, missingTo(args)
	}
	prev, err := readLockIfExists(lockPath)
	if err != nil {
		return nil, nil, err
	}
	if err := guardLock(cmd, args, prev, ms, input, lockPath); err != nil {
		return nil, nil, err
	}
	if prev != nil && prev.Inputs == ms.Digest() {
		return prev, ms, nil
	}
	g.startResolving() // ended before the copy's Reporter starts
	l, graph, err := env.Lock(cmd.Context(), ms, prev, ferryUpdateNone)
	g.stopProgress()
	if err != nil {
		return nil, nil, err
	}
	warn(graph.Warnings)
	ferry.RecordInput(l, input, lockPath)
	return l, ms, nil
}

// missingTo is the error of a mirror run with no destination. When the
// last ROOT looks like one (crane's `copy SRC DST` habit: a registry
// path without tag or digest, or a .tar file), it suggests the flag.
func missingTo(args []string) error {
	const need = "mirror needs a destination: --to HOST[/PREFIX], --to-archive FILE.tar, or mirror.to in ferry.yaml"
	if len(args) < 2 {
		return exitcode.BadInput("%s", need)
	}
	last := args[len(args)-1]
	src := strings.Join(args[:len(args)-1], " ")
	if strings.HasSuffix(last, ".tar") {
		return exitcode.BadInput("%s; to write %s, run: ferry mirror %s --to-archive %s", need, last, src, last)
	}
	if r, err := ociref.Parse(last); err == nil {
		dst := last
		if r.Tag != "" || r.Digest != "" {
			// --to takes HOST[/PREFIX]: the source's path lands under it.
			dst = r.Registry + "/" + path.Dir(r.Repository)
			if path.Dir(r.Repository) == "." {
				dst = r.Registry
			}
		}
		return exitcode.BadInput("%s; if %s is where to copy to, run: ferry mirror %s --to %s", need, last, src, dst)
	}
	return exitcode.BadInput("%s", need)
}

// finishMirror writes the lock with its mirror locations and reports.
func finishMirror(g *globalFlags, l *lock.Lock, lockPath string, rep *relocate.Report) error {
	if err := l.Write(lockPath); err != nil {
		return fmt.Errorf("writing %s: %w", lockPath, err)
	}
	return reportMirror(g, l, rep, "lock "+lockPath)
}

// brokenLayoutHint adds to a layout refusal the flag that allows it.
func brokenLayoutHint(err error) error {
	if !errors.Is(err, relocate.ErrBrokenLayout) {
		return err
	}
	return fmt.Errorf("%w\nor, when the cluster installs with ferry install's manifests (every package pinned by digest, dependency resolution off), pass --install-by-digest", err)
}

// ignoredWarnings words what a mirror run left behind because the lock
// does not name it: signatures and referrers of a package's manifests,
// and an archive's other repositories and tags.
func ignoredWarnings(rep *relocate.Report) []string {
	var out []string
	for _, p := range rep.Packages {
		for _, i := range p.Ignored {
			out = append(out, fmt.Sprintf("not copied, the lock does not name it: %s", i))
		}
	}
	for _, i := range rep.Ignored {
		out = append(out, fmt.Sprintf("not imported, the lock does not name it: %s", i))
	}
	for _, e := range rep.BrokenReferences {
		out = append(out, fmt.Sprintf("--install-by-digest: %s: %q resolves inside the mirror to %s, not to its mirrored copy %s; install with ferry install's manifests (pinned by digest, dependency resolution off)", e.Parent, e.Ref, e.Resolves, e.Want))
	}
	return out
}

// unrecordedSignatures reports the signatures the trust check verified at
// the sources that the lock did not record (a lock written before the
// packages were signed): they are now in the lock and are copied, with a
// warning that names them. A signed lock (signed, the lock kept as it is)
// cannot gain them: the run is refused before anything is copied (exit
// 3), naming ferry lock to record them, or --sign-key to sign the lock
// this run writes.
func unrecordedSignatures(lockPath string, added []trust.Unrecorded, signed bool) error {
	if len(added) == 0 {
		return nil
	}
	lines := make([]string, len(added))
	for i, u := range added {
		lines[i] = u.String()
	}
	if signed {
		return exitcode.Mismatchf("%s is signed and does not record %d signatures the trust policy verified at the source (attached after the lock was written), which verify and install would look for in the mirror:\n%s\nrun ferry lock --sign-key cosign.key to record them, or ferry mirror --sign-key cosign.key to sign the lock this run writes",
			lockPath, len(added), strings.Join(lines, "\n"))
	}
	msgs := make([]string, len(added))
	for i, l := range lines {
		msgs[i] = fmt.Sprintf("%s did not record %s, which the trust policy verified at the source (attached after the lock was written): recorded and copied; run ferry lock to record signatures when locking", lockPath, l)
	}
	warn(msgs)
	return nil
}
