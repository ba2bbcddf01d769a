package serve_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/memory"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/authtest"
	"github.com/ferryhq/ferry/serve"
)

// syncBuffer collects log output written from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestStartRefusesUnprotectedNetworkAddress(t *testing.T) {
	ca := authtest.NewCA(t)
	cert, key := ca.Issue(t, authtest.CertOptions{})
	htpasswd := authtest.WriteHtpasswd(t, t.TempDir(), map[string]string{"u": "p"})
	tests := []struct {
		name    string
		opts    serve.Options
		wantErr string
	}{
		{name: "all interfaces, open", opts: serve.Options{Addr: "0.0.0.0:0"}, wantErr: "could read and overwrite"},
		{name: "empty host, open", opts: serve.Options{Addr: ":0"}, wantErr: "refusing to listen"},
		{name: "insecure", opts: serve.Options{Addr: "0.0.0.0:0", Insecure: true}},
		{name: "loopback", opts: serve.Options{Addr: "127.0.0.1:0"}},
		{name: "localhost", opts: serve.Options{Addr: "localhost:0"}},
		{name: "tls", opts: serve.Options{Addr: "0.0.0.0:0", TLSCert: cert, TLSKey: key}},
		{name: "htpasswd", opts: serve.Options{Addr: "0.0.0.0:0", Htpasswd: htpasswd}},
		{name: "cert without key", opts: serve.Options{Addr: "127.0.0.1:0", TLSCert: cert}, wantErr: "both a certificate and a key"},
		{name: "anonymous read without htpasswd", opts: serve.Options{Addr: "127.0.0.1:0", AnonymousRead: true}, wantErr: "htpasswd file"},
		{name: "missing htpasswd file", opts: serve.Options{Addr: "127.0.0.1:0", Htpasswd: t.TempDir() + "/nope"}, wantErr: "serve: htpasswd file open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Root = t.TempDir()
			s, err := serve.Start(context.Background(), tt.opts)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				_ = s.Close()
				return
			}
			if err == nil {
				_ = s.Close()
				t.Fatal("Start succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %q does not mention %q", err, tt.wantErr)
			}
			if strings.Contains(tt.name, "open") {
				if !errors.Is(err, serve.ErrUnprotected) || !strings.Contains(err.Error(), "0.0.0.0:0") && !strings.Contains(err.Error(), ":0") {
					t.Fatalf("error %q: want ErrUnprotected naming the address", err)
				}
			}
		})
	}
	// A missing htpasswd file must not be created (distribution would
	// provision one and log its password).
	missing := t.TempDir() + "/absent"
	if _, err := serve.Start(context.Background(), serve.Options{Root: t.TempDir(), Addr: "127.0.0.1:0", Htpasswd: missing}); err == nil {
		t.Fatal("Start with a missing htpasswd succeeded")
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("htpasswd file was created: %v", err)
	}
}

// httpsClient trusts caFile.
func httpsClient(t *testing.T, caFile string) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

// emptyDigest is the digest of no bytes, a subject nothing refers to.
var emptyDigest = digest.FromBytes(nil).String()

func TestAuthAndReadOnlyRules(t *testing.T) {
	mixins := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "mixin feed")
	})
	type req struct {
		method, path string
		creds        string // "", "good", "bad"
		want         int
	}
	tests := []struct {
		name          string
		anonymousRead bool
		readOnly      bool
		reqs          []req
	}{
		{
			name: "htpasswd",
			reqs: []req{
				{"GET", "/v2/", "", 401},
				{"GET", "/v2/", "bad", 401},
				{"GET", "/v2/", "good", 200},
				{"GET", "/v2/a/b/tags/list", "", 401},
				{"GET", "/v2/a/b/tags/list", "good", 404},
				{"POST", "/v2/a/b/blobs/uploads/", "", 401},
				{"POST", "/v2/a/b/blobs/uploads/", "good", 202},
				{"GET", "/v2/a/b/referrers/" + emptyDigest, "", 401},
				{"GET", "/v2/a/b/referrers/" + emptyDigest, "bad", 401},
				{"GET", "/v2/a/b/referrers/" + emptyDigest, "good", 200},
				{"GET", "/mixins/atom.xml", "", 401},
				{"GET", "/mixins/atom.xml", "good", 200},
			},
		},
		{
			name:          "anonymous read",
			anonymousRead: true,
			reqs: []req{
				{"GET", "/v2/", "", 401},
				{"GET", "/v2/", "good", 200},
				{"GET", "/v2/a/b/tags/list", "", 404},
				{"HEAD", "/v2/a/b/manifests/v1", "", 404},
				{"GET", "/v2/a/b/referrers/" + emptyDigest, "", 200},
				{"GET", "/v2/a/b/tags/list", "bad", 401},
				{"POST", "/v2/a/b/blobs/uploads/", "", 401},
				{"DELETE", "/v2/a/b/manifests/v1", "", 401},
				{"POST", "/v2/a/b/blobs/uploads/", "good", 202},
				{"GET", "/mixins/atom.xml", "", 200},
				{"PUT", "/mixins/atom.xml", "", 401},
			},
		},
		{
			name:     "read-only",
			readOnly: true,
			reqs: []req{
				{"GET", "/v2/", "good", 200},
				{"POST", "/v2/a/b/blobs/uploads/", "good", 405},
				{"PUT", "/v2/a/b/manifests/v1", "good", 405},
				{"PATCH", "/v2/a/b/blobs/uploads/x", "good", 405},
				{"DELETE", "/v2/a/b/manifests/v1", "good", 405},
				{"POST", "/mixins/atom.xml", "good", 405},
				{"GET", "/mixins/atom.xml", "good", 200},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &syncBuffer{}
			reg := authtest.NewTLSRegistry(t, authtest.Options{
				AnonymousRead: tt.anonymousRead,
				ReadOnly:      tt.readOnly,
				Extra:         map[string]http.Handler{"/mixins/": mixins},
				Log:           logs,
			})
			hc := httpsClient(t, reg.CAFile)
			for _, r := range tt.reqs {
				hr, err := http.NewRequest(r.method, "https://"+reg.Host+r.path, nil)
				if err != nil {
					t.Fatal(err)
				}
				switch r.creds {
				case "good":
					hr.SetBasicAuth(reg.User, reg.Password)
				case "bad":
					hr.SetBasicAuth(reg.User, "wrong-"+reg.Password)
				}
				resp, err := hc.Do(hr)
				if err != nil {
					t.Fatalf("%s %s: %v", r.method, r.path, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != r.want {
					t.Errorf("%s %s (creds %q): status %d, want %d: %s", r.method, r.path, r.creds, resp.StatusCode, r.want, body)
				}
				if resp.StatusCode == 401 {
					if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Basic realm=") {
						t.Errorf("%s %s: WWW-Authenticate %q, want a Basic challenge", r.method, r.path, got)
					}
				}
				if resp.StatusCode == 405 && !strings.Contains(string(body), `"UNSUPPORTED"`) {
					t.Errorf("%s %s: 405 body %s lacks a distribution error", r.method, r.path, body)
				}
			}
			if strings.Contains(logs.String(), reg.Password) {
				t.Fatal("the registry logged the password")
			}
		})
	}
}

func TestReadOnlyRefusesPush(t *testing.T) {
	ctx := context.Background()
	reg := authtest.NewTLSRegistry(t, authtest.Options{ReadOnly: true})
	dir := t.TempDir()
	c, err := client.New(client.Options{CAFile: reg.CAFile,
		RegistryConfig: authtest.WriteDockerConfig(t, dir, reg.Host, reg.User, reg.Password), MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	repo, err := c.Repository(reg.Host + "/a/b")
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.New()
	desc, err := oras.PackManifest(ctx, mem, oras.PackManifestVersion1_1, "application/vnd.test", oras.PackManifestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Tag(ctx, desc, "v1"); err != nil {
		t.Fatal(err)
	}
	_, err = oras.Copy(ctx, mem, "v1", repo, "v1", oras.DefaultCopyOptions)
	if err == nil {
		t.Fatal("push to a read-only registry succeeded")
	}
	if !strings.Contains(err.Error(), "405") && !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("push error %q does not say the registry is read-only", err)
	}
}

func TestServerURL(t *testing.T) {
	reg := authtest.NewTLSRegistry(t, authtest.Options{})
	if got := reg.Server.URL(); got != "https://"+reg.Host {
		t.Fatalf("URL() = %q", got)
	}
}
