// Package serve runs ferry's embedded OCI registry: a real CNCF distribution
// registry with filesystem storage, served over plain HTTP or TLS, optionally
// behind htpasswd (basic) or bearer-token authentication and in read-only
// mode.
package serve

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ferryhq/ferry/internal/forked/distribution/configuration"
	"github.com/ferryhq/ferry/internal/forked/distribution/registry/handlers"
	_ "github.com/ferryhq/ferry/internal/forked/distribution/registry/storage/driver/filesystem" // the "filesystem" storage driver
	"github.com/sirupsen/logrus"
)

// DefaultRealm is the basic-auth realm announced when Options.Realm is empty.
const DefaultRealm = "ferry"

// ErrUnprotected is returned (wrapped) by Start when asked to listen on an
// address other than loopback with neither TLS nor authentication and
// without Options.Insecure.
var ErrUnprotected = errors.New("not a loopback address, and neither TLS nor authentication is configured")

// Options configures an embedded registry.
type Options struct {
	// Root is the directory the registry stores its content in.
	Root string
	// Addr is the TCP address to listen on, such as "127.0.0.1:5000".
	// Port 0 picks a free port. Ignored when Listener is set.
	Addr string
	// Listener, when set, is served instead of listening on Addr. It lets a
	// caller learn the address before the registry starts (for example to
	// put it in a token realm).
	Listener net.Listener
	// ReadOnly refuses every write (any method other than GET, HEAD and
	// OPTIONS) with 405 and a distribution-style UNSUPPORTED error, and
	// puts the registry in its read-only maintenance mode.
	ReadOnly bool
	// Wrap, when set, wraps the whole server handler: for request recording
	// in tests, or to add routes next to /v2/. Wrap is outermost: routes it
	// answers itself bypass authentication and ReadOnly. Use Extra for
	// routes that must obey them.
	Wrap func(http.Handler) http.Handler
	// Log receives the registry's log lines; nil discards them. Credentials
	// are never logged.
	Log io.Writer

	// TLSCert and TLSKey are PEM files of the server certificate (chain)
	// and its key; when both are set the registry serves HTTPS.
	TLSCert, TLSKey string
	// Htpasswd is an htpasswd file of bcrypt entries ("user:$2y$..."). When
	// set, every request must carry valid basic-auth credentials, checked
	// by distribution's htpasswd access controller. The file must exist;
	// it is re-read when it changes.
	Htpasswd string
	// AnonymousRead, with Htpasswd, lets reads (GET, HEAD, OPTIONS) through
	// without credentials; writes still need them. The base endpoint /v2/
	// always asks for credentials, so that clients (docker login, ferry
	// login) can check theirs, and credentials that are sent are always
	// checked.
	AnonymousRead bool
	// TokenAuth, when set, makes the registry require bearer tokens issued
	// by a token service (distribution's token auth). It excludes Htpasswd.
	TokenAuth *TokenAuth
	// Realm is the basic-auth realm; empty means DefaultRealm.
	Realm string
	// Insecure allows listening on an address that is not loopback with
	// neither TLS nor authentication.
	Insecure bool
	// DistributionOnly serves distribution's API alone, without what
	// ferry adds (the referrers API and the OCI-Subject header of OCI 1.1,
	// referrers.go; single-request pushes completed, which distribution
	// answers with a session): a registry as plain CNCF distribution v3
	// answers, for tests of clients against one (internal/registrytest).
	DistributionOnly bool
	// Extra maps URL path prefixes (such as "/mixins/") to handlers served
	// next to /v2/. They obey the same authentication and ReadOnly rules as
	// the registry: basic auth with Htpasswd (reads anonymous with
	// AnonymousRead), a valid bearer token with TokenAuth. The longest
	// matching prefix wins.
	Extra map[string]http.Handler
}

// TokenAuth configures distribution's bearer-token authentication: the
// registry answers unauthenticated requests with a
// `WWW-Authenticate: Bearer realm=...,service=...,scope=...` challenge and
// accepts JWTs signed by a trusted key, issued by Issuer for Service.
type TokenAuth struct {
	// Realm is the token service URL clients fetch tokens from.
	Realm string
	// Service is the audience tokens must be issued for.
	Service string
	// Issuer is the "iss" tokens must carry.
	Issuer string
	// JWKS is a JSON Web Key Set file of the keys tokens may be signed
	// with (keys are matched by "kid").
	JWKS string
	// RootCertBundle is a PEM file of certificates whose keys may sign
	// tokens (tokens name them with an x5c chain or their thumbprint).
	RootCertBundle string
}

// Server is a running embedded registry.
type Server struct {
	// Addr is the address the server listens on, with the real port.
	Addr string
	// TLS reports whether the server speaks HTTPS.
	TLS  bool
	srv  *http.Server
	app  registryApp
	done chan error

	mu    sync.Mutex
	conns map[net.Conn]http.ConnState
}

// trackConn remembers connection states, so that Close can drop
// connections that never sent a request (http.Server.Shutdown waits five
// seconds for those).
func (s *Server) trackConn(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st {
	case http.StateClosed, http.StateHijacked:
		delete(s.conns, c)
	default:
		s.conns[c] = st
	}
}

// URL returns the server's base URL, "http://ADDR" or "https://ADDR".
func (s *Server) URL() string {
	if s.TLS {
		return "https://" + s.Addr
	}
	return "http://" + s.Addr
}

// registryApp is the distribution registry handler Start serves and shuts
// down: ferry's copy of distribution's *handlers.App.
type registryApp interface {
	http.Handler
	Shutdown() error
}

// newApp builds the registry handler Start serves. Tests replace it to run
// ferry serve around the real upstream distribution handlers (the parity
// test, parity_test.go).
var newApp = func(ctx context.Context, opts Options) (registryApp, error) {
	return Handler(ctx, opts)
}

// Handler builds the distribution registry handler for opts without serving
// it. It applies ReadOnly (maintenance mode) and TokenAuth, but not
// Htpasswd, AnonymousRead or Extra: Start puts those in front of it.
func Handler(ctx context.Context, opts Options) (*handlers.App, error) {
	cfg, err := configure(opts)
	if err != nil {
		return nil, err
	}
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
	if app != nil {
		// The distribution spec's single-request push, which ferry's
		// client sends its small blobs by (client.PushMonolithic):
		// completed in one request instead of a session's two
		// (internal/forked/distribution UPSTREAM.md, patch 8).
		app.SinglePostPush = !opts.DistributionOnly
	}
	return app, perr
}

// configure returns the distribution configuration of opts, and points
// distribution's logging at opts.Log.
func configure(opts Options) (*configuration.Configuration, error) {
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
	// Without a limit distribution lists no repositories at all.
	cfg.Catalog.MaxEntries = 1000
	cfg.Log.AccessLog.Disabled = true
	// Manifests may name non-distributable ("foreign") layers by URL
	// without the registry holding them, as the image spec allows
	// (layer.md, urls); distribution refuses every URL unless allowed
	// (handlers/app.go: an empty allow list becomes "^$"), answering 500.
	// It never fetches them.
	cfg.Validation.Manifests.URLs.Allow = []string{"^https?://"}
	cfg.Storage = configuration.Storage{
		"filesystem": configuration.Parameters{"rootdirectory": opts.Root},
		"delete":     configuration.Parameters{"enabled": true},
		"maintenance": configuration.Parameters{
			"uploadpurging": map[any]any{"enabled": false},
			"readonly":      map[any]any{"enabled": opts.ReadOnly},
		},
	}
	if opts.TokenAuth != nil {
		p, err := tokenParams(opts.TokenAuth)
		if err != nil {
			return nil, err
		}
		cfg.Auth = configuration.Auth{"token": p}
	}
	secret, err := randomSecret()
	if err != nil {
		return nil, err
	}
	cfg.HTTP.Secret = secret
	return cfg, nil
}

func randomSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("serve: generating the upload-state secret: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Start starts an embedded registry and returns once it accepts connections.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if err := check(opts); err != nil {
		return nil, err
	}
	var tlsCfg *tls.Config
	if opts.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(opts.TLSCert, opts.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("serve: loading TLS certificate %s and key %s: %w", opts.TLSCert, opts.TLSKey, err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	g, err := newGuard(opts)
	if err != nil {
		return nil, err
	}
	app, err := newApp(ctx, opts)
	if err != nil {
		return nil, err
	}
	ln := opts.Listener
	if ln == nil {
		addr := listenAddr(opts)
		ln, err = net.Listen("tcp", addr)
		if err != nil {
			_ = app.Shutdown()
			return nil, fmt.Errorf("serve: listen on %s: %w", addr, err)
		}
	}
	var reg http.Handler = app
	if opts.TokenAuth == nil {
		// Token authentication is distribution's own, inside app: with
		// it, every request goes through app. Otherwise the guard in
		// front has already authorised the request (see files.go).
		reg = storageFiles{root: opts.Root, next: app}
	}
	// The referrers API, which distribution lacks (referrers.go): behind
	// the guard, and with token authentication checking its own requests.
	if !opts.DistributionOnly {
		reg = newReferrers(storageFiles{root: opts.Root}, reg, g.bearer)
	}
	g.next = newMux(reg, opts.Extra)
	var h http.Handler = g
	if opts.Wrap != nil {
		h = opts.Wrap(h)
	}
	s := &Server{
		Addr: ln.Addr().String(),
		TLS:  tlsCfg != nil,
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 30 * time.Second,
			TLSConfig:         tlsCfg,
			ErrorLog:          log.New(logWriter(opts.Log), "serve: ", 0),
		},
		app:   app,
		done:  make(chan error, 1),
		conns: map[net.Conn]http.ConnState{},
	}
	s.srv.ConnState = s.trackConn
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

func logWriter(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func listenAddr(opts Options) string {
	if opts.Addr == "" {
		return "127.0.0.1:5000"
	}
	return opts.Addr
}

// Check validates opts without starting anything, so a caller can refuse
// bad options before it creates the storage root.
func Check(opts Options) error { return check(opts) }

// check validates opts before anything is started.
func check(opts Options) error {
	if (opts.TLSCert == "") != (opts.TLSKey == "") {
		return errors.New("serve: TLS needs both a certificate and a key")
	}
	if opts.Htpasswd != "" && opts.TokenAuth != nil {
		return errors.New("serve: htpasswd and token authentication cannot be combined")
	}
	if opts.AnonymousRead && opts.Htpasswd == "" {
		return errors.New("serve: anonymous read only makes sense with an htpasswd file")
	}
	if opts.Htpasswd != "" {
		if err := checkHtpasswd(opts.Htpasswd); err != nil {
			return err
		}
	}
	addr := listenAddr(opts)
	if opts.Listener != nil {
		addr = opts.Listener.Addr().String()
	}
	protected := opts.TLSCert != "" || opts.Htpasswd != "" || opts.TokenAuth != nil
	if !protected && !opts.Insecure && !isLoopbackAddr(addr) {
		// The remedy names the caller's flags; cmd/ferry adds it
		// (errors.Is(err, ErrUnprotected)).
		return fmt.Errorf("serve: refusing to listen on %s: %w, so anyone who can reach it could read and overwrite the mirror",
			addr, ErrUnprotected)
	}
	return nil
}

// isLoopbackAddr reports whether a listen address only accepts local
// connections. An empty host means every interface.
func isLoopbackAddr(addr string) bool {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newMux routes Extra prefixes (longest first) and everything else to the
// registry.
func newMux(app http.Handler, extra map[string]http.Handler) http.Handler {
	if len(extra) == 0 {
		return app
	}
	prefixes := make([]string, 0, len(extra))
	for p := range extra {
		prefixes = append(prefixes, p)
	}
	sort.Slice(prefixes, func(i, j int) bool { return len(prefixes[i]) > len(prefixes[j]) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, p := range prefixes {
			if strings.HasPrefix(r.URL.Path, p) {
				extra[p].ServeHTTP(w, r)
				return
			}
		}
		app.ServeHTTP(w, r)
	})
}

// closeUnused closes connections with no request in flight.
func (s *Server) closeUnused() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c, st := range s.conns {
		if st == http.StateNew || st == http.StateIdle {
			_ = c.Close()
		}
	}
}

// Registry returns the distribution registry handler, without the
// authentication, read-only guard and Extra routes in front of it, for
// in-process readers (such as the /mixins/ mirror protocol) whose requests
// were already authorised.
func (s *Server) Registry() http.Handler { return s.app }

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
	s.srv.SetKeepAlivesEnabled(false)
	shut := make(chan error, 1)
	go func() { shut <- s.srv.Shutdown(ctx) }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var err error
	for waiting := true; waiting; {
		s.closeUnused()
		select {
		case err = <-shut:
			waiting = false
		case <-tick.C:
		}
	}
	_ = s.app.Shutdown()
	return err
}
