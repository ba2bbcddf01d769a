package authtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/ferryhq/ferry/serve"
)

// Options configures NewTLSRegistry.
type Options struct {
	// User and Password are the htpasswd user; empty means "ferry" and a
	// random password.
	User, Password string
	// AnonymousRead lets reads through without credentials.
	AnonymousRead bool
	// ReadOnly refuses every write.
	ReadOnly bool
	// Cert says which server certificate to issue (default: valid for
	// 127.0.0.1 and localhost).
	Cert CertOptions
	// Extra routes, obeying the same auth (see serve.Options.Extra).
	Extra map[string]http.Handler
	// Wrap wraps the whole server handler (see serve.Options.Wrap).
	Wrap func(http.Handler) http.Handler
	// Log receives the registry's log lines.
	Log io.Writer
}

// Registry is a running registry that demands basic auth over TLS.
type Registry struct {
	// Host is "127.0.0.1:PORT".
	Host string
	// CAFile is the PEM file of the CA that signed the server
	// certificate, for client.Options.CAFile.
	CAFile string
	// User and Password are valid credentials.
	User, Password string
	// Root is the storage directory.
	Root string
	// Htpasswd is the htpasswd file.
	Htpasswd string
	// CA is the test CA, to issue more certificates.
	CA *CA
	// Server is the running server.
	Server *serve.Server
}

// NewTLSRegistry starts serve.Start over HTTPS on 127.0.0.1 with a fresh test
// CA and htpasswd basic auth, and stops it when the test ends.
func NewTLSRegistry(t testing.TB, o Options) *Registry {
	t.Helper()
	if o.User == "" {
		o.User = "ferry"
	}
	if o.Password == "" {
		o.Password = Secret(t)
	}
	ca := NewCA(t)
	certFile, keyFile := ca.Issue(t, o.Cert)
	dir := t.TempDir()
	htpasswd := WriteHtpasswd(t, dir, map[string]string{o.User: o.Password})
	root := filepath.Join(dir, "root")
	srv, err := serve.Start(context.Background(), serve.Options{
		Root:          root,
		Addr:          "127.0.0.1:0",
		TLSCert:       certFile,
		TLSKey:        keyFile,
		Htpasswd:      htpasswd,
		AnonymousRead: o.AnonymousRead,
		ReadOnly:      o.ReadOnly,
		Extra:         o.Extra,
		Wrap:          o.Wrap,
		Log:           o.Log,
	})
	if err != nil {
		t.Fatalf("authtest: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return &Registry{
		Host: srv.Addr, CAFile: ca.File, User: o.User, Password: o.Password,
		Root: root, Htpasswd: htpasswd, CA: ca, Server: srv,
	}
}

// Secret returns a fresh random password, distinctive enough to grep for.
func Secret(t testing.TB) string {
	t.Helper()
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "pw-" + hex.EncodeToString(b[:])
}

// WriteHtpasswd writes an htpasswd file of bcrypt entries for users (name to
// password) in dir and returns its path.
func WriteHtpasswd(t testing.TB, dir string, users map[string]string) string {
	t.Helper()
	names := make([]string, 0, len(users))
	for u := range users {
		names = append(names, u)
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, u := range names {
		h, err := bcrypt.GenerateFromPassword([]byte(users[u]), bcrypt.MinCost)
		if err != nil {
			t.Fatalf("authtest: bcrypt: %v", err)
		}
		fmt.Fprintf(&sb, "%s:%s\n", u, h)
	}
	path := filepath.Join(dir, "htpasswd")
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		t.Fatalf("authtest: %v", err)
	}
	return path
}
