package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/helm"
	"github.com/ferryhq/ferry/kudo"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/serve"
)

func newServeCmd(g *globalFlags) *cobra.Command {
	opts := serve.Options{}
	var addrFile, lockFile string
	c := &cobra.Command{
		Use:   "serve --root DIR [--addr 127.0.0.1:5000] [--tls-cert F --tls-key F] [--htpasswd F] [--read-only] [--lock ferry.lock]",
		Short: "Run the embedded OCI registry",
		Long: `Serve runs a CNCF distribution registry with filesystem storage in DIR,
with the OCI 1.1 referrers API (GET /v2/NAME/referrers/DIGEST, and
OCI-Subject on a manifest push) that distribution lacks, so cosign v3 and
oras attach and discover signatures and other referrers natively.
crane, oras, docker and ferry push to it and pull from it. Port 0 picks a
free port; --addr-file writes the address actually used. It also answers
Porter's mixin mirror protocol (/mixins/atom.xml) from the mixins that
ferry mirror pushed, under any prefix, so that
porter mixins install NAME --mirror http://ADDR works offline, and a
classic Helm chart repository (/charts/index.yaml, /charts/NAME-VERSION.tgz)
from the charts it stores, so that helm repo add mirror http://ADDR/charts
and helm install mirror/NAME work offline, and a KUDO repository
(/kudo/index.yaml, /kudo/NAME-VERSION.tgz) from the KUDO operator
packages it stores, so that a KUDO client pointed at http://ADDR/kudo
(kubectl kudo repo add mirror http://ADDR/kudo) installs offline.

Without --lock, the mixin endpoints serve every mixin version tagged in
the registry, unchecked: whoever can push to it decides what porter
installs. --lock ferry.lock serves only the mixin versions and binaries
the lock holds, each only when its digest and size are the lock's, and
only the charts and KUDO operators whose manifest digest the lock holds;
any other answers 404 saying why, and a line is logged. Chart archives
and operator tarballs are checked against their digests while they are
sent, with or without --lock. The OCI registry API
(/v2/) is served as it is: its clients check digests themselves.

--tls-cert and --tls-key serve HTTPS. --htpasswd FILE requires basic-auth
credentials (bcrypt entries, as written by "htpasswd -B") for every
request, or only for writes with --anonymous-read. --read-only refuses
every write. The Porter mixin endpoints obey the same rules.

On an address other than loopback, serve refuses to start with neither
TLS nor --htpasswd, since anyone who can reach the port could read and
overwrite the mirror; --insecure starts it anyway.`,
		Example: `  ferry serve --root /var/lib/ferry --addr 127.0.0.1:5000
  ferry serve --root ./reg --addr 127.0.0.1:0 --addr-file ./reg.addr

  # On the network: HTTPS, credentials for everything
  htpasswd -cBb /etc/ferry/htpasswd mirror 's3cret'
  ferry serve --root /var/lib/ferry --addr 0.0.0.0:443 \
    --tls-cert /etc/ferry/tls.crt --tls-key /etc/ferry/tls.key \
    --htpasswd /etc/ferry/htpasswd

  # Anyone may pull, only credentialed users push; or nobody pushes
  ferry serve --root /var/lib/ferry --addr 0.0.0.0:443 --tls-cert tls.crt --tls-key tls.key \
    --htpasswd htpasswd --anonymous-read
  ferry serve --root /var/lib/ferry --addr 0.0.0.0:443 --tls-cert tls.crt --tls-key tls.key --read-only`,
		Args: cobraExactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Root == "" {
				return exitcode.BadInput("--root is required")
			}
			logger, err := g.logger()
			if err != nil {
				return err
			}
			var locked []mixin.Locked
			var theLock *lock.Lock
			if lockFile != "" {
				l, err := lock.Read(lockFile)
				if err != nil {
					return err
				}
				theLock = l
				if locked, err = mixin.FromLock(l); err != nil {
					return err
				}
			}
			if strings.EqualFold(g.logLevel, "debug") {
				// The registry's own log lines; credentials are never logged.
				opts.Log = os.Stderr
			}
			if err := serve.Check(opts); err != nil {
				return exitcode.With(exitcode.Usage, serveFlagError(err, opts))
			}
			if err := os.MkdirAll(opts.Root, 0o755); err != nil {
				return err
			}
			mixins := mixin.NewMirrorHandler()
			if opts.Extra == nil {
				opts.Extra = map[string]http.Handler{}
			}
			opts.Extra["/mixins/"] = mixins
			charts := helm.NewRepoHandler()
			opts.Extra[helm.ChartsPath] = charts
			operators := kudo.NewRepoHandler()
			opts.Extra[kudo.RepoPath] = operators
			srv, err := serve.Start(cmd.Context(), opts)
			if err != nil {
				return exitcode.With(exitcode.Usage, serveFlagError(err, opts))
			}
			bind := func() error {
				if err := mixins.Bind(srv.Registry()); err != nil {
					return err
				}
				if err := charts.Bind(srv.Registry()); err != nil {
					return err
				}
				return operators.Bind(srv.Registry())
			}
			if lockFile != "" {
				bind = func() error {
					warn := func(format string, args ...any) { logger.Warn(fmt.Sprintf(format, args...)) }
					if err := mixins.BindLocked(srv.Registry(), locked, warn); err != nil {
						return err
					}
					if err := charts.BindLocked(srv.Registry(), theLock, warn); err != nil {
						return err
					}
					return operators.BindLocked(srv.Registry(), theLock, warn)
				}
			}
			if err := bind(); err != nil {
				_ = srv.Close()
				return err
			}
			if addrFile != "" {
				if err := lock.WriteFileAtomic(addrFile, []byte(srv.Addr+"\n"), 0o644); err != nil {
					_ = srv.Close()
					return err
				}
			}
			g.progress("ferry serve: registry on %s, storage in %s%s", srv.URL(), opts.Root, serveMode(opts, lockFile != ""))
			errc := make(chan error, 1)
			go func() { errc <- srv.Wait() }()
			select {
			case err := <-errc:
				return err
			case <-cmd.Context().Done():
			}
			if err := srv.Close(); err != nil {
				return fmt.Errorf("stopping: %w", err)
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Root, "root", "", "storage directory (required)")
	f.StringVar(&opts.Addr, "addr", "127.0.0.1:5000", "address to listen on")
	f.BoolVar(&opts.ReadOnly, "read-only", false, "refuse every write")
	f.StringVar(&opts.TLSCert, "tls-cert", "", "PEM certificate (chain) to serve HTTPS with; needs --tls-key")
	f.StringVar(&opts.TLSKey, "tls-key", "", "PEM private key of --tls-cert")
	f.StringVar(&opts.Htpasswd, "htpasswd", "", "htpasswd file of bcrypt entries; every request needs valid basic-auth credentials")
	f.BoolVar(&opts.AnonymousRead, "anonymous-read", false, "with --htpasswd, let reads through without credentials (writes still need them)")
	f.BoolVar(&opts.Insecure, "insecure", false, "allow an address other than loopback with neither TLS nor --htpasswd")
	f.StringVar(&addrFile, "addr-file", "", "write the listening address to this file")
	f.StringVar(&lockFile, "lock", "", "serve only the mixin versions, binaries, Helm charts and KUDO operators this lock holds, checked by digest")
	return c
}

// serveMode describes the protections opts turns on, for the start-up line.
func serveMode(opts serve.Options, locked bool) string {
	var m []string
	if opts.Htpasswd != "" {
		if opts.AnonymousRead {
			m = append(m, "credentials for writes")
		} else {
			m = append(m, "credentials required")
		}
	}
	if opts.ReadOnly {
		m = append(m, "read-only")
	}
	if locked {
		m = append(m, "mixins, charts and operators checked against the lock")
	}
	if opts.TLSCert == "" && opts.Htpasswd == "" && !client.IsLoopback(opts.Addr) {
		m = append(m, "UNPROTECTED (--insecure)")
	}
	if len(m) == 0 {
		return ""
	}
	return " (" + strings.Join(m, ", ") + ")"
}

// serveFlagError words package serve's option errors with the flags of
// `ferry serve` (the library names none).
func serveFlagError(err error, opts serve.Options) error {
	var htpasswd *serve.HtpasswdError
	switch {
	case (opts.TLSCert == "") != (opts.TLSKey == ""):
		return errors.New("serve: TLS needs both a certificate and a key (--tls-cert and --tls-key)")
	case opts.AnonymousRead && opts.Htpasswd == "":
		return errors.New("serve: anonymous read only makes sense with --htpasswd")
	case errors.As(err, &htpasswd):
		return fmt.Errorf("serve: --htpasswd %w", htpasswd.Err)
	case errors.Is(err, serve.ErrUnprotected):
		return fmt.Errorf("%w; pass --tls-cert/--tls-key and --htpasswd (recommended), listen on 127.0.0.1, or pass --insecure to serve it unprotected anyway", err)
	}
	return err
}
