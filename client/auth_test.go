package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/authtest"
	"github.com/ferryhq/ferry/serve"
)

// leaks collects every message the tests produce, to grep for secrets.
type leaks struct {
	mu   sync.Mutex
	msgs []string
}

func (l *leaks) add(err error) {
	if err == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, err.Error())
}

func (l *leaks) check(t *testing.T, secrets ...string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		for _, s := range secrets {
			if s != "" && strings.Contains(m, s) {
				t.Errorf("secret leaked in %q", m)
			}
		}
	}
}

// sample packs a one-layer image in memory, tagged "v1".
func sample(t *testing.T) (*memory.Store, ocispec.Descriptor) {
	t.Helper()
	ctx := context.Background()
	mem := memory.New()
	layer := []byte("layer for " + t.Name())
	ld := content.NewDescriptorFromBytes("application/vnd.test.layer", layer)
	if err := mem.Push(ctx, ld, strings.NewReader(string(layer))); err != nil {
		t.Fatal(err)
	}
	desc, err := oras.PackManifest(ctx, mem, oras.PackManifestVersion1_1, "application/vnd.test",
		oras.PackManifestOptions{Layers: []ocispec.Descriptor{ld}})
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Tag(ctx, desc, "v1"); err != nil {
		t.Fatal(err)
	}
	return mem, desc
}

func newClient(t *testing.T, o client.Options) *client.Client {
	t.Helper()
	if o.Backoff == 0 {
		o.Backoff = 1
	}
	c, err := client.New(o)
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	return c
}

// pushPull pushes the sample to host/repo and reads it back.
func pushPull(t *testing.T, c *client.Client, ref string) error {
	t.Helper()
	ctx := context.Background()
	mem, desc := sample(t)
	repo, err := c.Repository(ref)
	if err != nil {
		return err
	}
	if _, err := oras.Copy(ctx, mem, "v1", repo, "v1", oras.DefaultCopyOptions); err != nil {
		return err
	}
	got, err := repo.Resolve(ctx, "v1")
	if err != nil {
		return err
	}
	if got.Digest != desc.Digest {
		t.Fatalf("resolved %s, want %s", got.Digest, desc.Digest)
	}
	_, err = oras.Copy(ctx, repo, "v1", memory.New(), "v1", oras.DefaultCopyOptions)
	return err
}

func wantUnauthorized(t *testing.T, err error, host string) {
	t.Helper()
	if err == nil {
		t.Fatal("succeeded without valid credentials")
	}
	if !strings.Contains(err.Error(), "unauthorized") || !strings.Contains(err.Error(), host) {
		t.Fatalf("error %q does not name %s and say unauthorized", err, host)
	}
	var ae *client.AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("error %q is not a *client.AuthError", err)
	}
}

func TestHtpasswdOverTLS(t *testing.T) {
	tests := []struct {
		name   string
		config func(t *testing.T, dir, host, user, pass string) string
		helper bool
	}{
		{name: "auths", config: func(t *testing.T, dir, host, user, pass string) string {
			return authtest.WriteDockerConfig(t, dir, host, user, pass)
		}},
		{name: "credHelpers", helper: true, config: func(t *testing.T, dir, host, user, pass string) string {
			return authtest.WriteCredHelper(t, dir, host, user, pass)
		}},
		{name: "credsStore", helper: true, config: func(t *testing.T, dir, host, user, pass string) string {
			return authtest.WriteCredsStore(t, dir, host, user, pass)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l leaks
			reg := authtest.NewTLSRegistry(t, authtest.Options{})
			dir := t.TempDir()
			cfg := tt.config(t, dir, reg.Host, reg.User, reg.Password)
			c := newClient(t, client.Options{CAFile: reg.CAFile, RegistryConfig: cfg})
			if err := pushPull(t, c, reg.Host+"/a/b"); err != nil {
				t.Fatalf("push/pull with credentials: %v", err)
			}
			if tt.helper {
				log, err := os.ReadFile(authtest.HelperLog(dir))
				if err != nil || !strings.Contains(string(log), "get "+reg.Host) {
					t.Fatalf("credential helper was not asked for %s: %q %v", reg.Host, log, err)
				}
			}

			none := newClient(t, client.Options{CAFile: reg.CAFile, RegistryConfig: filepath.Join(t.TempDir(), "config.json")})
			err := pushPull(t, none, reg.Host+"/a/c")
			l.add(err)
			wantUnauthorized(t, err, reg.Host)

			wrongDir := t.TempDir()
			wrong := newClient(t, client.Options{CAFile: reg.CAFile,
				RegistryConfig: authtest.WriteDockerConfig(t, wrongDir, reg.Host, reg.User, "not-"+reg.Password)})
			err = pushPull(t, wrong, reg.Host+"/a/c")
			l.add(err)
			wantUnauthorized(t, err, reg.Host)
			l.check(t, reg.Password)
		})
	}
}

func TestAnonymousRead(t *testing.T) {
	reg := authtest.NewTLSRegistry(t, authtest.Options{AnonymousRead: true})
	ctx := context.Background()
	c := newClient(t, client.Options{CAFile: reg.CAFile,
		RegistryConfig: authtest.WriteDockerConfig(t, t.TempDir(), reg.Host, reg.User, reg.Password)})
	if err := pushPull(t, c, reg.Host+"/a/b"); err != nil {
		t.Fatalf("push/pull with credentials: %v", err)
	}
	anon := newClient(t, client.Options{CAFile: reg.CAFile, RegistryConfig: filepath.Join(t.TempDir(), "config.json")})
	repo, err := anon.Repository(reg.Host + "/a/b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oras.Copy(ctx, repo, "v1", memory.New(), "v1", oras.DefaultCopyOptions); err != nil {
		t.Fatalf("anonymous pull: %v", err)
	}
	wantUnauthorized(t, pushPull(t, anon, reg.Host+"/a/c"), reg.Host)
}

func TestTokenRegistry(t *testing.T) {
	ctx := context.Background()
	var l leaks
	reg := authtest.NewTokenRegistry(t)
	dir := t.TempDir()
	c := newClient(t, client.Options{RegistryConfig: authtest.WriteCredHelper(t, dir, reg.Host, reg.User, reg.Password)})
	if err := pushPull(t, c, reg.Host+"/src/app"); err != nil {
		t.Fatalf("push/pull with a token: %v", err)
	}

	// Mount the sample's layer into another repository.
	mem, _ := sample(t)
	_ = mem
	layer := []byte("layer for " + t.Name())
	ld := content.NewDescriptorFromBytes("application/vnd.test.layer", layer)
	dst, err := c.Repository(reg.Host + "/dst/app")
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Mount(ctx, ld, "src/app", nil); err != nil {
		t.Fatalf("cross-repository mount: %v", err)
	}
	if ok, err := dst.Exists(ctx, ld); err != nil || !ok {
		t.Fatalf("mounted blob exists=%v err=%v", ok, err)
	}
	var sawMount bool
	for _, s := range reg.Scopes() {
		if s == "repository:src/app:pull" {
			sawMount = true
		}
	}
	if !sawMount {
		t.Fatalf("no pull scope on the mount source requested; scopes: %v", reg.Scopes())
	}
	if len(reg.Tokens()) == 0 {
		t.Fatal("no token issued")
	}

	none := newClient(t, client.Options{RegistryConfig: filepath.Join(t.TempDir(), "config.json")})
	err = pushPull(t, none, reg.Host+"/other/app")
	l.add(err)
	wantUnauthorized(t, err, reg.Host)

	wrong := newClient(t, client.Options{
		RegistryConfig: authtest.WriteDockerConfig(t, t.TempDir(), reg.Host, reg.User, "bad-"+reg.Password)})
	err = pushPull(t, wrong, reg.Host+"/other/app")
	l.add(err)
	wantUnauthorized(t, err, reg.Host)
	if reg.Denied() == 0 {
		t.Fatal("the token server refused nothing")
	}
	l.check(t, append(reg.Tokens(), reg.Password)...)
}

// logBuffer collects log lines written from several goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func TestTLSFailures(t *testing.T) {
	ca := authtest.NewCA(t)
	tests := []struct {
		name   string
		cert   authtest.CertOptions
		trust  bool
		reason string
	}{
		{name: "untrusted CA", reason: "unknown authority"},
		{name: "wrong host", cert: authtest.CertOptions{Hosts: []string{"registry.example"}}, trust: true, reason: "different host"},
		{name: "expired", cert: authtest.CertOptions{Expired: true}, trust: true, reason: "expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			certFile, keyFile := ca.Issue(t, tt.cert)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			cl := &countingListener{Listener: ln}
			srv, err := serve.Start(context.Background(), serve.Options{Root: t.TempDir(), Listener: cl, TLSCert: certFile, TLSKey: keyFile})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			o := client.Options{RegistryConfig: filepath.Join(t.TempDir(), "config.json"), MaxRetries: 4}
			if tt.trust {
				o.CAFile = ca.File
			}
			c := newClient(t, o)
			repo, err := c.Repository(srv.Addr + "/a/b")
			if err != nil {
				t.Fatal(err)
			}
			_, err = repo.Resolve(context.Background(), "v1")
			if err == nil {
				t.Fatal("resolve succeeded")
			}
			msg := err.Error()
			t.Log(msg)
			for _, want := range []string{srv.Addr, tt.reason, "retrying will not help"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
			var te *client.TLSError
			if !errors.As(err, &te) || te.Host != srv.Addr {
				t.Errorf("error %q is not a *client.TLSError for %s", msg, srv.Addr)
			}
			// One HTTPS probe and one request: no plain-HTTP fallback, no retries.
			if n := cl.n.Load(); n > 2 {
				t.Errorf("%d connections: the TLS failure was retried", n)
			}
		})
	}
}

func TestLoginLogout(t *testing.T) {
	ctx := context.Background()
	type registry struct{ host, ca, user, pass string }
	tlsReg := func(t *testing.T) registry {
		r := authtest.NewTLSRegistry(t, authtest.Options{})
		return registry{r.Host, r.CAFile, r.User, r.Password}
	}
	tokenReg := func(t *testing.T) registry {
		r := authtest.NewTokenRegistry(t)
		return registry{r.Host, "", r.User, r.Password}
	}
	tests := []struct {
		name   string
		start  func(t *testing.T) registry
		helper bool
	}{
		{name: "htpasswd, config file", start: tlsReg},
		{name: "token, config file", start: tokenReg},
		{name: "htpasswd, credential helper", start: tlsReg, helper: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l leaks
			reg := tt.start(t)
			dir := t.TempDir()
			cfg := filepath.Join(dir, "config.json")
			if tt.helper {
				cfg = authtest.WriteCredHelper(t, dir, reg.host, "someone", "stale-secret")
			}
			c := newClient(t, client.Options{CAFile: reg.ca, RegistryConfig: cfg})

			err := c.Login(ctx, reg.host, reg.user, "wrong-"+reg.pass)
			l.add(err)
			wantUnauthorized(t, err, reg.host)
			if !tt.helper && hasAuthEntry(t, cfg, reg.host) {
				t.Fatal("a rejected login was stored")
			}

			if err := c.Login(ctx, reg.host, reg.user, reg.pass); err != nil {
				t.Fatalf("Login: %v", err)
			}
			if tt.helper {
				log, _ := os.ReadFile(authtest.HelperLog(dir))
				if !strings.Contains(string(log), "store") {
					t.Fatalf("login did not store through the helper: %q", log)
				}
			} else if !hasAuthEntry(t, cfg, reg.host) {
				t.Fatal("login stored nothing in config.json")
			}

			// A new client reading the same config can push.
			c2 := newClient(t, client.Options{CAFile: reg.ca, RegistryConfig: cfg})
			if err := pushPull(t, c2, reg.host+"/a/b"); err != nil {
				t.Fatalf("push after login: %v", err)
			}

			if err := c.Logout(ctx, reg.host); err != nil {
				t.Fatalf("Logout: %v", err)
			}
			if tt.helper {
				log, _ := os.ReadFile(authtest.HelperLog(dir))
				if !strings.Contains(string(log), "erase "+reg.host) {
					t.Fatalf("logout did not erase through the helper: %q", log)
				}
			} else if hasAuthEntry(t, cfg, reg.host) {
				t.Fatal("logout left the entry in config.json")
			}
			c3 := newClient(t, client.Options{CAFile: reg.ca, RegistryConfig: cfg})
			err = pushPull(t, c3, reg.host+"/a/c")
			l.add(err)
			wantUnauthorized(t, err, reg.host)
			l.check(t, reg.pass, "stale-secret")
		})
	}
}

func hasAuthEntry(t *testing.T, path, host string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Auths map[string]struct {
			Auth string `json:"auth"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("config.json: %v", err)
	}
	e, ok := cfg.Auths[host]
	return ok && e.Auth != ""
}

func TestNoSecretsInErrors(t *testing.T) {
	ctx := context.Background()
	var l leaks
	logs := &logBuffer{}
	reg := authtest.NewTLSRegistry(t, authtest.Options{Log: logs})
	c := newClient(t, client.Options{CAFile: reg.CAFile, RegistryConfig: filepath.Join(t.TempDir(), "config.json")})

	for _, ref := range []string{
		reg.User + ":" + reg.Password + "@" + reg.Host + "/a/b",
		reg.User + ":" + reg.Password + "@" + reg.Host + "/a/b@" + digest.FromString("x").String(),
	} {
		_, err := c.Repository(ref)
		if err == nil {
			t.Fatalf("a reference with credentials was accepted")
		}
		if !strings.Contains(err.Error(), "credentials") {
			t.Errorf("error %q does not say why", err)
		}
		l.add(err)
	}
	_, err := c.Registry(reg.User + ":" + reg.Password + "@" + reg.Host)
	l.add(err)
	l.add(c.Login(ctx, reg.User+":"+reg.Password+"@"+reg.Host, reg.User, reg.Password))
	l.add(c.Login(ctx, reg.Host, reg.User, "x"+reg.Password))

	// Untrusted TLS with credentials configured.
	withCreds := newClient(t, client.Options{
		RegistryConfig: authtest.WriteDockerConfig(t, t.TempDir(), reg.Host, reg.User, reg.Password)})
	l.add(pushPull(t, withCreds, reg.Host+"/a/b"))

	tok := authtest.NewTokenRegistry(t)
	bad := newClient(t, client.Options{
		RegistryConfig: authtest.WriteDockerConfig(t, t.TempDir(), tok.Host, tok.User, "y"+tok.Password)})
	l.add(pushPull(t, bad, tok.Host+"/a/b"))
	good := newClient(t, client.Options{
		RegistryConfig: authtest.WriteDockerConfig(t, t.TempDir(), tok.Host, tok.User, tok.Password)})
	if err := pushPull(t, good, tok.Host+"/a/b"); err != nil {
		t.Fatal(err)
	}
	tok.Server.Close()
	l.add(pushPull(t, good, tok.Host+"/a/b"))

	l.add(errors.New(logs.String())) // the registry's own log lines
	if len(l.msgs) < 6 {
		t.Fatalf("only %d errors collected", len(l.msgs))
	}
	l.check(t, append(tok.Tokens(), reg.Password, tok.Password, "x"+reg.Password, "y"+tok.Password)...)
}
