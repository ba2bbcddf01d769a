// Package client builds oras-go registry clients the way ferry talks to
// registries: HTTPS by default, plain HTTP for loopback hosts and hosts
// named with --plain-http, credentials from docker's config.json, retries
// with backoff for every request that can be sent again, resumed blob
// downloads, timeouts, and a bounded tag list (ListTags).
//
// Certificate problems come back as *TLSError (naming the host and the
// reason, never retried); a registry refusing credentials comes back as
// *AuthError (naming the host, containing "unauthorized"); a registry out
// of room (disk full, quota, 507, 413) as *StorageError, never retried; a
// rate limit still in force once the retries are spent as *RateLimitError
// (naming Docker Hub's rate-limit headers). No error carries a password,
// token, Authorization header value or an upload's _state. Each retry is
// one info line: "retrying METHOD HOST/PATH (2 of 6): STATUS".
package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/ferryhq/ferry/redact"
)

// Options configures a Client.
type Options struct {
	// PlainHTTP lists hosts (host or host:port) spoken to over plain HTTP.
	// Loopback hosts fall back to plain HTTP without being listed.
	// PlainHTTPAll ("*") speaks plain HTTP to every host, as oras's
	// --plain-http switch does; a host that is not loopback is warned
	// about once.
	PlainHTTP []string
	// CAFile is a PEM file of extra root certificates.
	CAFile string
	// RegistryConfig is a docker config.json path. Empty means
	// $DOCKER_CONFIG/config.json or ~/.docker/config.json.
	RegistryConfig string
	// Retry is how a failed request is sent again, and a download cut
	// short resumed (zero fields: DefaultRetryPolicy; Attempts 1 disables
	// retries). Its Log defaults to Log.
	Retry RetryPolicy
	// MaxRetries, when positive and Retry.Attempts is zero, sets
	// Retry.Attempts to MaxRetries+1.
	MaxRetries int
	// Backoff, when positive and Retry.Backoff is zero, sets
	// Retry.Backoff.
	Backoff time.Duration
	// DialTimeout bounds opening a TCP connection (default
	// DefaultConnectTimeout; negative: no limit).
	DialTimeout time.Duration
	// TLSHandshakeTimeout bounds a TLS handshake (default
	// DefaultConnectTimeout; negative: no limit).
	TLSHandshakeTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for a response's headers once
	// the request is sent (default DefaultReadTimeout; negative: no limit).
	ResponseHeaderTimeout time.Duration
	// IdleReadTimeout fails a response body when no byte of it arrives
	// for that long while it is read (default DefaultReadTimeout;
	// negative: no limit). A blob download that stalls is then resumed.
	IdleReadTimeout time.Duration
	// UserAgent is sent with every request.
	UserAgent string
	// Log, when set, receives one debug line per HTTP request (method,
	// URL without query, status, duration) and never a header value, so
	// credentials and tokens stay out of it. Nil logs nothing.
	Log *slog.Logger
}

// Client creates repositories that share one HTTP client, one credential
// store and one token cache.
type Client struct {
	opts       Options
	auth       *auth.Client
	creds      credentials.Store
	configPath string
	tr         *schemeTransport
	// mounts remembers which registries refuse cross-repository mounts.
	mounts *mountGate
	// mono remembers which registries complete single-request blob
	// uploads (monolithic.go).
	mono *monoGate
	// cache keeps manifests fetched by digest and each registry's
	// referrers capability for the run (readcache.go).
	cache *readCache
	// hc is HTTPClient's client.
	hc *http.Client
}

// New returns a Client for opts.
func New(opts Options) (*Client, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	// Keep as many connections to a registry as resolution has reads in
	// flight (resolve.DefaultConcurrency, --metadata-jobs), and some: a
	// connection closed after a burst is a new TCP (and TLS) handshake
	// in the next.
	base.MaxIdleConnsPerHost = 256
	base.MaxIdleConns = 512
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, &CAFileError{Path: opts.CAFile, Err: err}
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &CAFileError{Path: opts.CAFile, Err: errors.New("no PEM certificates found")}
		}
		base.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	if opts.Retry.Attempts <= 0 && opts.MaxRetries > 0 {
		opts.Retry.Attempts = opts.MaxRetries + 1
	}
	if opts.Retry.Backoff <= 0 && opts.Backoff > 0 {
		opts.Retry.Backoff = opts.Backoff
	}
	if opts.Retry.Log == nil {
		opts.Retry.Log = opts.Log
	}
	opts.Retry = opts.Retry.withDefaults()
	to := timeouts{
		dial:   orDefault(opts.DialTimeout, DefaultConnectTimeout),
		tls:    orDefault(opts.TLSHandshakeTimeout, DefaultConnectTimeout),
		header: orDefault(opts.ResponseHeaderTimeout, DefaultReadTimeout),
		idle:   orDefault(opts.IdleReadTimeout, DefaultReadTimeout),
	}
	to.apply(base)
	st := &schemeTransport{next: base, plain: map[string]bool{}, log: opts.Log}
	for _, h := range opts.PlainHTTP {
		if h == PlainHTTPAll {
			st.all = true
			continue
		}
		st.plain[strings.ToLower(h)] = true
	}
	var next http.RoundTripper = st
	if opts.Log != nil {
		next = &logTransport{next: st, log: opts.Log}
	}
	next = &timeoutTransport{next: next, to: to}
	rt := &retryTransport{next: next, policy: opts.Retry}

	var store credentials.Store
	var path string
	storeOpts := credentials.StoreOptions{AllowPlaintextPut: true, DetectDefaultNativeStore: true}
	var err error
	var ds *credentials.DynamicStore
	if opts.RegistryConfig != "" {
		ds, err = credentials.NewStore(opts.RegistryConfig, storeOpts)
	} else {
		ds, err = credentials.NewStoreFromDocker(storeOpts)
	}
	if err != nil {
		return nil, fmt.Errorf("reading registry credentials: %w", err)
	}
	store, path = ds, ds.ConfigPath()
	if opts.Log != nil {
		opts.Log.Debug("registry credentials", "config", path)
	}

	ua := opts.UserAgent
	if ua == "" {
		ua = "ferry"
	}
	ac := &auth.Client{
		Client:     &http.Client{Transport: rt},
		Cache:      auth.NewCache(),
		Credential: credentials.Credential(store),
		Header:     http.Header{"User-Agent": {ua}},
	}
	hc := &http.Client{Transport: &basicAuthTransport{next: rt, creds: store}}
	return &Client{opts: opts, auth: ac, creds: store, configPath: path, tr: st, mounts: newMountGate(), mono: newMonoGate(), cache: newReadCache(), hc: hc}, nil
}

// Repository returns an oras-go repository for "HOST/PATH". A reference
// with credentials in it ("user:pass@host/...") is refused.
func (c *Client) Repository(repo string) (*remote.Repository, error) {
	host, _, _ := strings.Cut(repo, "/")
	if strings.Contains(host, "@") {
		return nil, errUserinfo
	}
	r, err := remote.NewRepository(repo)
	if err != nil {
		return nil, fmt.Errorf("repository %q: %w", repo, err)
	}
	r.Client = c.client()
	r.PlainHTTP = c.tr.isPlain(r.Reference.Registry)
	r.SkipReferrersGC = true
	r.TagListPageSize = 1000
	// One referrers probe per registry and run, not per repository.
	if supported, known := c.cache.referrersCapability(r.Reference.Registry); known {
		_ = r.SetReferrersCapability(supported)
	}
	return r, nil
}

// Registry returns an oras-go registry client for host.
func (c *Client) Registry(host string) (*remote.Registry, error) {
	if strings.Contains(host, "@") {
		return nil, errUserinfo
	}
	r, err := remote.NewRegistry(host)
	if err != nil {
		return nil, err
	}
	r.Client = c.client()
	r.PlainHTTP = c.tr.isPlain(host)
	return r, nil
}

// errUserinfo never quotes the reference: it holds a password.
var errUserinfo = errors.New("registry references must not contain credentials (user:password@host); " +
	"remove them and use ferry login or a docker config file instead")

// client returns the remote.Client repositories and registries use.
func (c *Client) client() remote.Client {
	return &cachingClient{next: &authClient{c: c.auth, configPath: c.configPath, log: c.opts.Log, mounts: c.mounts, mono: c.mono}, cache: c.cache}
}

// Login checks user and password against the registry at host and, when
// they work, stores them in the docker config file (or the credential
// helper it names) the way docker login does.
func (c *Client) Login(ctx context.Context, host, user, password string) error {
	if strings.Contains(host, "@") {
		return errUserinfo
	}
	if strings.Contains(host, "/") {
		return fmt.Errorf("login: %q is not a registry host (HOST or HOST:PORT)", host)
	}
	reg, err := remote.NewRegistry(host)
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	ac := *c.auth
	ac.Cache = auth.NewCache() // validate these credentials, not cached tokens
	reg.Client = &ac
	reg.PlainHTTP = c.tr.isPlain(host)
	err = credentials.Login(ctx, c.creds, reg, auth.Credential{Username: user, Password: password})
	if err == nil {
		return nil
	}
	var er *errcode.ErrorResponse
	if errors.As(err, &er) && (er.StatusCode == http.StatusUnauthorized || er.StatusCode == http.StatusForbidden) {
		return &AuthError{Host: host, Method: http.MethodGet, Path: "/v2/", StatusCode: er.StatusCode, Err: err}
	}
	return fmt.Errorf("login to %s: %w", host, redact.Error(err))
}

// Logout removes the credentials for host from the docker config file (or
// the credential helper it names).
func (c *Client) Logout(ctx context.Context, host string) error {
	if err := credentials.Logout(ctx, c.creds, host); err != nil {
		return fmt.Errorf("logout from %s: %w", host, redact.Error(err))
	}
	return nil
}

// RetryPolicy returns the policy the client retries requests with (its
// Log set from Options.Log), for other layers to retry whole operations
// the transport cannot replay, such as a blob push.
func (c *Client) RetryPolicy() RetryPolicy { return c.opts.Retry }

// orDefault returns d for zero, zero for negative (no limit), else v.
func orDefault(v, d time.Duration) time.Duration {
	switch {
	case v == 0:
		return d
	case v < 0:
		return 0
	}
	return v
}

// Credentials returns the credential store, for login and logout.
func (c *Client) Credentials() credentials.Store { return c.creds }

// ConfigPath returns the docker config.json path credentials come from.
func (c *Client) ConfigPath() string { return c.configPath }

// HTTPClient returns the client's HTTP client for content that is not in
// a registry (Helm's classic chart repositories, KUDO repositories,
// mixin feeds), with retries and scheme selection, and no registry token
// exchange: a host the docker config holds a username and password for
// gets them as HTTP Basic authentication (basicAuthTransport).
func (c *Client) HTTPClient() *http.Client { return c.hc }

// basicAuthTransport sends, to a host the docker config (or the
// credential helper it names) holds a username and password for, those
// as HTTP Basic authentication, as Helm sends a classic repository's
// username and password with every request to it (helm's
// pkg/getter/httpgetter.go: req.SetBasicAuth), over HTTPS or to a
// loopback host only. A request that carries its own Authorization is
// left alone. The credentials are never logged or printed: they travel
// in the Authorization header alone.
type basicAuthTransport struct {
	next  http.RoundTripper
	creds credentials.Store
}

func (t *basicAuthTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" || (req.URL.Scheme != "https" && !IsLoopback(req.URL.Host)) {
		return t.next.RoundTrip(req)
	}
	cred, err := t.creds.Get(req.Context(), req.URL.Host)
	if err != nil {
		return nil, fmt.Errorf("credentials for %s: %w", req.URL.Host, redact.Error(err))
	}
	if cred.Username == "" && cred.Password == "" {
		return t.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.SetBasicAuth(cred.Username, cred.Password)
	return t.next.RoundTrip(r)
}

// IsLoopback reports whether host (with optional port) is a loopback
// address or "localhost".
func IsLoopback(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// schemeTransport refuses plain HTTP to hosts that are neither loopback nor
// named with --plain-http, and decides which loopback hosts speak plain HTTP:
// a loopback host is probed over HTTPS once (as docker does for
// 127.0.0.0/8) and remembered as plain when its answer is not TLS.
type schemeTransport struct {
	next  http.RoundTripper
	mu    sync.Mutex
	plain map[string]bool // host -> plain HTTP
	// all is --plain-http as a switch: plain HTTP to every host; log
	// warns once per host that is not loopback (warned).
	all    bool
	log    *slog.Logger
	warned map[string]bool
	// probes runs one HTTPS probe per loopback host at a time: the
	// packages of a run open their repositories at once, and each would
	// otherwise start a TLS handshake of its own.
	probes singleflight.Group
}

// PlainHTTPAll in Options.PlainHTTP speaks plain HTTP to every registry
// (--plain-http given without a host, as oras and crane's --insecure do).
const PlainHTTPAll = "*"

// isPlain reports whether repositories on host use plain HTTP.
func (t *schemeTransport) isPlain(host string) bool {
	host = strings.ToLower(host)
	if t.all {
		t.mu.Lock()
		first := !t.warned[host]
		if t.warned == nil {
			t.warned = map[string]bool{}
		}
		t.warned[host] = true
		t.mu.Unlock()
		if first && !IsLoopback(host) && t.log != nil {
			t.log.Warn("plain HTTP to every host: speaking plain HTTP, unencrypted and unauthenticated, to a registry that is not loopback", "host", host)
		}
		return true
	}
	t.mu.Lock()
	plain, known := t.plain[host]
	t.mu.Unlock()
	if known || !IsLoopback(host) {
		return plain
	}
	v, _, _ := t.probes.Do(host, func() (any, error) {
		t.mu.Lock()
		plain, known := t.plain[host]
		t.mu.Unlock()
		if known {
			return plain, nil
		}
		return t.probe(host), nil
	})
	return v.(bool)
}

// probe asks a loopback host for /v2/ over HTTPS and reports whether it
// answered in plain HTTP; the answer is remembered unless the probe could
// not tell (the host did not answer).
func (t *schemeTransport) probe(host string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+host+"/v2/", nil)
	if err != nil {
		return false
	}
	resp, err := t.next.RoundTrip(req)
	var rhe tls.RecordHeaderError
	plain := err != nil && errors.As(err, &rhe)
	if err == nil {
		resp.Body.Close()
	}
	// A host that speaks TLS with a certificate we do not trust stays on
	// HTTPS, so that requests fail with the certificate problem instead of
	// silently falling back to plain HTTP.
	if err == nil || plain || tlsError(host, err) != nil {
		t.mu.Lock()
		t.plain[host] = plain
		t.mu.Unlock()
	}
	return plain
}

func (t *schemeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	host := strings.ToLower(req.URL.Host)
	if req.URL.Scheme == "http" && !IsLoopback(host) && !t.isPlain(host) {
		return nil, &PlainHTTPError{Host: host}
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		if te := tlsError(host, err); te != nil {
			return nil, te
		}
		var rhe tls.RecordHeaderError
		if req.URL.Scheme == "https" && errors.As(err, &rhe) {
			return nil, &PlainHTTPError{Host: host, Answered: true, Err: err}
		}
	}
	return resp, err
}
