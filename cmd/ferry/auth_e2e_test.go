package main_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/authtest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
)

// served is a `ferry serve` process started by a test, over TLS with
// htpasswd credentials unless told otherwise.
type served struct {
	Host, User, Password string
	stderr               *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for a process to write while a test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startServe runs `ferry serve` on 127.0.0.1 with a certificate from ca
// (nil: plain HTTP), an htpasswd file for a fresh user (unless extra has
// no-auth), and extra flags, and stops it when the test ends.
func startServe(t *testing.T, ca *authtest.CA, htpasswd bool, extra ...string) *served {
	t.Helper()
	dir := t.TempDir()
	s := &served{User: "mirror-user", Password: authtest.Secret(t), stderr: &syncBuffer{}}
	addrFile := filepath.Join(dir, "addr")
	args := []string{"serve", "--root", filepath.Join(dir, "root"), "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--log-level", "debug"}
	if ca != nil {
		cert, key := ca.Issue(t, authtest.CertOptions{})
		args = append(args, "--tls-cert", cert, "--tls-key", key)
	}
	if htpasswd {
		args = append(args, "--htpasswd", authtest.WriteHtpasswd(t, dir, map[string]string{s.User: s.Password}))
	}
	args = append(args, extra...)
	cmd := exec.Command(clitest.Binary(t), args...)
	cmd.Stdout, cmd.Stderr = s.stderr, s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(addrFile); err == nil && strings.HasSuffix(string(b), "\n") {
			s.Host = strings.TrimSpace(string(b))
			return s
		}
		select {
		case err := <-done:
			t.Fatalf("ferry serve exited: %v\n%s", err, s.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("ferry serve did not start\n%s", s.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// transcript collects every byte ferry wrote in a test, to grep for
// secrets.
type transcript struct {
	mu    sync.Mutex
	parts []string
}

func (tr *transcript) add(what, s string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.parts = append(tr.parts, what+":\n"+s)
}

func (tr *transcript) result(r clitest.Result) clitest.Result {
	// Label by subcommand only: the arguments may hold a test's secrets.
	tr.add("output of ferry "+r.Args[0], r.Stdout+r.Stderr)
	return r
}

// addTree adds every regular file below dir.
func (tr *transcript) addTree(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		tr.add(p, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// check fails the test when any secret appears anywhere in the transcript.
func (tr *transcript) check(t *testing.T, secrets ...string) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.parts) == 0 {
		t.Fatal("empty transcript")
	}
	for _, p := range tr.parts {
		for _, s := range secrets {
			if s != "" && strings.Contains(p, s) {
				t.Errorf("secret %.6s… leaked in %.200s", s, p)
			}
		}
	}
}

// basicSecrets returns the forms a password takes on the wire.
func basicSecrets(user, pass string) []string {
	return []string{pass, base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))}
}

// dockerConfig is a docker config.json.
type dockerConfig struct {
	Auths       map[string]map[string]string `json:"auths,omitempty"`
	CredHelpers map[string]string            `json:"credHelpers,omitempty"`
}

func (c *dockerConfig) auth(host, user, pass string) *dockerConfig {
	if c.Auths == nil {
		c.Auths = map[string]map[string]string{}
	}
	c.Auths[host] = map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))}
	return c
}

func (c *dockerConfig) helper(host string) *dockerConfig {
	if c.CredHelpers == nil {
		c.CredHelpers = map[string]string{}
	}
	c.CredHelpers[host] = authtest.HelperName
	return c
}

func (c *dockerConfig) write(t *testing.T, path string) string {
	t.Helper()
	b, err := json.MarshalIndent(c, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// seedSource publishes the fixture catalog and two images sharing every
// blob (HOST/shared/a:v1 and HOST/shared/b:v1) to s with its credentials,
// and returns the roots to lock: the diamond scenario (bundles with images
// and mixins) and the two images.
func seedSource(t *testing.T, s *served, caFile string) []string {
	t.Helper()
	ctx := context.Background()
	cfg := authtest.WriteDockerConfig(t, t.TempDir(), s.Host, s.User, s.Password)
	c, err := client.New(client.Options{CAFile: caFile, RegistryConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := fixture.Seed(ctx, c, s.Host)
	if err != nil {
		t.Fatalf("seeding %s: %v", s.Host, err)
	}
	roots := []string{cat.Diamond}
	for _, name := range []string{"a", "b"} {
		repo, err := c.Repository(s.Host + "/shared/" + name)
		if err != nil {
			t.Fatal(err)
		}
		desc, err := fixture.PushImage(ctx, repo, "shared base image", 64<<10, 4<<10)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.Tag(ctx, desc, "v1"); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, s.Host+"/shared/"+name+":v1")
	}
	return roots
}

// mirrorReport is the part of `ferry mirror -o json` the tests read.
type mirrorReport struct {
	Packages []struct {
		Source  string `json:"source"`
		Mounted int64  `json:"mounted"`
	} `json:"packages"`
}

func wantUnauthorized(t *testing.T, r clitest.Result, host string) {
	t.Helper()
	out := r.Stdout + r.Stderr
	if r.Code != 1 || !strings.Contains(out, "unauthorized") || !strings.Contains(out, host) {
		t.Fatalf("ferry %s: exit %d, want 1 with %q and %s\n%s", strings.Join(r.Args, " "), r.Code, "unauthorized", host, out)
	}
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	t.Logf("ferry %s: %s", r.Args[0], lines[len(lines)-1])
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantAbsent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("%s exists after a failed run (%v)", path, err)
	}
}

// TestAuthPipeline runs lock, mirror, verify and install through the real
// binary against registries that demand credentials: `ferry serve
// --htpasswd` over TLS with a test CA as the source, and as the mirror
// either a second such server (credentials from a credential helper) or a
// token-auth registry (credentials from config.json "auths"). Then each
// step is run again without credentials and must fail clearly, writing
// nothing. Every byte ferry wrote is grepped for the secrets.
func TestAuthPipeline(t *testing.T) {
	t.Parallel()
	type mirrorReg struct {
		host       string
		configured func(c *dockerConfig) // adds the mirror's credentials
		secrets    func() []string       // evaluated at the end (tokens)
		logs       func() string         // what a `ferry serve` mirror wrote
		helper     bool                  // credentials come from the helper
	}
	tests := []struct {
		name         string
		sourceHelper bool // the source's credentials come from the helper
		viaFlag      bool // --registry-config instead of $DOCKER_CONFIG
		startMirror  func(t *testing.T, ca *authtest.CA, helperDir string) mirrorReg
	}{
		{
			name: "htpasswd TLS mirror, credential helper",
			startMirror: func(t *testing.T, ca *authtest.CA, helperDir string) mirrorReg {
				m := startServe(t, ca, true)
				authtest.CredHelper(t, helperDir, m.Host, m.User, m.Password, false)
				return mirrorReg{
					host:       m.Host,
					configured: func(c *dockerConfig) { c.helper(m.Host) },
					secrets:    func() []string { return basicSecrets(m.User, m.Password) },
					logs:       m.stderr.String,
					helper:     true,
				}
			},
		},
		{
			name:         "token mirror, source through the credential helper",
			sourceHelper: true,
			viaFlag:      true,
			startMirror: func(t *testing.T, ca *authtest.CA, helperDir string) mirrorReg {
				tok := authtest.NewTokenRegistry(t)
				return mirrorReg{
					host:       tok.Host,
					configured: func(c *dockerConfig) { c.auth(tok.Host, tok.User, tok.Password) },
					secrets: func() []string {
						if len(tok.Tokens()) == 0 {
							t.Error("the token server issued no token")
						}
						var mountScope bool
						for _, s := range tok.Scopes() {
							mountScope = mountScope || (strings.HasPrefix(s, "repository:shared/") && strings.HasSuffix(s, ":pull"))
						}
						if !mountScope {
							t.Errorf("no pull scope on a mount source was requested; scopes %v", tok.Scopes())
						}
						return append(basicSecrets(tok.User, tok.Password), tok.Tokens()...)
					},
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var tr transcript
			ca := authtest.NewCA(t)
			src := startServe(t, ca, true)
			roots := seedSource(t, src, ca.File)
			helperDir := t.TempDir()
			mir := tt.startMirror(t, ca, helperDir)
			if tt.sourceHelper {
				authtest.CredHelper(t, helperDir, src.Host, src.User, src.Password, false)
			}

			env := clitest.New(t)
			// The helper, where a case has one, is found on ferry's PATH.
			env.Vars = append(env.Vars, authtest.PathEnv(helperDir))
			cfg := &dockerConfig{}
			if tt.sourceHelper {
				cfg.helper(src.Host)
			} else {
				cfg.auth(src.Host, src.User, src.Password)
			}
			mir.configured(cfg)
			global := []string{"--ca-file", ca.File, "--log-level", "debug"}
			if tt.viaFlag {
				global = append(global, "--registry-config", cfg.write(t, filepath.Join(t.TempDir(), "creds.json")))
			} else {
				cfg.write(t, filepath.Join(env.Dir, ".docker", "config.json"))
			}
			run := func(args ...string) clitest.Result {
				t.Helper()
				return tr.result(env.MustRun(append(args, global...)...))
			}

			r := run(append([]string{"lock"}, roots...)...)
			if !strings.Contains(r.Stderr, "registry request") {
				t.Fatalf("--log-level debug logged no registry requests:\n%s", r.Stderr)
			}
			// No prefix: the partial references of the closure must keep
			// resolving inside the mirror.
			to := mir.host
			r = run("mirror", "--lock", "ferry.lock", "--to", to, "-o", "json")
			var rep mirrorReport
			if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
				t.Fatalf("mirror -o json: %v\n%s", err, r.Stdout)
			}
			var mounted int64
			for _, p := range rep.Packages {
				mounted += p.Mounted
			}
			if mounted == 0 {
				t.Fatalf("no blob was mounted across repositories: %s", r.Stdout)
			}
			run("verify", "--deep")
			run("install", "--dest", "install")
			if _, err := os.Stat(env.Path("install/plan.json")); err != nil {
				t.Fatal(err)
			}
			log, _ := os.ReadFile(authtest.HelperLog(helperDir))
			helped := src.Host
			if mir.helper {
				helped = mir.host
			}
			if !strings.Contains(string(log), "get "+helped) {
				t.Fatalf("the credential helper was not asked for %s: %q", helped, log)
			}
			// The archive, too, must carry no secret.
			run("mirror", "--lock", "ferry.lock", "--to-archive", "closure.tar")
			tr.add("closure.tar", string(fileBytes(t, env.Path("closure.tar"))))
			goodLock := fileBytes(t, env.Path("ferry.lock"))
			tr.add("ferry.lock", string(goodLock))
			tr.addTree(t, env.Path("install"))

			// Without credentials: every step fails, names the host, writes nothing.
			bare := clitest.New(t)
			wrongCfg := (&dockerConfig{}).auth(src.Host, src.User, "wrong-"+src.Password).write(t, filepath.Join(t.TempDir(), "config.json"))
			srcOnly := (&dockerConfig{}).auth(src.Host, src.User, src.Password).write(t, filepath.Join(t.TempDir(), "config.json"))
			fail := func(host string, args ...string) {
				t.Helper()
				wantUnauthorized(t, tr.result(bare.Run(append(args, "--ca-file", ca.File, "--log-level", "debug")...)), host)
			}
			lockArgs := append([]string{"lock"}, roots...)
			fail(src.Host, lockArgs...)
			wantAbsent(t, bare.Path("ferry.lock"))
			fail(src.Host, append(lockArgs, "--registry-config", wrongCfg)...)
			wantAbsent(t, bare.Path("ferry.lock"))

			lockPath := bare.WriteFile("ferry.lock", string(goodLock))
			fail(src.Host, append(lockArgs, "--update")...)
			fail(mir.host, "mirror", "--lock", "ferry.lock", "--to", mir.host) // the mirror is asked first: the root is there
			fail(mir.host, "mirror", "--lock", "ferry.lock", "--to", mir.host, "--registry-config", srcOnly)
			if !bytes.Equal(fileBytes(t, lockPath), goodLock) {
				t.Fatal("a failed lock or mirror changed ferry.lock")
			}
			fail(mir.host, "verify", "--deep")
			fail(mir.host, "install", "--dest", "install")
			wantAbsent(t, bare.Path("install"))
			if !bytes.Equal(fileBytes(t, lockPath), goodLock) {
				t.Fatal("a failed verify or install changed ferry.lock")
			}

			tr.add("source registry", src.stderr.String())
			if mir.logs != nil {
				tr.add("mirror registry", mir.logs())
			}
			secrets := append(basicSecrets(src.User, src.Password), "wrong-"+src.Password)
			tr.check(t, append(secrets, mir.secrets()...)...)
		})
	}
}
