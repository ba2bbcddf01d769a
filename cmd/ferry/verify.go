package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/verify"
)

func newVerifyCmd(g *globalFlags) *cobra.Command {
	var lockPath, mirror, keyPath, lockKeyPath, archivePath string
	var deep, reresolve, reresolveSources bool
	c := &cobra.Command{
		Use:   "verify [--lock F] [--mirror HOST[/PREFIX]] [--deep] [--key cosign.pub] [--lock-key cosign.pub] [--resolve] [--resolve-sources]",
		Short: "Check a lock against a mirror",
		Long: `Verify checks that every locked manifest and every child descriptor is in
the mirror with the locked digest and size, and that each locked tag points
at the locked digest. --deep also downloads and re-hashes every blob,
each digest once however many repositories hold it (each repository is
still asked for every blob its packages need). An
input file (ferry.yaml, porter.yaml, crossplane.yaml) that changed since
it was locked makes the lock stale. --resolve proves the mirror alone is
enough: it resolves that input again with every repository read from the
mirror (the --mirror mapping, else the lock's recorded mirror: fields),
never from a source registry or the mixin feed, keeping the locked
versions while they satisfy every constraint, and requires the same
closure with the same digests and every locked tag in the mirror pointing
at the locked digest. Mixins are not resolved again; their mirrored
artifacts are checked as always. --resolve-sources resolves it again
against the source registries (and the mixin feed) instead, and reports a
tag that moved or a closure that changed there. --key cosign.pub requires every package's
signature in the mirror (cosign's manifest tagged sha256-HEX.sig beside
it, or a Sigstore bundle attached as an OCI referrer, copied by ferry
mirror) to name the locked digest and verify with the key, checked with
Sigstore's libraries; when the lock records the package's signatures, the
one that verifies must be one of them. Every signature, attestation, SBOM
and referrer the lock records must be in the mirror with its recorded
digest, and one attached in the mirror that the lock does not name is a
problem. --lock-key cosign.pub requires the lock's own signature, LOCK.sig
beside it, as cosign sign-blob writes it. Every problem is listed; the exit
code is 3 if there is any.`,
		Example: `  ferry verify
  ferry verify --deep -o json
  ferry verify --resolve           # the mirror alone resolves to the lock
  ferry verify --resolve-sources   # the sources still agree with the lock
  ferry verify --key cosign.pub --lock-key cosign.pub
  ferry verify --lock ferry.lock --mirror registry.dr.acme.com/mirror
  ferry verify --archive closure.tar --lock-key cosign.pub   # offline, before an import`,
		Args: cobraExactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
				return err
			}
			key, err := loadKey(keyPath)
			if err != nil {
				return err
			}
			lockKey, err := loadKey(lockKeyPath)
			if err != nil {
				return err
			}
			opts := ferry.VerifyOptions{LockPath: lockPath, Archive: archivePath, Mirror: mirror, Deep: deep, Key: key, LockKey: lockKey,
				Trust: g.trustOptions(), Resolve: reresolve, ResolveSources: reresolveSources, Hooks: g.hooks()}
			if archivePath == "" { // offline, the archive alone, needs no registry client
				env, err := g.env()
				if err != nil {
					return err
				}
				defer env.Close()
				if opts.Settings, err = g.settings(); err != nil {
					return err
				}
				opts.Env = env
			}
			rep, err := ferry.Verify(cmd.Context(), opts)
			if err != nil {
				return flagError(err, args)
			}
			return printReport(g, rep, deep || archivePath != "")
		},
	}
	c.Flags().StringVar(&lockPath, "lock", lock.DefaultFile, "lock file to verify")
	c.Flags().StringVar(&archivePath, "archive", "", "check an archive written by mirror --to-archive offline instead, before importing it: its lock (with --lock-key, its ferry.lock.sig) and every manifest, blob and recorded signature re-hashed")
	c.Flags().StringVar(&mirror, "mirror", "", "read from this mirror HOST[/PREFIX] instead of the one in the lock")
	c.Flags().BoolVar(&deep, "deep", false, "download and re-hash every blob")
	c.Flags().StringVar(&keyPath, "key", "", "cosign public key (cosign.pub): every package must carry a cosign signature in the mirror that verifies with it")
	c.Flags().StringVar(&lockKeyPath, "lock-key", "", "cosign public key (cosign.pub): the lock's signature LOCK.sig (cosign sign-blob) must verify with it")
	c.Flags().BoolVar(&reresolve, "resolve", false, "also resolve ferry.yaml again from the mirror alone (no source, no feed), keeping locked versions, and report every difference")
	c.Flags().BoolVar(&reresolveSources, "resolve-sources", false, "also resolve ferry.yaml again at the sources and the mixin feed, keeping locked versions, and report every difference")
	return c
}

// printReport prints a verification report and ends with exit code 3 if
// it lists any problem.
func printReport(g *globalFlags, rep *verify.Report, deep bool) error {
	if g.json() {
		if err := writeJSON(os.Stdout, newVerifyJSON(rep)); err != nil {
			return err
		}
	} else {
		for _, p := range rep.Problems {
			fmt.Println(p.String())
		}
		if rep.OK() {
			sigs := ""
			if rep.Signatures > 0 {
				sigs = fmt.Sprintf(", %d signatures", rep.Signatures)
			}
			hashed := ""
			if deep {
				// Each distinct blob is read once however many
				// repositories hold it (issue 14).
				hashed = fmt.Sprintf(" (re-hashed: %d unique blobs, %s read)", rep.UniqueBlobs, progress.Bytes(rep.HashedBytes))
			}
			g.result("verified %d packages: %d manifests, %d blobs%s%s", rep.Packages, rep.Manifests, rep.Blobs, sigs, hashed)
		} else {
			fmt.Fprintf(os.Stderr, "ferry: %d problems: the lock and the mirror disagree\n", len(rep.Problems))
		}
	}
	if !rep.OK() {
		return exitSilently(exitcode.Mismatch)
	}
	return nil
}

// loadKey reads the cosign public key a --key or --lock-key flag names;
// no flag gives nil. A missing or malformed key file exits 2.
func loadKey(path string) (*signature.PublicKey, error) {
	if path == "" {
		return nil, nil
	}
	return signature.LoadPublicKey(path)
}

// inputsWhy says why a lock's inputs cannot be read again.
func inputsWhy(path string) string {
	if path == "" {
		return "it was made from command-line roots; lock from a ferry.yaml to use --resolve"
	}
	return path + " is gone"
}
