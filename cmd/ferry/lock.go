package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/sizecap"
)

var ferryUpdateNone = ferry.Update{}

func newLockCmd(g *globalFlags) *cobra.Command {
	var lockPath, version string
	var update []string
	var porterLock bool
	c := &cobra.Command{
		Use:   "lock [ROOT...]",
		Short: "Resolve the closure and write ferry.lock",
		Long: `Lock resolves the closure and writes every package, image and mixin binary
by digest to ferry.lock, atomically. Versions already locked are kept while
they satisfy every constraint; --update re-resolves all of them, or
--update=NAME,... (or --update NAME...) only the named ones (a source repository or its last
path element). A second run with nothing changed leaves the file
byte-identical. With a porter.yaml as ROOT, --porter-lock also writes
Porter's porter.lock.yaml beside it: the mixins the porter.yaml declares,
with their source, url, version and binary digests (Porter's "Mixin
Versioning" proposal).`,
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
			prev, err := readLockIfExists(lockPath)
			if err != nil {
				return err
			}
			env, err := g.env()
			if err != nil {
				return err
			}
			defer env.Close()
			l, graph, err := env.Lock(cmd.Context(), ms, prev, updateFrom(cmd, update))
			if err != nil {
				return err
			}
			warn(graph.Warnings)
			ferry.RecordInput(l, input, lockPath)
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
			if err := l.Write(lockPath); err != nil {
				return fmt.Errorf("writing %s: %w", lockPath, err)
			}
			if porterLock {
				if err := mixin.WritePorterLock(filepath.Join(filepath.Dir(input), mixin.PorterLockFile), porterMixins); err != nil {
					return err
				}
			}
			if g.json() {
				return writeJSON(os.Stdout, l)
			}
			g.progress("locked %d packages and %d mixin versions in %s", len(l.Resolved()), len(mixins), lockPath)
			return nil
		},
	}
	c.Flags().StringVar(&lockPath, "lock", lock.DefaultFile, "lock file to write")
	c.Flags().StringVar(&version, "version", "", "semver constraint for ROOT references without a tag")
	c.Flags().StringSliceVar(&update, "update", nil, "re-resolve locked versions: all, or the named packages (--update=NAME,...)")
	c.Flags().Lookup("update").NoOptDefVal = "*"
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
