package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/relocate"
)

// killKind is what a kill point counts: blob downloads from a registry or
// blob uploads to it.
type killKind int

const (
	killOnGet killKind = iota
	killOnPut
)

var (
	blobGetPath = regexp.MustCompile(`^/v2/.+/blobs/(sha256:[0-9a-f]{64})$`)
	uploadPut   = regexp.MustCompile(`[?&]digest=(sha256(?::|%3A)[0-9a-f]{64})`)
)

// blobEvent is one blob request a registry answered.
type blobEvent struct {
	run    int
	kind   killKind
	digest string
	status int
}

// killSwitch sits in front of test registries: it records every blob
// download and upload, per run, and SIGKILLs the armed ferry process when
// the Nth matching request of its run arrives, before answering it.
type killSwitch struct {
	mu     sync.Mutex
	run    int
	proc   *os.Process
	reg    string
	kind   killKind
	at     int
	seen   int
	fired  bool
	events map[string][]blobEvent
}

func newKillSwitch() *killSwitch { return &killSwitch{events: map[string][]blobEvent{}} }

// wrap returns a registrytest wrapper for the registry named name. Blob
// requests are slowed a little, so copies overlap and a kill lands with
// several in flight.
func (k *killSwitch) wrap(name string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			kind, d := killKind(-1), ""
			if m := blobGetPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodGet {
				kind, d = killOnGet, m[1]
			} else if m := uploadPut.FindStringSubmatch(r.URL.RawQuery); m != nil && r.Method == http.MethodPut {
				kind, d = killOnPut, strings.Replace(m[1], "%3A", ":", 1)
			}
			if kind < 0 {
				next.ServeHTTP(w, r)
				return
			}
			time.Sleep(20 * time.Millisecond)
			k.mu.Lock()
			run := k.run
			if k.proc != nil && !k.fired && k.reg == name && k.kind == kind {
				k.seen++
				if k.seen == k.at {
					k.fired = true
					_ = k.proc.Kill() // SIGKILL
					k.mu.Unlock()
					http.Error(w, "killed", http.StatusServiceUnavailable)
					return
				}
			}
			k.mu.Unlock()
			sw := &killStatus{ResponseWriter: w, status: http.StatusOK}
			next.ServeHTTP(sw, r)
			k.mu.Lock()
			k.events[name] = append(k.events[name], blobEvent{run: run, kind: kind, digest: d, status: sw.status})
			k.mu.Unlock()
		})
	}
}

type killStatus struct {
	http.ResponseWriter
	status int
}

func (w *killStatus) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// start runs ferry in env as a new run; at > 0 arms the switch to kill it
// at the at-th request of kind on registry reg.
func (k *killSwitch) start(t *testing.T, env *clitest.Env, reg string, kind killKind, at int, args ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(clitest.Binary(t), args...)
	cmd.Dir = env.Dir
	cmd.Env = append(os.Environ(), env.Vars...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	k.mu.Lock()
	k.run++
	k.proc, k.reg, k.kind, k.at, k.seen, k.fired = nil, reg, kind, at, 0, false
	k.mu.Unlock()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if at > 0 {
		k.mu.Lock()
		k.proc = cmd.Process
		k.mu.Unlock()
	}
	return cmd, &out
}

// runKilled runs ferry and requires the switch to have killed it.
func (k *killSwitch) runKilled(t *testing.T, env *clitest.Env, reg string, kind killKind, at int, args ...string) {
	t.Helper()
	cmd, out := k.start(t, env, reg, kind, at, args...)
	err := cmd.Wait()
	k.mu.Lock()
	fired := k.fired
	k.proc = nil
	k.mu.Unlock()
	var ee *exec.ExitError
	if !fired || !errors.As(err, &ee) || ee.ExitCode() != -1 {
		t.Fatalf("ferry %s: not killed at request %d (fired %v, %v)\n%s", strings.Join(args, " "), at, fired, err, out)
	}
}

// runOK runs ferry to completion and requires exit 0.
func (k *killSwitch) runOK(t *testing.T, env *clitest.Env, args ...string) {
	t.Helper()
	cmd, out := k.start(t, env, "", killOnGet, 0, args...)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ferry %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// done returns the digests of kind that reg answered with success in runs
// up to and including run.
func (k *killSwitch) done(reg string, kind killKind, run int) map[string]bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]bool{}
	for _, e := range k.events[reg] {
		if e.run <= run && e.kind == kind && e.status < 300 {
			out[e.digest] = true
		}
	}
	return out
}

// repeated returns the digests of kind requested from reg in run that are
// in already.
func (k *killSwitch) repeated(reg string, kind killKind, run int, already map[string]bool) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for _, e := range k.events[reg] {
		if e.run == run && e.kind == kind && already[e.digest] {
			out = append(out, e.digest)
		}
	}
	return out
}

func (k *killSwitch) currentRun() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.run
}

// stagedBlobs returns the digests of the blobs in the staging layouts
// beside dest.
func stagedBlobs(t *testing.T, dest string) map[string]bool {
	t.Helper()
	dirs, err := relocate.FindStaging([]string{dest})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, d := range dirs {
		for _, sub := range []string{"layout", "tree"} {
			files, _ := filepath.Glob(filepath.Join(d, sub, "blobs", "sha256", "*"))
			for _, f := range files {
				out["sha256:"+filepath.Base(f)] = true
			}
		}
	}
	return out
}

// noStaging fails when anything ferry stages is left in dir.
func noStaging(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".ferry-stage-") || strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("left in %s: %s", dir, e.Name())
		}
	}
}

// TestKillAndResume SIGKILLs mirror --to, --to-archive, --from-archive and
// install in the middle of their copies, at the kill points of the table
// (the Nth blob request of the run; several points kill successive runs),
// and re-runs each: the re-run succeeds, sends nothing the earlier runs
// completed (uploads the mirror holds, blobs already staged), leaves no
// staging, and verify --deep passes.
func TestKillAndResume(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		kills []int
	}{
		{"early", []int{1}},
		// With -j 1 a copy has at most 8 blobs under way (8×j, from their
		// read's request to their push's answer), so its 10th blob request
		// comes after at least one blob is complete.
		{"mid-way, then again while resuming", []int{10, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ks := newKillSwitch()
			src := registrytest.New(t, registrytest.WithWrap(ks.wrap("src")))
			m1 := registrytest.New(t, registrytest.WithWrap(ks.wrap("m1")))
			m2 := registrytest.New(t, registrytest.WithWrap(ks.wrap("m2")))
			ctx := context.Background()
			c := e2eClient(t)
			var refs []string
			for _, name := range []string{"one", "two", "three"} {
				repoName := src.Host + "/kill/" + name
				repo := e2eRepo(t, c, repoName)
				inv, err := fixture.PushImage(ctx, repo, "kill-"+name, 1<<20, 512<<10, 512<<10)
				if err != nil {
					t.Fatal(err)
				}
				bj, err := fixture.Bundle{Name: name, Version: "1.0.0"}.BundleJSON(repoName, inv, nil)
				if err != nil {
					t.Fatal(err)
				}
				e2ePushRaw(t, repo, "v1.0.0", bj, inv)
				refs = append(refs, "  - ref: "+repoName+":v1.0.0")
			}
			env := e2eEnv(t)
			env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n"+strings.Join(refs, "\n")+"\n")
			env.MustRun("lock")
			air := e2eEnv(t)
			archive := env.Path("closure.tar")

			steps := []struct {
				name string
				env  *clitest.Env
				args []string
				// reg and kind are what the kill points count and what a
				// re-run must not repeat.
				reg  string
				kind killKind
				// dest is where the result is staged, if anywhere.
				dest string
			}{
				{"mirror --to", env, []string{"mirror", "-j", "1", "--lock", "ferry.lock", "--to", m1.Host + "/m"}, "m1", killOnPut, ""},
				{"mirror --to-archive", env, []string{"mirror", "-j", "1", "--lock", "ferry.lock", "--to-archive", "closure.tar"}, "src", killOnGet, archive},
				{"mirror --from-archive", air, []string{"mirror", "-j", "1", "--from-archive", archive, "--to", m2.Host + "/m"}, "m2", killOnPut, ""},
				{"install", air, []string{"install", "-j", "1", "--dest", "out"}, "m2", killOnGet, air.Path("out")},
			}
			for _, st := range steps {
				// complete is what the runs so far completed: uploads the
				// mirror acknowledged, or blobs in the staging; already
				// gathers it over the killed runs.
				complete := func() map[string]bool {
					if st.dest != "" {
						return stagedBlobs(t, st.dest)
					}
					return ks.done(st.reg, st.kind, ks.currentRun())
				}
				already := map[string]bool{}
				check := func(what string) {
					if again := ks.repeated(st.reg, st.kind, ks.currentRun(), already); len(again) > 0 {
						t.Errorf("%s, %s: sent again %v, complete before", st.name, what, again)
					}
				}
				for i, at := range tt.kills {
					ks.runKilled(t, st.env, st.reg, st.kind, at, st.args...)
					if i > 0 {
						check(fmt.Sprintf("killed re-run %d", i))
					}
					for d := range complete() {
						already[d] = true
					}
					if len(already) == 0 && at > 2 {
						t.Errorf("%s killed at request %d: nothing was complete", st.name, at)
					}
				}
				ks.runOK(t, st.env, st.args...)
				check("final re-run")
				noStaging(t, st.env.Dir)
				st.env.MustRun("verify", "--deep")
			}
			if _, err := os.Stat(air.Path(filepath.Join("out", "plan.json"))); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestGC: ferry gc removes marked staging beside a destination and in a
// directory, reports it (text and JSON), and leaves alone a directory
// with a staging name but no marker.
func TestGC(t *testing.T) {
	t.Parallel()
	env := clitest.New(t)
	marked := relocate.StagePath(env.Path("closure.tar"), "0123456789abcdef")
	foreign := relocate.StagePath(env.Path("out"), "fedcba9876543210")
	for _, d := range []string{marked, foreign} {
		if err := os.MkdirAll(filepath.Join(d, "layout"), 0o755); err != nil {
			t.Fatal(err)
		}
		env.WriteFile(filepath.Join(filepath.Base(d), "layout", "blob"), strings.Repeat("x", 1000))
	}
	env.WriteFile(filepath.Join(filepath.Base(marked), relocate.StageMarker), "{}\n")
	r := env.MustRun("gc", "-o", "json")
	var rep gcReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	if len(rep.Removed) != 1 || rep.Removed[0].Path != marked || rep.Bytes != 1003 {
		t.Errorf("gc report %+v, want %s removed, 1003 bytes", rep, marked)
	}
	if _, err := os.Stat(marked); !os.IsNotExist(err) {
		t.Errorf("%s still there: %v", marked, err)
	}
	if _, err := os.Stat(filepath.Join(foreign, "layout", "blob")); err != nil {
		t.Errorf("gc touched a directory without the marker: %v", err)
	}
	env.Expect(0, []string{"gc", env.Path("closure.tar")}, "removed 0 staging directories, 0 bytes freed")
}
