package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/sizecap"
)

var ferryUpdateNone = ferry.Update{}

func newLockCmd(g *globalFlags) *cobra.Command {
	var lockPath, version, signKeyPath string
	var update []string
	var porterLock bool
	c := &cobra.Command{
		Use:   "lock [ROOT...]",
		Short: "Resolve the closure and write ferry.lock",
		Long: `Lock resolves the closure and writes every package, image and mixin binary
by digest to ferry.lock, atomically. Versions already locked are kept while
they satisfy every constraint; --update re-resolves all of them, or
--update=NAME,... (or --update NAME...) only the named ones (a source repository or its last
path element); a NAME the lock does not hold is exit 2. A second run with
nothing changed leaves the file byte-identical. Given ROOTs, lock never
overwrites a lock made from other inputs (exit 2): pass --lock FILE. With a porter.yaml as ROOT, --porter-lock also writes
Porter's porter.lock.yaml beside it: the mixins the porter.yaml declares,
with their source, url, version and binary digests (Porter's "Mixin
Versioning" proposal).

Every package is checked against the trust policy (ferry.yaml trust:, a
list of rules {match: PREFIX, keys: [cosign.pub], keyless: [{issuer,
subject|subjectRegexp}], required: true}, or {trustedRoot: FILE, rules:
[...]}; --verify-key K is one required rule for every source no rule
matches) before the lock is written: any failure is listed with its rule
and exits 3. Packages no rule matches follow trust.default: warn (the
default once a rule exists: a warning and -o json's untrusted list them),
require (exit 3 naming them) or allow. The lock records each package's cosign signatures,
attestations and SBOMs and OCI referrers, with the rule that verified each.`,
		Example: `  ferry lock                          # ferry.yaml -> ferry.lock
  ferry lock ghcr.io/acme/app:v1.2.0 --lock app.lock
  ferry lock --update                 # move every package to its newest allowed version
  ferry lock --update=mysql           # only mysql
  ferry lock --update mysql redis     # the same for two names
  ferry lock porter.yaml --porter-lock # also porter.lock.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
				return err
			}
			args, update = updateNamesFromArgs(cmd, args, update)
			ms, input, err := g.inputs(args, version)
			if err != nil {
				return err
			}
			if porterLock && (input == "" || !isPorterYAML(input)) {
				return exitcode.BadInput("--porter-lock needs a porter.yaml as ROOT")
			}
			pol, err := g.trustPolicy(ms, input)
			if err != nil {
				return err
			}
			prev, err := readLockIfExists(lockPath)
			if err != nil {
				return err
			}
			if err := guardLock(cmd, args, prev, ms, input, lockPath); err != nil {
				return err
			}
			if err := checkUpdateNames(updateFrom(cmd, update), prev, lockPath); err != nil {
				return err
			}
			signKey, err := loadSignKey(signKeyPath)
			if err != nil {
				return err
			}
			env, err := g.env()
			if err != nil {
				return err
			}
			defer env.Close()
			g.startResolving() // the closure, then the mixins' downloads
			defer g.stopProgress()
			l, graph, err := env.Lock(cmd.Context(), ms, prev, updateFrom(cmd, update))
			g.stopProgress() // warnings and results print after the last frame
			if err != nil {
				return err
			}
			warn(graph.Warnings)
			ferry.RecordInput(l, input, lockPath)
			if err := g.checkTrustDefault(pol, l); err != nil { // before the lock is written
				return err
			}
			if err := env.CheckTrust(cmd.Context(), pol, l, false); err != nil { // before the lock is written
				return err
			}
			mixins, err := mixin.FromLock(l)
			if err != nil {
				return err
			}
			var porterMixins []mixin.Locked
			if porterLock {
				// Checked before anything is written.
				if porterMixins, err = mixin.Requested(ms, mixins); err != nil {
					return err
				}
				if _, err := mixin.NewPorterLock(porterMixins); err != nil {
					return err
				}
			}
			if _, err := writeLock(g, l, lockPath, signKey); err != nil {
				return err
			}
			if porterLock {
				if err := mixin.WritePorterLock(filepath.Join(filepath.Dir(input), mixin.PorterLockFile), porterMixins); err != nil {
					return err
				}
			}
			if g.json() {
				// The lock as ferry.lock holds it, mixins included
				// (lock/schema.json).
				return writeLockJSON(l, g.untrusted, graph.Warnings)
			}
			g.result("locked %d packages and %d mixin versions in %s", len(l.Resolved()), len(mixins), lockPath)
			return nil
		},
	}
	c.Flags().StringVar(&lockPath, "lock", lock.DefaultFile, "lock file to write")
	c.Flags().String("push-lock", "", "also push the lock, its signature and mirror sidecar as one OCI artifact to oci://HOST/REPO:TAG, where ferry mirror, verify and install read it with --lock oci://HOST/REPO:TAG (no ConfigMap size limit)")
	c.Flags().StringVar(&version, "version", "", "semver constraint for ROOT references without a tag")
	g.registerSelection(c)
	c.Flags().StringSliceVar(&update, "update", nil, "re-resolve locked versions: all, or the named packages (--update=NAME,...)")
	c.Flags().Lookup("update").NoOptDefVal = "*"
	c.Flags().StringVar(&signKeyPath, "sign-key", "", "cosign private key (cosign.key; password in $COSIGN_PASSWORD): also write LOCK.sig, the lock's signature as cosign sign-blob writes it")
	c.Flags().BoolVar(&porterLock, "porter-lock", false, "with a porter.yaml ROOT, also write Porter's "+mixin.PorterLockFile+" beside it")
	return c
}

// isPorterYAML reports whether an input file is a Porter manifest: a YAML
// mapping without apiVersion (which ferry.yaml and crossplane.yaml have).
func isPorterYAML(path string) bool {
	// An oversized file is not read here: loading it reports the cap.
	data, err := sizecap.ReadFile(path, mirrorset.MaxFileSize)
	if err != nil {
		return false
	}
	var head map[string]any
	if yaml.Unmarshal(data, &head) != nil || head == nil {
		return false
	}
	_, ok := head["apiVersion"]
	return !ok
}

// updateNamesFromArgs accepts PRODUCT.md's `--update [NAME...]` form: a bare
// --update takes no value, so `ferry lock --update mysql` leaves "mysql" among
// the positional arguments. A positional argument that is neither an input
// file nor a reference with a registry host cannot be a ROOT; after a bare
// --update it is a NAME to update.
func updateNamesFromArgs(cmd *cobra.Command, args, update []string) (roots, names []string) {
	if !cmd.Flags().Changed("update") || len(update) != 1 || update[0] != "*" {
		return args, update
	}
	for _, a := range args {
		if looksLikeRoot(a) {
			roots = append(roots, a)
		} else {
			names = append(names, strings.Split(a, ",")...)
		}
	}
	if len(names) == 0 {
		return args, update
	}
	return roots, names
}

// looksLikeRoot reports whether a positional argument is an input file or a
// reference that names its registry.
func looksLikeRoot(a string) bool {
	if strings.HasSuffix(a, ".yaml") || strings.HasSuffix(a, ".yml") {
		return true
	}
	if st, err := os.Stat(a); err == nil && !st.IsDir() {
		return true
	}
	first, _, hasSlash := strings.Cut(a, "/")
	return hasSlash && ociref.IsRegistry(first)
}

func updateFrom(cmd *cobra.Command, names []string) ferry.Update {
	if !cmd.Flags().Changed("update") {
		return ferry.Update{}
	}
	for _, n := range names {
		if n == "*" {
			return ferry.Update{All: true}
		}
	}
	return ferry.Update{Names: names}
}

// checkUpdateNames rejects, before any request, an --update NAME that
// selects nothing in the lock (no package source, no mixin), listing the
// names that exist.
func checkUpdateNames(u ferry.Update, prev *lock.Lock, lockPath string) error {
	if u.All || len(u.Names) == 0 {
		return nil
	}
	if prev == nil {
		return exitcode.BadInput("--update %s: there is no lock %s yet to update (run ferry lock first)", strings.Join(u.Names, ","), lockPath)
	}
	var names []string
	for _, p := range prev.Packages {
		names = append(names, p.Source)
	}
	mixins, _ := mixin.FromLock(prev)
	for _, m := range mixins {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var unknown []string
	for _, n := range u.Names {
		if !slices.ContainsFunc(names, (ferry.Update{Names: []string{n}}).Selects) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return exitcode.BadInput("--update %s: no such package or mixin in %s; it holds: %s", strings.Join(unknown, ","), lockPath, strings.Join(names, ", "))
}

// readLockIfExists reads path, or returns nil when there is no lock yet.
func readLockIfExists(path string) (*lock.Lock, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	l, err := lock.Read(path)
	if err != nil {
		return nil, exitcode.With(exitcode.Usage, err)
	}
	return l, nil
}

// guardLock keeps a command given ROOTs on the command line from
// overwriting a lock made from other inputs (ferry.yaml's lock replaced by
// an ad-hoc one): without an explicit --lock, an existing lock is written
// again only when it was made from the same inputs (its inputs: digest,
// mirrorset.MirrorSet.Digest) or from the same input file (its input:).
// Otherwise it is an exit 2 that tells the user to pass --lock FILE.
func guardLock(cmd *cobra.Command, args []string, prev *lock.Lock, ms *mirrorset.MirrorSet, input, lockPath string) error {
	if prev == nil || len(args) == 0 || cmd.Flags().Changed("lock") {
		return nil
	}
	if prev.Inputs == ms.Digest() {
		return nil
	}
	if input != "" && prev.Input != "" {
		same := &lock.Lock{}
		ferry.RecordInput(same, input, lockPath)
		if same.Input == prev.Input {
			return nil
		}
	}
	from := "other command-line references"
	if prev.Input != "" {
		from = prev.Input
	}
	return exitcode.BadInput("%s was made from %s, not from %s: refusing to overwrite it; pass --lock FILE to write this lock elsewhere (or --lock %s to replace it)",
		lockPath, from, strings.Join(args, " "), lockPath)
}

// loadSignKey reads the cosign private key a --sign-key flag names,
// decrypted with $COSIGN_PASSWORD as cosign does; no flag gives nil. A
// missing, malformed or undecryptable key exits 2.
func loadSignKey(path string) (*signature.PrivateKey, error) {
	if path == "" {
		return nil, nil
	}
	return signature.LoadPrivateKey(path, []byte(os.Getenv(signature.PasswordEnv)))
}

// writeLock writes l to path and, with key, its cosign blob signature
// path.sig, returning the signature. Without key, a signature beside a
// lock that changes no longer signs it: that is warned about.
func writeLock(g *globalFlags, l *lock.Lock, path string, key *signature.PrivateKey) ([]byte, error) {
	_, oldSig, same, err := lock.SignedState(path, l)
	if err != nil {
		return nil, err
	}
	if err := l.Write(path); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if key == nil {
		if oldSig != nil && !same {
			warn([]string{fmt.Sprintf("%s changed: %s no longer signs it (sign again with --sign-key cosign.key)", path, path+signature.SigSuffix)})
		}
		return nil, nil
	}
	data, err := l.Marshal()
	if err != nil {
		return nil, err
	}
	if err := signature.SignFile(key, path, data); err != nil {
		return nil, err
	}
	sig, err := os.ReadFile(path + signature.SigSuffix)
	if err != nil {
		return nil, err
	}
	g.progress("signed %s into %s", path, path+signature.SigSuffix)
	return sig, nil
}

// finishMirrorSigned ends a mirror run: keep, when set, is the signed
// lock on disk, left as it is, the mirror locations going to its sidecar
// LOCK.mirror.yaml (to: the mirror, empty for an archive, which records
// none); otherwise the lock is written with its mirror locations (and
// signed with key when set).
func finishMirrorSigned(g *globalFlags, l *lock.Lock, lockPath string, rep *relocate.Report, key *signature.PrivateKey, keep *lock.Lock, to string) error {
	if keep == nil {
		if _, err := writeLock(g, l, lockPath, key); err != nil {
			return err
		}
		if err := lock.RemoveMirrors(lockPath); err != nil {
			return err
		}
		return reportMirror(g, l, rep, "lock "+lockPath)
	}
	if to == "" {
		return reportMirror(g, l, rep, "signed lock "+lockPath+" unchanged")
	}
	m, err := lock.NewMirrors(keep, l, to)
	if err != nil {
		return err
	}
	if err := m.Write(lockPath); err != nil {
		return fmt.Errorf("writing %s: %w", lock.MirrorsPath(lockPath), err)
	}
	return reportMirror(g, l, rep, "signed lock "+lockPath+" unchanged, mirror locations in "+lock.MirrorsPath(lockPath))
}

// reportMirror reports a mirror run that wrote l; what says what was
// written. The result goes to stdout (schemas/mirror.json with -o json).
func reportMirror(g *globalFlags, l *lock.Lock, rep *relocate.Report, what string) error {
	warn(ignoredWarnings(rep))
	if g.json() {
		out, err := newMirrorJSON(l, rep, g.untrusted)
		if err != nil {
			return err
		}
		return writeJSON(os.Stdout, out)
	}
	g.result("mirrored %d packages to %s; %s updated", len(rep.Packages), rep.To, what)
	return nil
}

// signedLockToMirror decides how mirroring l writes lockPath. When a
// signature is beside the lock and l is exactly the lock, the lock is kept
// as it is (keep, with its signature sig, which an archive carries); with
// --sign-key (key) l is written and signed anew; a signed lock this run
// would change is refused before anything is copied.
func signedLockToMirror(lockPath string, l *lock.Lock, key *signature.PrivateKey) (keep *lock.Lock, sig []byte, err error) {
	data, sig, same, err := lock.SignedState(lockPath, l)
	if err != nil || sig == nil || key != nil {
		return nil, nil, err
	}
	if !same {
		return nil, nil, exitcode.BadInput("%s is signed (%s) and this run would change it: pass --sign-key cosign.key to sign the new lock", lockPath, lockPath+signature.SigSuffix)
	}
	if keep, err = lock.Parse(data); err != nil {
		return nil, nil, err
	}
	return keep, sig, nil
}

// checkArchiveLock applies mirror --from-archive --lock-key before
// anything is pushed: the archive's ferry.lock.sig must verify over its
// ferry.lock's exact bytes (exit code 3 otherwise).
func checkArchiveLock(archive string, key *signature.PublicKey, data, sig []byte) error {
	if key == nil {
		return nil
	}
	if sig == nil {
		return exitcode.Mismatchf("refusing to import %s: it carries no %s (sign the lock with ferry lock --sign-key cosign.key before mirror --to-archive)", archive, relocate.ArchiveLockSigFile)
	}
	if err := key.Verify(data, signature.DecodeBlobSignature(sig)); err != nil {
		return exitcode.Mismatchf("refusing to import %s: its %s does not sign its %s: %w", archive, relocate.ArchiveLockSigFile, relocate.ArchiveLockFile, err)
	}
	return nil
}

// finishSignedImport writes the lock of a signed archive: its ferry.lock
// bytes and ferry.lock.sig as they are, and the mirror locations l holds
// in LOCK.mirror.yaml beside them.
func finishSignedImport(g *globalFlags, l *lock.Lock, lockPath string, data, sig []byte, to string, rep *relocate.Report) error {
	signed, err := lock.Parse(data)
	if err != nil {
		return err
	}
	m, err := lock.NewMirrors(signed, l, to)
	if err != nil {
		return err
	}
	if err := lock.WriteSigned(lockPath, data, sig, m); err != nil {
		return err
	}
	return reportMirror(g, l, rep, "signed lock "+lockPath+" and "+lockPath+signature.SigSuffix+" as carried, mirror locations in "+lock.MirrorsPath(lockPath))
}

// lockMirrorFlag returns the mirror verify and install read from: --mirror
// when given, else the one the lock's sidecar LOCK.mirror.yaml records
// (a signed lock's mirror locations), else none (the lock's own). A stale
// sidecar is warned about and ignored.
func lockMirrorFlag(mirror string, sidecar *lock.Mirrors, stale error) string {
	if stale != nil {
		warn([]string{stale.Error() + ": ignored"})
	}
	if mirror == "" && sidecar != nil {
		return sidecar.To
	}
	return mirror
}

// checkFreshLock refuses, with exit code 3, a lock l (what names it) older
// than the lock at heldPath, unless allow is set (--allow-downgrade).
func checkFreshLock(l *lock.Lock, what, heldPath string, allow bool) error {
	held, ok, err := lock.ReadSerial(heldPath)
	if err != nil || !ok {
		return err
	}
	err = lock.CheckFresh(what, l.Serial, heldPath, held)
	if err != nil && allow {
		warn([]string{err.Error() + ": accepted (--allow-downgrade)"})
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w (pass --allow-downgrade to accept it)", err)
	}
	return nil
}
