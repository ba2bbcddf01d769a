// Package tooltest finds the real external tools ferry's tests run (the
// cosign and helm CLIs), built from their Go modules by scripts/tools.sh
// into bin/tools: it waits for a build scripts/tools.sh is running, or
// runs scripts/tools.sh NAME itself, and checks the tool's version. The
// real tools are used only with FERRY_INTEROP=1 (`make interop`); then a
// build that fails fails the test, nothing is skipped.
package tooltest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	mu     sync.Mutex
	built  = map[string]string{}
	failed = map[string]error{}
)

// InteropEnv is the environment variable that selects the real tools:
// FERRY_INTEROP=1, as `make interop` sets it.
const InteropEnv = "FERRY_INTEROP"

// Interop reports whether the real tools are used (FERRY_INTEROP=1).
func Interop() bool { return os.Getenv(InteropEnv) == "1" }

// Path returns bin/tools/NAME, building it once per test binary if need
// be, after checking that `NAME versionArgs...` prints version. Without
// FERRY_INTEROP=1 it skips the test: the real tools run in `make interop`.
func Path(t testing.TB, name, version string, versionArgs ...string) string {
	t.Helper()
	if !Interop() {
		t.Skipf("the real %s runs only with %s=1: make interop", name, InteropEnv)
	}
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[name]; ok {
		return p
	}
	if err, ok := failed[name]; ok {
		t.Fatalf("tooltest: %v", err)
	}
	p, err := build(name, version, versionArgs)
	if err != nil {
		failed[name] = err
		t.Fatalf("tooltest: %v", err)
	}
	built[name] = p
	return p
}

// build finds bin/tools/NAME at the module root, running scripts/tools.sh
// NAME when it is missing, and checks its version.
func build(name, version string, versionArgs []string) (string, error) {
	rootDir, err := moduleRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(rootDir, "bin", "tools", name)
	waitForBuild(p, filepath.Join(rootDir, "bin", "tools", ".building"))
	if _, err := os.Stat(p); err != nil {
		cmd := exec.Command(filepath.Join(rootDir, "scripts", "tools.sh"), name)
		cmd.Dir = rootDir
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("building %s with scripts/tools.sh: %w\n%s", name, err, out)
		}
	}
	out, err := exec.Command(p, versionArgs...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", p, strings.Join(versionArgs, " "), err, out)
	}
	if !strings.Contains(string(out), version) {
		return "", fmt.Errorf("%s is not %s (remove it and rerun scripts/tools.sh):\n%s", p, version, out)
	}
	return p, nil
}

// buildWait bounds how long a test waits for a tools build another
// process started (cosign v2 and v3 and helm v3 from source: about 9
// minutes each on a loaded 2-core machine, cold).
const buildWait = 60 * time.Minute

// waitForBuild waits, while scripts/tools.sh runs (marker names its pid)
// and tool is not there yet, for either to change: the test then uses the
// tool that build made, or builds it itself if that build failed.
func waitForBuild(tool, marker string) {
	deadline := time.Now().Add(buildWait)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(tool); err == nil {
			return
		}
		b, err := os.ReadFile(marker)
		if err != nil {
			return
		}
		var pid int
		if _, err := fmt.Sscan(string(b), &pid); err != nil || pid <= 0 || syscall.Kill(pid, 0) != nil {
			return // a marker left by a killed build
		}
		time.Sleep(time.Second)
	}
}

// moduleRoot is the directory of ferry's go.mod, above the test's working
// directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(data, []byte("module github.com/ferryhq/ferry\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no ferry go.mod above the working directory")
		}
		dir = parent
	}
}

// Build is Path without a test: bin/tools/NAME, built if need be, checked
// to print version when run with versionArgs.
func Build(name, version string, versionArgs ...string) (string, error) {
	return build(name, version, versionArgs)
}
