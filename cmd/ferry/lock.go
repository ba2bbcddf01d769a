package main

import (
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
			signKey, err := loadSignKey(signKeyPath)
			if err != nil {
				return err
			}
			env, err := g.env()
			if err != nil {
				return err
			}
			defer env.Close()
			var mixins, porterMixins []mixin.Locked
			res, err := ferry.Lock(cmd.Context(), ferry.LockOptions{Env: env, Inputs: ms, Input: input, Roots: args,
				LockPath: lockPath, LockNamed: cmd.Flags().Changed("lock"), Update: updateFrom(cmd, update),
				SignKey: signKey, Trust: g.trustOptions(), Hooks: g.hooks(),
				Check: func(prev *lock.Lock) error { return checkUpdateNames(updateFrom(cmd, update), prev, lockPath) },
				BeforeWrite: func(l *lock.Lock) error {
					var err error
					if mixins, err = mixin.FromLock(l); err != nil {
						return err
					}
					if porterLock {
						// Checked before anything is written.
						if porterMixins, err = mixin.Requested(ms, mixins); err != nil {
							return err
						}
						if _, err := mixin.NewPorterLock(porterMixins); err != nil {
							return err
						}
					}
					return nil
				}})
			if err != nil {
				return flagError(err, args)
			}
			l := res.Lock
			g.untrusted = res.Untrusted
			if porterLock {
				if err := mixin.WritePorterLock(filepath.Join(filepath.Dir(input), mixin.PorterLockFile), porterMixins); err != nil {
					return err
				}
			}
			if g.json() {
				// The lock as ferry.lock holds it, mixins included
				// (lock/schema.json).
				var warnings []string
				if res.Graph != nil {
					warnings = res.Graph.Warnings
				}
				return writeLockJSON(l, g.untrusted, warnings)
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

// loadSignKey reads the cosign private key a --sign-key flag names,
// decrypted with $COSIGN_PASSWORD as cosign does; no flag gives nil. A
// missing, malformed or undecryptable key exits 2.
func loadSignKey(path string) (*signature.PrivateKey, error) {
	if path == "" {
		return nil, nil
	}
	return signature.LoadPrivateKey(path, []byte(os.Getenv(signature.PasswordEnv)))
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
