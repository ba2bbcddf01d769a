package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestE2EInterrupt: Ctrl-C (SIGINT) during a mirror exits 130 and SIGTERM
// 143, as shells and skopeo do, with one line, not one per package; the
// lock is not half-written.
func TestE2EInterrupt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := registrytest.New(t)
	c := e2eClient(t)
	var roots []string
	for _, name := range []string{"a", "b", "c"} {
		repo := e2eRepo(t, c, src.Host+"/int/"+name)
		d, err := fixture.PushImage(ctx, repo, "interrupt-"+name, 4096)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.Tag(ctx, d, "1.0.0"); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, src.Host+"/int/"+name+":1.0.0")
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			t.Parallel()
			var uploads atomic.Int32
			// The mirror holds every blob upload until the client gives up.
			stall := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.Contains(r.URL.Path, "/blobs/uploads/") {
						uploads.Add(1)
						<-r.Context().Done()
						return
					}
					next.ServeHTTP(w, r)
				})
			}))
			env := e2eEnv(t)
			env.MustRun(append([]string{"lock"}, roots...)...)
			before := env.ReadFile("ferry.lock")
			cmd := exec.Command(clitest.Binary(t), "mirror", "--to", stall.Host+"/mirror", "--lock", "ferry.lock")
			cmd.Dir = env.Dir
			cmd.Env = append(os.Environ(), env.Vars...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for uploads.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			sent := time.Now()
			_ = cmd.Process.Signal(tc.sig)
			err := cmd.Wait()
			t.Logf("uploads %d; exited %v after the signal", uploads.Load(), time.Since(sent))
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Fatalf("exit %v, want %d\n%s", err, tc.code, stderr.String())
			}
			lines := 0
			for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
				if strings.HasPrefix(l, "ferry:") || strings.Contains(l, "int/") && strings.Contains(l, "context canceled") {
					lines++
				}
			}
			if lines != 1 || !strings.Contains(stderr.String(), "ferry: interrupted") {
				t.Errorf("want one line saying it was interrupted, got:\n%s", stderr.String())
			}
			if got := env.ReadFile("ferry.lock"); got != before {
				t.Errorf("the interrupted mirror changed ferry.lock")
			}
		})
	}
}
