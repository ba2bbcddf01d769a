// Package clitest runs the real ferry binary in end-to-end tests: it builds
// cmd/ferry once per test process and runs it in a working directory with a
// private docker config, capturing stdout, stderr and the exit code.
package clitest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary builds cmd/ferry once and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ferry-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "ferry")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/ferryhq/ferry/cmd/ferry")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = &buildError{out: string(out), err: err}
		}
	})
	if buildErr != nil {
		t.Fatalf("building ferry: %v", buildErr)
	}
	return binPath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// Env is a working directory and environment to run ferry in.
type Env struct {
	t *testing.T
	// Dir is the working directory.
	Dir string
	// Vars are extra environment variables (KEY=VALUE).
	Vars []string
}

// New returns an Env with a fresh working directory and an empty docker
// config, so no credentials from the machine leak into a test.
func New(t *testing.T) *Env {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, ".docker")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	// The end-to-end fixtures (internal/fixture's catalog) were written
	// for the highest version in range; Porter's own strategies, exact
	// by default, are pinned by resolve's and porter's tests and by tests
	// that set FERRY_VERSION_STRATEGY themselves.
	return &Env{t: t, Dir: dir, Vars: []string{"DOCKER_CONFIG=" + cfg, "HOME=" + dir, "FERRY_VERSION_STRATEGY=highest"}}
}

// Result is one run of ferry.
type Result struct {
	Args   []string
	Stdout string
	Stderr string
	Code   int
}

// Run runs ferry with args in the Env's directory.
func (e *Env) Run(args ...string) Result {
	e.t.Helper()
	cmd := exec.Command(Binary(e.t), args...)
	cmd.Dir = e.Dir
	cmd.Env = append(os.Environ(), e.Vars...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := Result{Args: args, Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("running ferry %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// MustRun runs ferry and fails the test unless it exits 0.
func (e *Env) MustRun(args ...string) Result {
	e.t.Helper()
	r := e.Run(args...)
	if r.Code != 0 {
		e.t.Fatalf("ferry %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
	}
	return r
}

// Expect runs ferry and fails the test unless it exits with code and its
// combined output contains every want.
func (e *Env) Expect(code int, args []string, want ...string) Result {
	e.t.Helper()
	r := e.Run(args...)
	if r.Code != code {
		e.t.Fatalf("ferry %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.Code, code, r.Stdout, r.Stderr)
	}
	all := r.Stdout + r.Stderr
	for _, w := range want {
		if !strings.Contains(all, w) {
			e.t.Fatalf("ferry %s: output lacks %q\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), w, r.Stdout, r.Stderr)
		}
	}
	return r
}

// WriteFile writes a file relative to the Env's directory.
func (e *Env) WriteFile(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.Dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// ReadFile reads a file relative to the Env's directory.
func (e *Env) ReadFile(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.Dir, name))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// Path returns an absolute path inside the Env's directory.
func (e *Env) Path(name string) string { return filepath.Join(e.Dir, name) }

// Main runs a test binary's tests and then removes the ferry binary
// Binary built, so no build is left behind in the temporary directory.
// Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
