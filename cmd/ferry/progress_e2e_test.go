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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
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
	// The ROOTs are resolved first, under a line of their own that ends
	// before the copy's begins; the copy counts each package once.
	res := resolvingRE.FindAllStringSubmatchIndex(out, -1)
	if len(res) == 0 {
		t.Fatalf("no resolving line drawn before the copy:\n%q", out)
	}
	lastRes := res[len(res)-1]
	if first := overallRE.FindStringIndex(out); first[0] < lastRes[0] {
		t.Errorf("a resolving line drawn after the copy's first overall line:\n%q", out)
	}
	read, queued := out[lastRes[2]:lastRes[3]], out[lastRes[4]:lastRes[5]]
	if read != last[2] || queued != "0" {
		t.Errorf("last resolving line %q and last overall line %q: want as many packages read as copied, none queued", out[lastRes[0]:lastRes[1]], last[0])
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

// resolveWorld is a closure to lock for the resolution's progress: an app
// whose ten dependencies share one library (12 bundles), on a registry
// that answers every manifest GET 80 ms late (slowManifests), so that
// resolving it with -j 2 takes well over one redraw.
func resolveWorld(t *testing.T) string {
	t.Helper()
	reg := registrytest.New(t, registrytest.WithWrap(slowManifests))
	h := reg.Host
	dep := func(name string) fixture.Dep {
		return fixture.Dep{Name: name, Bundle: h + "/res/" + name + ":v1.0.0", Ranges: []string{"^1.0"}}
	}
	bundles := map[string][]fixture.Bundle{"res/lib": {e2eBundle("lib", "1.0.0")}}
	var deps []fixture.Dep
	for i := range 10 {
		name := "svc" + string(rune('a'+i))
		bundles["res/"+name] = []fixture.Bundle{e2eBundle(name, "1.0.0", dep("lib"))}
		deps = append(deps, dep(name))
	}
	bundles["res/app"] = []fixture.Bundle{e2eBundle("app", "1.0.0", deps...)}
	e2ePush(t, h, bundles)
	return h + "/res/app:v1.0.0"
}

// slowManifests answers a manifest GET 80 ms late.
func slowManifests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/manifests/") {
			time.Sleep(80 * time.Millisecond)
		}
		next.ServeHTTP(w, r)
	})
}

// resolvingRE is the overall line of a resolution.
var resolvingRE = regexp.MustCompile(`resolving · packages (\d+) read, (\d+) queued · [0-9.]+ [KMG]?i?B`)

// TestProgressResolveTTY locks a closure under a pseudo-terminal: while
// it resolves, the overall line counts packages read and queued (no blob
// counts), and the last one drawn has read every package the lock holds
// and has none queued.
func TestProgressResolveTTY(t *testing.T) {
	t.Parallel()
	root := resolveWorld(t)
	env := e2eEnv(t)
	out, code := runPTY(t, env, "lock", "-j", "2", root)
	if code != 0 {
		t.Fatalf("exit %d:\n%q", code, out)
	}
	if !strings.Contains(out, "\x1b[") {
		t.Errorf("no ANSI control sequence drawn:\n%q", out)
	}
	all := resolvingRE.FindAllStringSubmatch(out, -1)
	if len(all) == 0 {
		t.Fatalf("no resolving line drawn:\n%q", out)
	}
	l, err := lock.Read(env.Path("ferry.lock"))
	if err != nil {
		t.Fatal(err)
	}
	last := all[len(all)-1]
	t.Logf("%d resolving frames drawn, first %q, last %q", len(all), all[0][0], last[0])
	if want := strconv.Itoa(len(l.Packages)); last[1] != want || last[2] != "0" {
		t.Errorf("last resolving line %q: want %s packages read (the lock's) and 0 queued", last[0], want)
	}
	if overallRE.MatchString(out) {
		t.Errorf("a transfer's overall line (blob counts) drawn while locking:\n%q", out)
	}
	// The frames drawn before the last show the work under way: a queue
	// not yet empty or fewer packages read.
	if first := all[0]; first[1] == last[1] && first[2] == "0" {
		t.Errorf("only the finished count was drawn (%q): no frame during the resolution", first[0])
	}
	if !strings.Contains(out, "locked "+strconv.Itoa(len(l.Resolved()))+" packages") {
		t.Errorf("the result line is missing:\n%q", out)
	}
}

// TestProgressResolvePlain checks that `ferry lock` and `ferry resolve`
// piped, or on a terminal with -o json, write no control character and no
// resolving line, while their results still come out.
func TestProgressResolvePlain(t *testing.T) {
	t.Parallel()
	root := resolveWorld(t)
	for _, tc := range []struct {
		name string
		tty  bool
		args []string
		want string
	}{
		{name: "lock piped", args: []string{"lock", "-j", "2", root}, want: "locked "},
		{name: "resolve piped", args: []string{"resolve", "-j", "2", root}, want: "/res/lib"},
		{name: "resolve tty json", tty: true, args: []string{"resolve", "-j", "2", "-o", "json", root}, want: "/res/lib"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := e2eEnv(t)
			var out string
			if tc.tty {
				var code int
				out, code = runPTY(t, env, tc.args...)
				if code != 0 {
					t.Fatalf("exit %d:\n%q", code, out)
				}
				out = strings.ReplaceAll(out, "\r\n", "\n")
			} else {
				env.Vars = append(env.Vars, "TERM=xterm-256color")
				r := env.MustRun(tc.args...)
				out = r.Stdout + r.Stderr
			}
			if i := strings.IndexAny(out, "\x1b\r"); i >= 0 {
				t.Errorf("control character at %d:\n%q", i, out)
			}
			if strings.Contains(out, "resolving ·") {
				t.Errorf("resolving line printed:\n%q", out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("output lacks %q:\n%q", tc.want, out)
			}
		})
	}
}
