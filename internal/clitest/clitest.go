// Package clitest runs the real ferry binary in end-to-end tests, in a
// working directory with a private docker config, capturing stdout, stderr
// and the exit code.
//
// In cmd/ferry's own tests the binary is the test binary itself: Main is
// given ferry's main function, and Binary returns a link named "ferry" to
// the running test executable, which Main recognises by the name it was
// run under and answers by running ferry's main (the pattern of
// rogpeppe/go-internal's testscript.RunMain). Every run still goes
// through a real process: arguments, environment, stdio, signals and exit
// codes. This saves linking a second 100 MB binary before the first test
// can start. Elsewhere (or where links are not available) Binary builds
// cmd/ferry once per test process.
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
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	// ferryMain is ferry's main function when the test binary is
	// cmd/ferry's (see Main).
	ferryMain func()
)

// binaryName is the name Binary gives the ferry executable, and the name
// under which Main runs ferryMain.
const binaryName = "ferry"

// Binary returns the path of a ferry executable, linking the test binary
// or building cmd/ferry the first time it is called.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ferry-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, binaryName)
		if ferryMain != nil && runtime.GOOS != "windows" {
			self, err := os.Executable()
			if err == nil {
				if err = os.Symlink(self, binPath); err == nil {
					return
				}
			}
		}
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
// Binary made, so nothing is left behind in the temporary directory. Call
// it from TestMain. In cmd/ferry's tests, main is ferry's main function:
// run under Binary's name, the test binary is ferry, runs main and exits
// as main does (0 when main returns).
func Main(m *testing.M, main func()) {
	if main != nil && filepath.Base(os.Args[0]) == binaryName {
		main()
		os.Exit(0)
	}
	ferryMain = main
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// Serve starts `ferry serve --root root --addr 127.0.0.1:0` with args,
// waits until it has written its address (--addr-file), and stops it when
// the test ends (an interrupt, then a kill after 10 s). It returns the
// address and a function returning what the server has written to stderr
// so far. A server that exits or does not start within 30 s fails the
// test.
func Serve(t *testing.T, root string, args ...string) (addr string, stderr func() string) {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command(Binary(t), append([]string{"serve", "--root", root, "--addr", "127.0.0.1:0", "--addr-file", addrFile}, args...)...)
	var mu sync.Mutex
	var buf bytes.Buffer
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	})
	stderr = func() string {
		mu.Lock()
		defer mu.Unlock()
		return buf.String()
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.After(30 * time.Second)
	for {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			return strings.TrimSpace(string(b)), stderr
		}
		select {
		case <-done:
			t.Fatalf("ferry serve exited: %s", stderr())
		case <-deadline:
			t.Fatalf("ferry serve did not start: %s", stderr())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// writerFunc is an io.Writer calling itself.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
