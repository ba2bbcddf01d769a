package main

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/relocate"
)

func newMirrorCmd(g *globalFlags) *cobra.Command {
	var lockPath, to, version, toArchive, fromArchive, from string
	var signKeyPath, lockKeyPath, sincePath, maxSizeFlag string
	var shardFlag string
	var shardWait time.Duration
	var flatten, allowDowngrade, installByDigest bool
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
			settings, err := g.settings()
			if err != nil {
				return err
			}
			opts := ferry.MirrorOptions{Env: env, LockPath: lockPath, Config: g.config, Settings: settings, Trust: g.trustOptions(),
				To: to, ToArchive: toArchive, Archive: aopts, SincePath: sincePath, FromArchive: fromArchive, LockKey: lockKey,
				From: fromMap, Shard: shard, ShardWait: shardWait, SignKey: signKey, Hooks: g.hooks(),
				Flatten: flatten, AllowBrokenReferences: installByDigest, AllowDowngrade: allowDowngrade}
			if fromArchive == "" {
				if opts.Inputs, opts.Input, err = mirrorInputs(cmd, g, args, lockPath, version); err != nil {
					return err
				}
				opts.Roots, opts.LockNamed = args, cmd.Flags().Changed("lock")
			}
			res, err := ferry.Mirror(cmd.Context(), opts)
			if err != nil {
				return flagError(brokenLayoutHint(err), args)
			}
			g.untrusted = res.Untrusted
			return reportMirror(g, res.Lock, res.Report, res.Wrote)
		},
	}
	c.Flags().StringVar(&lockPath, "lock", lock.DefaultFile, "lock file to mirror and update")
	c.Flags().StringVar(&to, "to", "", "mirror registry HOST[/PREFIX] (default: mirror.to in ferry.yaml)")
	c.Flags().StringVar(&version, "version", "", "semver constraint for ROOT references without a tag")
	g.registerSelection(c)
	c.Flags().StringVar(&toArchive, "to-archive", "", "write the closure, its mixins and the lock into this tar archive instead of a registry")
	c.Flags().StringVar(&fromArchive, "from-archive", "", "copy an archive written by --to-archive into the registry named by --to")
	c.Flags().StringVar(&signKeyPath, "sign-key", "", "cosign private key (cosign.key; password in $COSIGN_PASSWORD): sign the lock written into LOCK.sig, as cosign sign-blob does")
	c.Flags().StringVar(&lockKeyPath, "lock-key", "", "with --from-archive: cosign public key (cosign.pub); refuse the archive before pushing anything unless its ferry.lock.sig verifies over its ferry.lock")
	c.Flags().StringVar(&sincePath, "since", "", "with --to-archive: write only what an earlier import of this lock (OLD.lock) lacks; the import takes the rest from the mirror")
	c.Flags().StringVar(&maxSizeFlag, "max-size", "", "with --to-archive: split the archive into parts FILE.part1.tar, FILE.part2.tar, … of at most this size (4GiB, 700MB, bytes)")
	c.Flags().StringVar(&shardFlag, "shard", "", "copy one part I/N of the lock (1 ≤ I ≤ N; auto/N takes I from $JOB_COMPLETION_INDEX+1 or $CI_NODE_INDEX), for N processes run at once (a Kubernetes Indexed Job, a CI matrix): each blob is uploaded by one shard, each package's manifests and tag by one shard once its blobs are in the mirror")
	c.Flags().DurationVar(&shardWait, "shard-wait", time.Hour, "with --shard: how long a package waits for the blobs other shards upload")
	c.Flags().BoolVar(&flatten, "flatten", false, "join each repository path below --to HOST/NAMESPACE into one component (a/b/c -> NAMESPACE/a-b-c), for registries that take NAMESPACE/NAME only (Quay, Docker Hub); the lock records where each package went")
	c.Flags().BoolVar(&installByDigest, "install-by-digest", false, "allow a --to HOST/PREFIX that breaks partially qualified dependency references (Crossplane's org/name): the cluster installs with ferry install's manifests, which pin every package by digest and turn dependency resolution off, so no reference is qualified inside the mirror; the broken references are listed as warnings")
	c.Flags().BoolVar(&allowDowngrade, "allow-downgrade", false, "with --from-archive: import an archive whose lock is older (a lower serial) than the one --lock already holds; refused with exit code 3 otherwise")
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

// mirrorInputs returns the inputs to lock before mirroring: none (nil)
// to mirror the --lock file as it is (--lock given without ROOTs, or no
// ROOTs, no ferry.yaml and a lock there), else the MirrorSet of ROOTs or
// ferry.yaml and the input file it was read from.
func mirrorInputs(cmd *cobra.Command, g *globalFlags, args []string, lockPath, version string) (*mirrorset.MirrorSet, string, error) {
	if len(args) == 0 && (cmd.Flags().Changed("lock") || !fileExists(mirrorset.DefaultFile) && fileExists(lockPath)) {
		return nil, "", nil
	}
	return g.inputs(args, version)
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

// brokenLayoutHint adds to a layout refusal the flag that allows it.
func brokenLayoutHint(err error) error {
	if !errors.Is(err, relocate.ErrBrokenLayout) {
		return err
	}
	var broken *relocate.BrokenLayoutError
	if errors.As(err, &broken) && broken.Alternative.Host != "" {
		err = fmt.Errorf("%w\nuse --to %s: it keeps every reference working", err, broken.Alternative)
	}
	return fmt.Errorf("%w\nor, when the cluster installs with ferry install's manifests (every package pinned by digest, dependency resolution off), pass --install-by-digest", err)
}
