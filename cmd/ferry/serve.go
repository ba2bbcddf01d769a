package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/serve"
)

func newServeCmd(g *globalFlags) *cobra.Command {
	opts := serve.Options{}
	var addrFile string
	c := &cobra.Command{
		Use:   "serve --root DIR [--addr 127.0.0.1:5000]",
		Short: "Run the embedded OCI registry",
		Long: `Serve runs a CNCF distribution registry with filesystem storage in DIR.
crane, oras, docker and ferry push to it and pull from it. Port 0 picks a
free port; --addr-file writes the address actually used.`,
		Example: `  ferry serve --root /var/lib/ferry --addr 127.0.0.1:5000
  ferry serve --root ./reg --addr 127.0.0.1:0 --addr-file ./reg.addr`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Root == "" {
				return exitcode.BadInput("--root is required")
			}
			if err := os.MkdirAll(opts.Root, 0o755); err != nil {
				return err
			}
			srv, err := serve.Start(cmd.Context(), opts)
			if err != nil {
				return exitcode.With(exitcode.Usage, err)
			}
			if addrFile != "" {
				if err := lock.WriteFileAtomic(addrFile, []byte(srv.Addr+"\n"), 0o644); err != nil {
					_ = srv.Close()
					return err
				}
			}
			g.progress("ferry serve: registry on %s, storage in %s", srv.Addr, opts.Root)
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
	f.StringVar(&addrFile, "addr-file", "", "write the listening address to this file")
	return c
}
