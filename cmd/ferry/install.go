package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/relocate"
)

func newInstallCmd(g *globalFlags) *cobra.Command {
	var lockPath, mirror, dest, porterHome, lockKeyPath string
	var requireSigned, allowDowngrade bool
	c := &cobra.Command{
		Use:   "install --dest DIR [--porter-home DIR] [--lock F] [--mirror HOST[/PREFIX]] [--lock-key cosign.pub]",
		Short: "Materialise the locked closure from the mirror",
		Long: `Install reads only from the mirror, using only the lock: it copies every
package into an OCI image layout in DIR, verifying every digest, and
writes relocation-mapping.json (CNAB format: every original reference to
its mirror@digest) and plan.json (install order). DIR is written to a
staging directory beside it (.DIR.ferry-stage-KEY, KEY from the lock's
digest) and renamed into place: after a failure it is unchanged, and the
staging is kept so that the next install of the same lock resumes it
(ferry gc removes it). Every package that can be fetched is; the failures
are reported together. DIR/node/ holds, for every image of the closure
whatever format brought it in, the node configuration that makes a
cluster pull it from the mirror without editing any chart:
containerd/certs.d/SOURCEHOST/hosts.toml (copy to containerd's
config_path, /etc/containerd/certs.d), registries.conf.d/50-ferry-mirror.conf
(CRI-O and Podman: /etc/containers/registries.conf.d/), and
openshift/imagedigestmirrorset.yaml and imagetagmirrorset.yaml (oc apply
-f); mirror hosts given with --plain-http, and loopback hosts, are written
as plain HTTP. --porter-home DIR installs the locked Porter mixins into a
PORTER_HOME for this OS and architecture, verified against the lock, with
no access to the mixin feed: the highest version of each in Porter's
layout (mixins/NAME/NAME, mixins/NAME/runtimes/NAME-runtime), and every
locked version in the versioned cache of Porter's Mixin Versioning
proposal (mixins/SOURCE/NAME/VERSION/...); it may be used without --dest. --lock-key cosign.pub
requires the lock's cosign signature, LOCK.sig beside it (cosign sign-blob
--key cosign.key --output-signature LOCK.sig LOCK), to verify over the
lock's exact bytes: otherwise nothing is read or written, and the exit code
is 3.`,
		Example: `  ferry install --dest ./install
  ferry install --lock ferry.lock --mirror registry.dr.acme.com/mirror --dest /opt/bundles
  ferry install --lock-key cosign.pub --dest ./install`,
		Args: cobraExactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
				return err
			}
			if dest == "" && porterHome == "" {
				return exitcode.BadInput("--dest or --porter-home is required")
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
			opts := ferry.InstallOptions{Env: env, LockPath: lockPath, Mirror: mirror, Dest: dest, LockKey: lockKey, RequireSignedLock: requireSigned, AllowDowngrade: allowDowngrade,
				PlainHTTP: g.plainHTTP, Settings: settings, Trust: g.trustOptions(), Hooks: g.hooks()}
			var ph *mixin.PorterHome
			if porterHome != "" {
				opts.StageHome = func(ctx context.Context, l *lock.Lock, m *relocate.Mapping) (ferry.StagedHome, error) {
					var err error
					ph, err = mixin.StagePorterHome(ctx, env.Client, l, m, porterHome, runtime.GOOS, runtime.GOARCH)
					if err != nil {
						return nil, err
					}
					return ph, nil
				}
			}
			res, err := ferry.Install(cmd.Context(), opts)
			if err != nil {
				return flagError(err, args)
			}
			l, plan := res.Lock, res.Plan
			g.untrusted = res.Untrusted
			if g.json() { // schemas/install.json
				out, err := newInstallJSON(l, dest, plan, porterHome, ph)
				if err != nil {
					return err
				}
				return writeJSON(os.Stdout, out)
			}
			if ph != nil {
				g.result("installed mixins %s into PORTER_HOME %s (versioned cache: %s)", strings.Join(ph.Mixins, " "), porterHome, strings.Join(ph.Cached, " "))
				if dest == "" {
					return nil
				}
			}
			for _, st := range plan.Steps {
				g.result("%d. %s %s", st.Order, st.Kind, st.Mirror)
			}
			g.result("installed %d packages into %s", len(plan.Steps), dest)
			if _, err := os.Stat(filepath.Join(dest, install.NodeDir)); err == nil {
				g.progress("node mirror configuration (containerd, CRI-O/Podman, OpenShift) in %s", filepath.Join(dest, install.NodeDir))
			}
			return nil
		},
	}
	c.Flags().StringVar(&lockPath, "lock", lock.DefaultFile, "lock file to install")
	c.Flags().StringVar(&mirror, "mirror", "", "read from this mirror HOST[/PREFIX] instead of the one in the lock")
	c.Flags().StringVar(&dest, "dest", "", "install directory (required unless --porter-home is given); a symbolic link is followed: the directory it points to is replaced, the link is kept")
	c.Flags().StringVar(&lockKeyPath, "lock-key", "", "cosign public key (cosign.pub): refuse to install unless the lock's signature LOCK.sig (cosign sign-blob) verifies with it")
	c.Flags().BoolVar(&requireSigned, "require-signed-lock", false, "refuse a lock without a valid signature LOCK.sig: needs --lock-key (ferry.yaml: lock.requireSigned: true)")
	c.Flags().BoolVar(&allowDowngrade, "allow-downgrade", false, "install a lock older (a lower serial) than the one --dest already holds; refused with exit code 3 otherwise")
	c.Flags().StringVar(&porterHome, "porter-home", "", "also install the locked Porter mixins into this PORTER_HOME (mixins/NAME/... and mixins/SOURCE/NAME/VERSION/...), from the mirror alone")
	return c
}
