package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/authtest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
)

// runStdin runs ferry in env with stdin, as clitest.Env.Run does.
func runStdin(t *testing.T, env *clitest.Env, stdin string, args ...string) clitest.Result {
	t.Helper()
	cmd := exec.Command(clitest.Binary(t), args...)
	cmd.Dir = env.Dir
	cmd.Env = append(os.Environ(), env.Vars...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := clitest.Result{Args: args, Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// pushImage pushes a one-layer image to HOST/REPO:v1 with credentials.
func pushImage(t *testing.T, s *served, caFile, repoPath string) string {
	t.Helper()
	ctx := context.Background()
	c, err := client.New(client.Options{CAFile: caFile,
		RegistryConfig: authtest.WriteDockerConfig(t, t.TempDir(), s.Host, s.User, s.Password)})
	if err != nil {
		t.Fatal(err)
	}
	repo, err := c.Repository(s.Host + "/" + repoPath)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := fixture.PushImage(ctx, repo, repoPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, "v1"); err != nil {
		t.Fatal(err)
	}
	return s.Host + "/" + repoPath + ":v1"
}

// authEntry returns the "auths" entry for host in the docker config at path.
func authEntry(t *testing.T, path, host string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	var cfg dockerConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cfg.Auths[host]["auth"]
}

// TestLoginLogout logs in to `ferry serve --htpasswd` over TLS, uses the
// stored credentials, and logs out, through the real binary, both with the
// default $DOCKER_CONFIG/config.json and with --registry-config.
func TestLoginLogout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		viaFlag    bool
		credsStore bool // the config names a credential store for every host
	}{
		{name: "DOCKER_CONFIG"},
		{name: "--registry-config", viaFlag: true},
		{name: "credsStore helper", viaFlag: true, credsStore: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var tr transcript
			ca := authtest.NewCA(t)
			s := startServe(t, ca, true)
			root := pushImage(t, s, ca.File, "login/app")
			env := clitest.New(t)
			cfg := filepath.Join(env.Dir, ".docker", "config.json")
			global := []string{"--ca-file", ca.File, "--log-level", "debug"}
			helperDir := t.TempDir()
			switch {
			case tt.credsStore:
				cfg = authtest.CredHelper(t, helperDir, s.Host, "someone", "stale-secret", true)
				env.Vars = append(env.Vars, authtest.PathEnv(helperDir))
				global = append(global, "--registry-config", cfg)
			case tt.viaFlag:
				cfg = filepath.Join(t.TempDir(), "sub", "creds.json")
				global = append(global, "--registry-config", cfg)
			}
			// stored reports whether credentials for the host are stored.
			stored := func() bool {
				if !tt.credsStore {
					return authEntry(t, cfg, s.Host) != ""
				}
				_, err := os.Stat(filepath.Join(helperDir, "helper-store.json"))
				return err == nil && !strings.Contains(string(fileBytesOrEmpty(filepath.Join(helperDir, "helper-store.json"))), "stale-secret")
			}
			run := func(stdin string, args ...string) clitest.Result {
				t.Helper()
				return tr.result(runStdin(t, env, stdin, append(args, global...)...))
			}

			r := run("wrong-"+s.Password+"\n", "login", s.Host, "-u", s.User, "--password-stdin")
			wantUnauthorized(t, r, s.Host)
			if stored() {
				t.Fatal("a rejected login was stored")
			}
			wantUnauthorized(t, run("", "lock", root), s.Host)

			if r := run(s.Password+"\n", "login", s.Host, "-u", s.User, "--password-stdin"); r.Code != 0 {
				t.Fatalf("login: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			if !stored() {
				t.Fatalf("login stored nothing (config %s)", cfg)
			}
			if r := run("", "lock", root); r.Code != 0 {
				t.Fatalf("lock after login: exit %d\n%s", r.Code, r.Stderr)
			}

			if r := run("", "logout", s.Host); r.Code != 0 {
				t.Fatalf("logout: exit %d\n%s", r.Code, r.Stderr)
			}
			if stored() {
				t.Fatal("logout left the credentials")
			}
			if tt.credsStore {
				log := string(fileBytesOrEmpty(authtest.HelperLog(helperDir)))
				for _, want := range []string{"store", "get " + s.Host, "erase " + s.Host} {
					if !strings.Contains(log, want) {
						t.Errorf("credential helper log lacks %q: %q", want, log)
					}
				}
			}
			wantUnauthorized(t, run("", "lock", root, "--update"), s.Host)

			// Bad usage: exit 2, never echoing a password.
			for _, args := range [][]string{
				{"login", s.User + ":" + s.Password + "@" + s.Host, "-u", s.User, "--password-stdin"},
				{"login", s.Host, "-u", s.User},
				{"login", s.Host, "--password-stdin"},
				{"login", "ftp://" + s.Host, "-u", s.User, "--password-stdin"},
				{"logout", s.User + ":" + s.Password + "@" + s.Host},
			} {
				if r := run(s.Password+"\n", args...); r.Code != 2 {
					t.Errorf("ferry %s: exit %d, want 2\n%s", strings.Join(args, " "), r.Code, r.Stderr)
				}
			}
			// Like docker, an https:// URL of the registry names its host.
			if r := run(s.Password+"\n", "login", "https://"+s.Host+"/v2/", "-u", s.User, "--password-stdin"); r.Code != 0 {
				t.Errorf("login https://%s/v2/: exit %d\n%s", s.Host, r.Code, r.Stderr)
			}
			if r := run("\n", "login", s.Host, "-u", s.User, "--password-stdin"); r.Code != 2 || !strings.Contains(r.Stderr, "empty password") {
				t.Errorf("empty password: exit %d\n%s", r.Code, r.Stderr)
			}
			tr.add("registry", s.stderr.String())
			tr.addTree(t, env.Dir)
			// The config file holds the credentials by design; nothing
			// else may.
			tr.parts = withoutConfig(tr.parts, cfg)
			tr.check(t, append(basicSecrets(s.User, s.Password), "wrong-"+s.Password, "stale-secret")...)
		})
	}
}

// withoutConfig drops the docker config file from a transcript.
func withoutConfig(parts []string, cfg string) []string {
	var out []string
	for _, p := range parts {
		if !strings.HasPrefix(p, cfg+":\n") {
			out = append(out, p)
		}
	}
	return out
}

func fileBytesOrEmpty(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}
