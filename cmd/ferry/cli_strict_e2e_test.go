package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/ferryhq/ferry/internal/authtest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/serve"
)

// strictCase is one run of ferry and what it must give.
type strictCase struct {
	name string
	// files are written into the working directory first; setup, when
	// set, is a ferry run (exit 0) made before the registry's request log
	// is cleared.
	files map[string]string
	setup []string
	args  []string
	code  int
	want  []string
	// notWant must appear nowhere in the output.
	notWant []string
	// network is set when the run may reach the registry; otherwise no
	// request may reach it.
	network bool
}

// TestCLIStrictBadInput: every command rejects what it does not take, and
// every bad flag or file, with exit 2, a message in the user's terms and
// no request to the registry; messages name the user's references.
func TestCLIStrictBadInput(t *testing.T) {
	t.Parallel()
	src, cat := e2eSeed(t)
	h := src.Host
	yaml := func(body string) map[string]string {
		return map[string]string{"ferry.yaml": "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n" + body}
	}
	project := yaml(fmt.Sprintf("packages:\n  - ref: %s\n", cat.Diamond))
	tests := []strictCase{
		{name: "verify takes no arguments", args: []string{"verify", "other.lock"},
			code: 2, want: []string{"ferry verify takes no arguments", `"other.lock"`, "pass --lock other.lock", "usage: ferry verify"}},
		{name: "install takes no arguments", args: []string{"install", "/nonexistent", "--dest", "out"},
			code: 2, want: []string{"ferry install takes no arguments", `"/nonexistent"`, "usage: ferry install"}},
		{name: "serve takes no arguments", args: []string{"serve", "extra", "--root", "reg"},
			code: 2, want: []string{"ferry serve takes no arguments", "usage: ferry serve"}},
		{name: "version takes no arguments", args: []string{"version", "extra"},
			code: 2, want: []string{"ferry version takes no arguments"}},
		{name: "why takes one reference", args: []string{"why"},
			code: 2, want: []string{"accepts 1 arg(s), received 0", "usage: ferry why"}},
		{name: "diff takes two locks", args: []string{"diff", "a.lock"},
			code: 2, want: []string{"accepts 2 arg(s), received 1", "usage: ferry diff"}},
		{name: "login takes one host", args: []string{"login"},
			code: 2, want: []string{"accepts 1 arg(s), received 0", "usage: ferry login"}},
		{name: "logout takes one host", args: []string{"logout", h, "other"},
			code: 2, want: []string{"accepts 1 arg(s), received 2", "usage: ferry logout"}},
		{name: "--update of a name the lock lacks", files: project, setup: []string{"lock"},
			args: []string{"lock", "--update", "nosuchpkg"},
			code: 2, want: []string{"--update nosuchpkg: no such package or mixin in ferry.lock", h + "/fixtures/diamond/db", h + "/fixtures/diamond/app"}},
		{name: "--update=NAME of a name the lock lacks", files: project, setup: []string{"lock"},
			args: []string{"lock", "--update=app,nosuch"},
			code: 2, want: []string{"--update nosuch: no such package"}, notWant: []string{"--update app"}},
		{name: "--update with no lock", files: project, args: []string{"lock", "--update=db"},
			code: 2, want: []string{"--update db: there is no lock ferry.lock yet"}},
		{name: "mirror without a destination", args: []string{"mirror", cat.Diamond},
			code: 2, want: []string{"mirror needs a destination: --to HOST[/PREFIX]"}},
		{name: "mirror SRC DST", args: []string{"mirror", cat.Diamond, h + "/dst"},
			code: 2, want: []string{"mirror needs a destination", "run: ferry mirror " + cat.Diamond + " --to " + h + "/dst"}},
		{name: "mirror SRC DST with a tag", args: []string{"mirror", cat.Diamond, h + "/dst/img2:v1"},
			code: 2, want: []string{"if " + h + "/dst/img2:v1 is where to copy to, run: ferry mirror " + cat.Diamond + " --to " + h + "/dst"}},
		{name: "mirror SRC FILE.tar", args: []string{"mirror", cat.Diamond, "out.tar"},
			code: 2, want: []string{"--to-archive out.tar"}},
		{name: "mirror of a lock without a destination", files: project, setup: []string{"lock"},
			args: []string{"mirror", "--lock", "ferry.lock"},
			code: 2, want: []string{"mirror needs a destination"}},
		{name: "--to with a tag", args: []string{"mirror", cat.Diamond, "--to", h + "/repo:tag"},
			code: 2, want: []string{"not a reference with a tag or digest", `":tag"`}, notWant: []string{"/x", "repo:tag/"}},
		{name: "--to with a bad prefix", args: []string{"mirror", cat.Diamond, "--to", h + "/Bad_Prefix"},
			code: 2, want: []string{`"Bad_Prefix" is not a valid repository prefix`}, notWant: []string{"/x"}},
		{name: "invalid --version", args: []string{"resolve", h + "/fixtures/diamond/db", "--version", ">>1"},
			code: 2, want: []string{"invalid version constraint", `">>1"`}},
		{name: "unknown ferry.yaml key", files: yaml("packages:\n  - reff: " + cat.Diamond + "\n"), args: []string{"resolve"},
			code: 2, want: []string{"ferry.yaml: line 4: unknown key \"reff\" in an entry of packages (known keys: path, ref, version)"}, notWant: []string{"mirrorset.", "type "}},
		{name: "ferry.yaml value of the wrong shape", files: yaml("packages: " + cat.Diamond + "\n"), args: []string{"lock"},
			code: 2, want: []string{"ferry.yaml: line 3: got a string", "for packages, want a list"}, notWant: []string{"mirrorset.", "!!str"}},
		{name: "misspelt key of a use entry", files: yaml(fmt.Sprintf("packages:\n  - ref: %s\nuse:\n  db: {ref: %s/fixtures/diamond/db:v1.0.0, forse: true}\n", cat.Diamond, h)),
			args: []string{"resolve"},
			code: 2, want: []string{`ferry.yaml: line 6: unknown key "forse" in an entry of use (known keys: force, ref)`}},
		{name: "missing tag", args: []string{"resolve", h + "/fixtures/diamond/app:v9.9.9"}, network: true,
			code: 1, want: []string{h + "/fixtures/diamond/app:v9.9.9: tag v9.9.9 not found (tags: ", "v1.0.0"}},
		{name: "--plain-http is a switch", args: []string{"resolve", "--plain-http", cat.Diamond}, network: true,
			code: 0, want: []string{h + "/fixtures/diamond/db"}},
		{name: "--plain-http=HOST", args: []string{"resolve", "--plain-http=" + h, cat.Diamond}, network: true,
			code: 0, want: []string{h + "/fixtures/diamond/db"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runStrictCase(t, e2eEnv(t), src, tt)
		})
	}
}

// runStrictCase runs tt in env and checks its exit code, its messages
// and, unless tt.network, that reg received no request.
func runStrictCase(t *testing.T, env *clitest.Env, reg *registrytest.Registry, tt strictCase) clitest.Result {
	t.Helper()
	for name, content := range tt.files {
		env.WriteFile(name, content)
	}
	if tt.setup != nil {
		env.MustRun(tt.setup...)
	}
	reg.Reset()
	r := env.Expect(tt.code, tt.args, tt.want...)
	all := r.Stdout + r.Stderr
	for _, nw := range tt.notWant {
		if strings.Contains(all, nw) {
			t.Errorf("ferry %s: output holds %q:\n%s", strings.Join(tt.args, " "), nw, all)
		}
	}
	if tt.code != 0 && strings.Count(all, "not found") > 1 {
		t.Errorf("ferry %s: says \"not found\" %d times:\n%s", strings.Join(tt.args, " "), strings.Count(all, "not found"), all)
	}
	if !tt.network {
		if reqs := reg.Requests(); len(reqs) > 0 {
			t.Errorf("ferry %s: %d requests reached the registry before the error, first %s %s", strings.Join(tt.args, " "), len(reqs), reqs[0].Method, reqs[0].Path)
		}
	}
	return r
}

// TestCLIStrictLockGuard: a command given ROOTs never overwrites a lock
// made from other inputs; it writes where there is none, over one made
// from the same inputs, or where --lock says.
func TestCLIStrictLockGuard(t *testing.T) {
	t.Parallel()
	src, cat := e2eSeed(t)
	mirror := registrytest.New(t)
	project := map[string]string{"ferry.yaml": fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: %s\n", cat.Diamond)}
	refuse := []string{"ferry.lock was made from ferry.yaml, not from " + cat.Prerelease, "refusing to overwrite it", "pass --lock FILE"}
	tests := []struct {
		strictCase
		// lockChanged: ferry.lock may change; created: files the run writes.
		lockChanged bool
		created     []string
	}{
		{strictCase: strictCase{name: "lock ROOT", args: []string{"lock", cat.Prerelease}, code: 2, want: refuse}},
		{strictCase: strictCase{name: "mirror ROOT --to", args: []string{"mirror", cat.Prerelease, "--to", mirror.Host + "/adhoc"}, code: 2, want: refuse}},
		{strictCase: strictCase{name: "mirror ROOT --to-archive", args: []string{"mirror", cat.Prerelease, "--to-archive", "adhoc.tar"}, code: 2, want: refuse}},
		{strictCase: strictCase{name: "lock ROOT --lock FILE", args: []string{"lock", cat.Prerelease, "--lock", "adhoc.lock"}, network: true},
			created: []string{"adhoc.lock"}},
		{strictCase: strictCase{name: "mirror ROOT --lock FILE --to", args: []string{"mirror", cat.Prerelease, "--lock", "adhoc.lock", "--to", mirror.Host + "/adhoc"}, network: true},
			created: []string{"adhoc.lock"}},
		{strictCase: strictCase{name: "mirror ROOT --lock FILE --to-archive", args: []string{"mirror", cat.Prerelease, "--lock", "adhoc.lock", "--to-archive", "adhoc.tar"}, network: true},
			created: []string{"adhoc.lock", "adhoc.tar"}},
		{strictCase: strictCase{name: "the same input file as ROOT", args: []string{"lock", "ferry.yaml"}, network: true}},
		{strictCase: strictCase{name: "the same ROOT again", setup: []string{"lock", cat.Prerelease, "--lock", "ferry.lock"},
			args: []string{"mirror", cat.Prerelease, "--to", mirror.Host + "/adhoc"}, network: true}, lockChanged: true},
		{strictCase: strictCase{name: "--lock names the lock to replace", args: []string{"lock", cat.Prerelease, "--lock", "ferry.lock"}, network: true}, lockChanged: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := e2eEnv(t)
			for name, content := range project {
				env.WriteFile(name, content)
			}
			env.MustRun("lock")
			if n := len(e2eReadLock(t, env, "ferry.lock").Packages); n < 2 {
				t.Fatalf("the project lock holds %d packages", n)
			}
			before := env.ReadFile("ferry.lock")
			mirror.Reset()
			r := runStrictCase(t, env, src, tt.strictCase)
			if !tt.network {
				if reqs := mirror.Requests(); len(reqs) > 0 {
					t.Errorf("%d requests reached the mirror, first %s %s", len(reqs), reqs[0].Method, reqs[0].Path)
				}
			}
			after := env.ReadFile("ferry.lock")
			if !tt.lockChanged && tt.setup == nil && after != before {
				t.Errorf("ferry %s changed ferry.lock:\n%s\n%s", strings.Join(tt.args, " "), r.Stderr, after)
			}
			if tt.lockChanged && !strings.Contains(after, "prerelease") {
				t.Errorf("ferry %s: ferry.lock is not the lock of %s:\n%s", strings.Join(tt.args, " "), cat.Prerelease, after)
			}
			for _, f := range tt.created {
				if _, err := os.Stat(env.Path(f)); err != nil {
					t.Errorf("ferry %s wrote no %s: %v", strings.Join(tt.args, " "), f, err)
				}
			}
			if tt.code != 0 {
				e2eAbsent(t, env.Path("adhoc.tar"))
				e2eAbsent(t, env.Path("adhoc.lock"))
			}
		})
	}
}

// strictRun runs ferry in env with stdin.
func strictRun(t *testing.T, env *clitest.Env, stdin string, args ...string) clitest.Result {
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

// storedAuth returns the "auths" entry for host in env's docker config.
func storedAuth(t *testing.T, env *clitest.Env, host string) string {
	t.Helper()
	b, err := os.ReadFile(env.Path(filepath.Join(".docker", "config.json")))
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Auths map[string]map[string]string `json:"auths"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.Auths[host]["auth"]
}

// TestLoginConventions: login and logout behave as docker's and oras's:
// -u/-p, --password-stdin, http:// for loopback, a message when there was
// nothing to remove, and bad combinations refused before any request.
func TestLoginConventions(t *testing.T) {
	t.Parallel()
	user, password := "mirror-user", authtest.Secret(t)
	reg := registrytest.New(t, func(o *serve.Options) {
		o.Htpasswd = authtest.WriteHtpasswd(t, t.TempDir(), map[string]string{user: password})
	})
	h := reg.Host
	tests := []struct {
		name    string
		stdin   string
		args    []string
		code    int
		want    []string
		stored  bool // credentials for h are stored afterwards
		network bool
	}{
		{name: "-u -p over http:// on loopback", args: []string{"login", "http://" + h, "-u", user, "-p", password},
			want: []string{"using -p on the command line is insecure", "login succeeded"}, stored: true, network: true},
		{name: "--password-stdin", stdin: password + "\n", args: []string{"login", h, "-u", user, "--password-stdin"},
			want: []string{"login succeeded"}, stored: true, network: true},
		{name: "wrong password", stdin: "wrong\n", args: []string{"login", h, "-u", user, "--password-stdin"},
			code: 1, network: true},
		{name: "http:// to a host that is not loopback", args: []string{"login", "http://registry.example.com", "-u", user, "-p", "x"},
			code: 2, want: []string{"http:// only for a loopback host", "--plain-http=HOST"}},
		{name: "-p and --password-stdin", stdin: "x\n", args: []string{"login", h, "-u", user, "-p", "x", "--password-stdin"},
			code: 2, want: []string{"give -p or --password-stdin, not both"}},
		{name: "no password and no terminal", args: []string{"login", h, "-u", user},
			code: 2, want: []string{"standard input is not a terminal", "--password-stdin"}},
		{name: "no user and no terminal", stdin: password + "\n", args: []string{"login", h, "--password-stdin"},
			code: 2, want: []string{"-u USER is required"}},
		{name: "logout with nothing stored", args: []string{"logout", h},
			want: []string{"not logged in to " + h}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := clitest.New(t)
			reg.Reset()
			r := strictRun(t, env, tt.stdin, tt.args...)
			if r.Code != tt.code {
				t.Fatalf("ferry %s: exit %d, want %d\n%s", strings.Join(tt.args, " "), r.Code, tt.code, r.Stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Stdout+r.Stderr, w) {
					t.Errorf("ferry %s: output lacks %q:\n%s%s", strings.Join(tt.args, " "), w, r.Stdout, r.Stderr)
				}
			}
			if strings.Contains(r.Stdout+r.Stderr, password) {
				t.Errorf("ferry %s printed the password", strings.Join(tt.args, " "))
			}
			if got := storedAuth(t, env, h) != ""; got != tt.stored {
				t.Errorf("ferry %s: credentials stored %v, want %v", strings.Join(tt.args, " "), got, tt.stored)
			}
			if reqs := reg.Requests(); !tt.network && len(reqs) > 0 {
				t.Errorf("ferry %s: %d requests reached the registry", strings.Join(tt.args, " "), len(reqs))
			}
			if tt.stored {
				// logout removes them, and then says there is nothing.
				if r := strictRun(t, env, "", "logout", h); r.Code != 0 || !strings.Contains(r.Stdout+r.Stderr, "removed the credentials for "+h) {
					t.Errorf("logout: exit %d\n%s", r.Code, r.Stderr)
				}
				if storedAuth(t, env, h) != "" {
					t.Error("logout left the credentials")
				}
				if r := strictRun(t, env, "", "logout", h); r.Code != 0 || !strings.Contains(r.Stdout+r.Stderr, "not logged in to "+h) {
					t.Errorf("second logout: exit %d\n%s", r.Code, r.Stderr)
				}
			}
		})
	}
}

// TestLoginPrompt: on a terminal, login prompts for the user name and the
// password, and the password is not echoed.
func TestLoginPrompt(t *testing.T) {
	t.Parallel()
	user, password := "prompt-user", authtest.Secret(t)
	reg := registrytest.New(t, func(o *serve.Options) {
		o.Htpasswd = authtest.WriteHtpasswd(t, t.TempDir(), map[string]string{user: password})
	})
	env := clitest.New(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(clitest.Binary(t), "login", reg.Host)
	cmd.Dir = env.Dir
	cmd.Env = append(os.Environ(), env.Vars...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var seen bytes.Buffer
	// answer waits for prompt on the terminal, then types line.
	answer := func(prompt, line string) {
		t.Helper()
		buf := make([]byte, 256)
		for !strings.Contains(seen.String(), prompt) {
			_ = ptmx.SetReadDeadline(time.Now().Add(30 * time.Second))
			n, err := ptmx.Read(buf)
			seen.Write(buf[:n])
			if err != nil {
				t.Fatalf("waiting for %q: %v; terminal so far:\n%s", prompt, err, seen.String())
			}
		}
		if prompt == "Password: " {
			waitEchoOff(t, ptmx)
		}
		if _, err := io.WriteString(ptmx, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	answer("Username: ", user)
	answer("Password: ", password)
	rest, _ := io.ReadAll(ptmx) // until the process closes the terminal (EIO)
	seen.Write(rest)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("login: %v\n%s", err, seen.String())
	}
	if !strings.Contains(seen.String(), "login succeeded") {
		t.Errorf("terminal lacks the success line:\n%s", seen.String())
	}
	if strings.Contains(seen.String(), password) {
		t.Errorf("the password was echoed:\n%s", seen.String())
	}
	if !strings.Contains(seen.String(), user) {
		t.Errorf("the user name was not echoed (it should be, as docker does):\n%s", seen.String())
	}
	if storedAuth(t, env, reg.Host) == "" {
		t.Error("no credentials stored")
	}
}
