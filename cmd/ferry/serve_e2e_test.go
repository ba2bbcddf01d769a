package main_test

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/authtest"
	"github.com/ferryhq/ferry/internal/clitest"
)

// TestServeRefusesUnprotected checks which `ferry serve` flag sets start and
// which are refused, with exit 2 and the reason.
func TestServeRefusesUnprotected(t *testing.T) {
	t.Parallel()
	ca := authtest.NewCA(t)
	cert, key := ca.Issue(t, authtest.CertOptions{})
	htpasswd := authtest.WriteHtpasswd(t, t.TempDir(), map[string]string{"u": authtest.Secret(t)})
	refused := []struct {
		name string
		args []string
		want []string
	}{
		{"all interfaces, no TLS, no auth", []string{"--addr", "0.0.0.0:0"}, []string{"refusing to listen on 0.0.0.0:0", "neither TLS nor authentication", "--insecure"}},
		{"empty host", []string{"--addr", ":0"}, []string{"refusing", "--insecure"}},
		{"certificate without key", []string{"--tls-cert", cert}, []string{"--tls-key"}},
		{"anonymous read without htpasswd", []string{"--anonymous-read"}, []string{"--htpasswd"}},
		{"missing htpasswd file", []string{"--htpasswd", filepath.Join(t.TempDir(), "nope")}, []string{"--htpasswd"}},
		{"bad log level", []string{"--log-level", "loud"}, []string{"--log-level"}},
	}
	for _, tt := range refused {
		t.Run("refused/"+tt.name, func(t *testing.T) {
			env := clitest.New(t)
			env.Expect(2, append([]string{"serve", "--root", env.Path("reg")}, tt.args...), tt.want...)
			if _, err := os.Stat(env.Path("reg")); !os.IsNotExist(err) {
				t.Errorf("a refused serve created its storage root")
			}
		})
	}
	started := []struct {
		name string
		args []string
	}{
		{"all interfaces with --insecure", []string{"--addr", "0.0.0.0:0", "--insecure"}},
		{"all interfaces with TLS", []string{"--addr", "0.0.0.0:0", "--tls-cert", cert, "--tls-key", key}},
		{"all interfaces with htpasswd", []string{"--addr", "0.0.0.0:0", "--htpasswd", htpasswd}},
	}
	for _, tt := range started {
		t.Run("started/"+tt.name, func(t *testing.T) {
			s := startServe(t, nil, false, tt.args...)
			if _, port, err := net.SplitHostPort(s.Host); err != nil || port == "0" {
				t.Fatalf("listening on %q", s.Host)
			}
		})
	}
}

// TestServeModes mirrors into `ferry serve` over TLS with --anonymous-read
// and with --read-only.
func TestServeModes(t *testing.T) {
	t.Parallel()
	ca := authtest.NewCA(t)
	src := startServe(t, ca, true)
	root := pushImage(t, src, ca.File, "modes/app")

	t.Run("anonymous read", func(t *testing.T) {
		m := startServe(t, ca, true, "--anonymous-read")
		env := clitest.New(t)
		(&dockerConfig{}).auth(src.Host, src.User, src.Password).auth(m.Host, m.User, m.Password).
			write(t, filepath.Join(env.Dir, ".docker", "config.json"))
		env.MustRun("lock", root, "--ca-file", ca.File)
		env.MustRun("mirror", "--lock", "ferry.lock", "--to", m.Host, "--ca-file", ca.File)

		// Anyone may read: verify and install need no credentials.
		anon := clitest.New(t)
		anon.WriteFile("ferry.lock", env.ReadFile("ferry.lock"))
		anon.MustRun("verify", "--deep", "--ca-file", ca.File)
		anon.MustRun("install", "--dest", "inst", "--ca-file", ca.File)
		// Writing still needs them.
		srcOnly := (&dockerConfig{}).auth(src.Host, src.User, src.Password).write(t, filepath.Join(t.TempDir(), "c.json"))
		other := pushImage(t, src, ca.File, "modes/other")
		fresh := clitest.New(t)
		wantUnauthorized(t, fresh.Run("mirror", other, "--to", m.Host, "--ca-file", ca.File, "--registry-config", srcOnly), m.Host)
		wantAbsent(t, fresh.Path("ferry.lock"))
	})

	t.Run("read-only", func(t *testing.T) {
		m := startServe(t, ca, true, "--read-only")
		env := clitest.New(t)
		(&dockerConfig{}).auth(src.Host, src.User, src.Password).auth(m.Host, m.User, m.Password).
			write(t, filepath.Join(env.Dir, ".docker", "config.json"))
		env.MustRun("lock", root, "--ca-file", ca.File)
		lock := env.ReadFile("ferry.lock")
		r := env.Expect(1, []string{"mirror", "--lock", "ferry.lock", "--to", m.Host, "--ca-file", ca.File}, m.Host)
		if env.ReadFile("ferry.lock") != lock {
			t.Fatalf("a refused mirror changed the lock\n%s", r.Stderr)
		}
	})
}

// TestTLSFailures checks that certificate problems fail with exit 1, the
// host, the reason and "retrying will not help".
func TestTLSFailures(t *testing.T) {
	t.Parallel()
	ca := authtest.NewCA(t)
	// A loopback plain-HTTP source, to mirror from into the TLS registry.
	plain := startServe(t, nil, false)
	plainRoot := pushImage(t, plain, "", "tls/src")
	tests := []struct {
		name   string
		cert   authtest.CertOptions
		trust  bool
		reason string
	}{
		{name: "self-signed or unknown CA", reason: "unknown authority"},
		{name: "wrong host", cert: authtest.CertOptions{Hosts: []string{"registry.example"}}, trust: true, reason: "different host"},
		{name: "expired", cert: authtest.CertOptions{Expired: true}, trust: true, reason: "expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cert, key := ca.Issue(t, tt.cert)
			s := startServe(t, nil, false, "--tls-cert", cert, "--tls-key", key)
			env := clitest.New(t)
			var extra []string
			if tt.trust {
				extra = []string{"--ca-file", ca.File}
			}
			ref := s.Host + "/tls/app:v1"
			for _, args := range [][]string{
				{"resolve", ref},
				{"lock", ref},
				{"mirror", plainRoot, "--to", s.Host},
			} {
				env.Expect(1, append(args, extra...), s.Host, tt.reason, "retrying will not help")
			}
			wantAbsent(t, env.Path("ferry.lock"))
		})
	}
}

// TestUserinfoRefused checks that references with credentials are refused
// with exit 2 and an error that does not echo the password.
func TestUserinfoRefused(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-secret"
	env := clitest.New(t)
	env.WriteFile("ferry.lock", "apiVersion: ferry.dev/v1alpha1\nkind: Lock\ninputs: sha256:0\n")
	bad := "bob:" + secret + "@127.0.0.1:1"
	for _, args := range [][]string{
		{"resolve", bad + "/a/b:v1"},
		{"lock", bad + "/a/b:v1", "--lock", "new.lock"},
		{"mirror", bad + "/a/b:v1", "--to", "127.0.0.1:1"},
		{"mirror", "127.0.0.1:1/a/b:v1", "--to", bad},
		{"mirror", "--lock", "ferry.lock", "--to", bad + "/mirror"},
		{"mirror", "--lock", "ferry.lock", "--to", bad},
		{"verify", "--mirror", bad},
		{"install", "--mirror", bad, "--dest", "inst"},
	} {
		r := env.Expect(2, args, "credentials")
		if strings.Contains(r.Stdout+r.Stderr, secret) {
			t.Errorf("ferry %s echoed the password:\n%s", args[0], r.Stderr)
		}
	}
	wantAbsent(t, env.Path("new.lock"))
	wantAbsent(t, env.Path("inst"))
}

// TestServeMixinEndpointsObeyAuth checks that Porter's mixin mirror
// endpoints of `ferry serve` ask for the same credentials as the registry.
func TestServeMixinEndpointsObeyAuth(t *testing.T) {
	t.Parallel()
	ca := authtest.NewCA(t)
	pool := x509.NewCertPool()
	pem, err := os.ReadFile(ca.File)
	if err != nil || !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("reading the test CA: %v", err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	get := func(s *served, withCreds bool) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "https://"+s.Host+"/mixins/atom.xml", nil)
		if err != nil {
			t.Fatal(err)
		}
		if withCreds {
			req.SetBasicAuth(s.User, s.Password)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	tests := []struct {
		name  string
		extra []string
		anon  int // 401: credentials required; 0: reads are anonymous
	}{
		{name: "htpasswd", anon: http.StatusUnauthorized},
		{name: "htpasswd with anonymous read", extra: []string{"--anonymous-read"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServe(t, ca, true, tt.extra...)
			if got := get(s, true); got == http.StatusUnauthorized || got == http.StatusForbidden {
				t.Fatalf("with credentials: %d", got)
			}
			got := get(s, false)
			if tt.anon == http.StatusUnauthorized && got != http.StatusUnauthorized {
				t.Fatalf("without credentials: %d, want 401", got)
			}
			if tt.anon == 0 && (got == http.StatusUnauthorized || got == http.StatusForbidden) {
				t.Fatalf("anonymous read refused: %d", got)
			}
		})
	}
}
