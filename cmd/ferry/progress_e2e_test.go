//go:build !windows

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// progressWorld is a closure to mirror for the progress tests: the
// catalog's diamond (several small packages) and one bundle whose
// invocation image has a 4 MiB layer, served slowly enough (slowBlobs)
// that its bar is drawn while it moves.
type progressWorld struct {
	roots []string
	// bigLayer is the 12 hex digits a bar names the large layer by.
	bigLayer string
}

func newProgressWorld(t *testing.T) progressWorld {
	t.Helper()
	ctx := context.Background()
	_, cat := e2eSeed(t)
	slow := registrytest.New(t, registrytest.WithWrap(slowBlobs))
	repoName := slow.Host + "/big/app"
	repo := e2eRepo(t, e2eClient(t), repoName)
	inv, err := fixture.PushImage(ctx, repo, "progress-big", 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	layer := e2eLayer(t, repo, inv)
	bj, err := fixture.Bundle{Name: "big", Version: "1.0.0"}.BundleJSON(repoName, inv, nil)
	if err != nil {
		t.Fatal(err)
	}
	e2ePushRaw(t, repo, "v1.0.0", bj, inv)
	return progressWorld{roots: []string{cat.Diamond, repoName + ":v1.0.0"}, bigLayer: layer.Digest.Encoded()[:12]}
}

// slowBlobs writes the body of a blob GET in pieces of at most 32 KiB,
// 10 ms apart (4 MiB: over a second, several redraws of the bars).
func slowBlobs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/blobs/sha256:") {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&trickle{ResponseWriter: w}, r)
	})
}

type trickle struct{ http.ResponseWriter }

func (t *trickle) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		k := min(len(b), 32<<10)
		m, err := t.ResponseWriter.Write(b[:k])
		n += m
		if err != nil {
			return n, err
		}
		if f, ok := t.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		b = b[k:]
		time.Sleep(10 * time.Millisecond)
	}
	return n, nil
}

func (t *trickle) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// runPTY runs the ferry binary in env with stdout and stderr on one
// pseudo-terminal of 160 columns, as a person at a terminal runs it, and
// returns everything the terminal received and the exit code.
func runPTY(t *testing.T, env *clitest.Env, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(clitest.Binary(t), args...)
	cmd.Dir = env.Dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NO_COLOR=") && !strings.HasPrefix(kv, "TERM=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, env.Vars...), "TERM=xterm-256color")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var out bytes.Buffer
	// Reading ends with EIO once the child has exited and closed its side.
	_, err = io.Copy(&out, tty)
	if err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatalf("reading the terminal: %v", err)
	}
	code := 0
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return out.String(), code
}

var overallRE = regexp.MustCompile(`packages (\d+)/(\d+) · blobs (\d+) \((\d+) mounted, (\d+) skipped\) · [0-9.]+ [KMG]?i?B`)

// TestProgressTTY mirrors a closure with the binary under a
// pseudo-terminal: live progress is drawn (cursor movements, carriage
// returns), with a bar naming the large layer and its byte counts, and the
// overall line ends with every package done.
func TestProgressTTY(t *testing.T) {
	t.Parallel()
	w := newProgressWorld(t)
	mirror := registrytest.New(t)
	env := e2eEnv(t)
	out, code := runPTY(t, env, append([]string{"mirror", "--to", mirror.Host + "/mirror", "-j", "2"}, w.roots...)...)
	if code != 0 {
		t.Fatalf("exit %d:\n%q", code, out)
	}
	if !strings.Contains(out, "\x1b[") {
		t.Errorf("no ANSI control sequence drawn:\n%q", out)
	}
	if !strings.Contains(out, "\r") {
		t.Errorf("no carriage return drawn:\n%q", out)
	}
	if !strings.Contains(out, w.bigLayer) {
		t.Errorf("no bar for the 4 MiB layer %s:\n%q", w.bigLayer, out)
	}
	if !regexp.MustCompile(`[0-9.]+ [KM]iB / 4\.0 MiB`).MatchString(out) {
		t.Errorf("the large layer's bar shows no byte counts:\n%q", out)
	}
	all := overallRE.FindAllStringSubmatch(out, -1)
	if len(all) == 0 {
		t.Fatalf("no overall line drawn:\n%q", out)
	}
	last := all[len(all)-1]
	if last[1] != last[2] || last[2] == "0" || last[3] == "0" {
		t.Errorf("last overall line %q: want every package done and blobs counted", last[0])
	}
	if !strings.Contains(out, "mirrored "+strings.TrimSuffix(w.roots[1], ":v1.0.0")) {
		t.Errorf("the per-package lines are missing:\n%q", out)
	}
}

// TestProgressPlain checks that output holds no control character when it
// is piped, and on a terminal with --quiet or -o json, while the plain
// per-package lines still reach a pipe.
func TestProgressPlain(t *testing.T) {
	t.Parallel()
	w := newProgressWorld(t)
	for _, tc := range []struct {
		name  string
		tty   bool
		flags []string
		// lines: whether the per-package lines are printed ("" for
		// either).
		lines string
	}{
		{name: "piped", lines: "yes"},
		{name: "tty quiet", tty: true, flags: []string{"--quiet"}, lines: "no"},
		{name: "tty json", tty: true, flags: []string{"-o", "json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mirror := registrytest.New(t)
			env := e2eEnv(t)
			args := append(append([]string{"mirror", "--to", mirror.Host + "/mirror", "-j", "2"}, tc.flags...), w.roots...)
			var out string
			if tc.tty {
				var code int
				out, code = runPTY(t, env, args...)
				if code != 0 {
					t.Fatalf("exit %d:\n%q", code, out)
				}
				// The terminal's own line discipline turns \n into \r\n.
				out = strings.ReplaceAll(out, "\r\n", "\n")
			} else {
				env.Vars = append(env.Vars, "TERM=xterm-256color")
				r := env.MustRun(args...)
				out = r.Stdout + r.Stderr
			}
			if i := strings.IndexAny(out, "\x1b\r"); i >= 0 {
				t.Errorf("control character at %d:\n%q", i, out)
			}
			if overallRE.MatchString(out) {
				t.Errorf("overall progress line printed:\n%q", out)
			}
			got := strings.Contains(out, "mirrored "+strings.TrimSuffix(w.roots[1], ":v1.0.0"))
			if tc.lines != "" && got != (tc.lines == "yes") {
				t.Errorf("per-package line printed: %v, want %s:\n%q", got, tc.lines, out)
			}
		})
	}
}
