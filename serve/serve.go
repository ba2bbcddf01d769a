// Package serve runs ferry's embedded OCI registry: a real CNCF distribution
// registry with filesystem storage, served over plain HTTP or TLS.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem" // the "filesystem" storage driver
	"github.com/sirupsen/logrus"
)

// Options configures an embedded registry.
type Options struct {
	// Root is the directory the registry stores its content in.
	Root string
	// Addr is the TCP address to listen on, such as "127.0.0.1:5000".
	// Port 0 picks a free port.
	Addr string
	// ReadOnly refuses every write.
	ReadOnly bool
	// Wrap, when set, wraps the registry handler: for request recording in
	// tests, or to add routes next to /v2/.
	Wrap func(http.Handler) http.Handler
	// Log receives the registry's log lines; nil discards them.
	Log io.Writer
}

// Server is a running embedded registry.
type Server struct {
	// Addr is the address the server listens on, with the real port.
	Addr string
	srv  *http.Server
	app  *handlers.App
	done chan error
}

// Handler builds the distribution registry handler for opts without serving it.
func Handler(ctx context.Context, opts Options) (*handlers.App, error) {
	if opts.Root == "" {
		return nil, errors.New("serve: a storage root directory is required")
	}
	// distribution logs through the standard logrus logger.
	if opts.Log != nil {
		logrus.SetOutput(opts.Log)
	} else {
		logrus.SetOutput(io.Discard)
	}

	cfg := &configuration.Configuration{}
	cfg.Log.Level = "error"
	cfg.Log.AccessLog.Disabled = true
	cfg.Storage = configuration.Storage{
		"filesystem": configuration.Parameters{"rootdirectory": opts.Root},
		"delete":     configuration.Parameters{"enabled": true},
		"maintenance": configuration.Parameters{
			"uploadpurging": map[any]any{"enabled": false},
			"readonly":      map[any]any{"enabled": opts.ReadOnly},
		},
	}
	cfg.HTTP.Secret = "ferry-embedded-registry"
	var app *handlers.App
	var perr error
	func() {
		defer func() {
			if r := recover(); r != nil {
				perr = fmt.Errorf("serve: starting registry on %s: %v", opts.Root, r)
			}
		}()
		app = handlers.NewApp(ctx, cfg)
	}()
	return app, perr
}

// Start starts an embedded registry and returns once it accepts connections.
func Start(ctx context.Context, opts Options) (*Server, error) {
	app, err := Handler(ctx, opts)
	if err != nil {
		return nil, err
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:5000"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: listen on %s: %w", addr, err)
	}
	var h http.Handler = app
	if opts.Wrap != nil {
		h = opts.Wrap(h)
	}
	s := &Server{
		Addr: ln.Addr().String(),
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second},
		app:  app,
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Wait blocks until the server stops and returns why.
func (s *Server) Wait() error {
	err := <-s.done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops the server, waiting up to five seconds for requests in flight.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	_ = s.app.Shutdown()
	return err
}
