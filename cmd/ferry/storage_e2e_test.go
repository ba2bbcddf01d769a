package main

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/faultproxy"
)

// TestE2EStorageRefusal: a destination with no room — distribution's 500
// "no space left on device", Harbor's 403 quota, 507 Insufficient
// Storage — put in front of a real registry by the fault proxy, refuses
// every write that carries content. The mirror is not retried: it exits 1
// promptly, naming the registry's answer, prints no retry line for it, and
// shows no upload token (issue 32 point 4).
func TestE2EStorageRefusal(t *testing.T) {
	t.Parallel()
	w := newE2EMirrored(t)
	env := w.env
	for _, tc := range []struct {
		kind faultproxy.Kind
		want []string
	}{
		{faultproxy.DiskFull, []string{"500 Internal Server Error", "no space left on device"}},
		{faultproxy.Quota, []string{"403 Forbidden", "Quota exceeded when processing the request"}},
		{faultproxy.InsufficientStorage, []string{"507 Insufficient Storage"}},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			// The proxy: the refusals in front of the mirror registry,
			// and a count of each write's content (a blob's digest, a
			// manifest's path) in front of them.
			in := faultproxy.New(faultproxy.Options{Seed: 1, Rate: 1, Kinds: []faultproxy.Kind{tc.kind}})
			rp, _ := faultproxy.Forward(w.mirror.Host)
			var mu sync.Mutex
			writes := map[string]int{}
			srv, addr, err := faultproxy.Listen(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPut || r.Method == http.MethodPatch {
					key := r.URL.Query().Get("digest")
					if key == "" {
						key = r.URL.Path
					}
					mu.Lock()
					writes[key]++
					mu.Unlock()
				}
				in.Wrap(rp).ServeHTTP(rw, r)
			}))
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			start := time.Now()
			want := append([]string{addr + " refused PUT /v2/full/", "retrying will not help"}, tc.want...)
			r := env.Expect(exitcode.Failure, []string{"mirror", "--lock", "ferry.lock", "--to", addr + "/full", "-j", "2"}, want...)
			took := time.Since(start)
			// No write is tried twice, and the run waits out no backoff.
			if took > 10*time.Second {
				t.Errorf("the refusal took %s", took)
			}
			mu.Lock()
			for k, n := range writes {
				if n > 1 {
					t.Errorf("%s was written %d times: a refusal was retried", k, n)
				}
			}
			mu.Unlock()
			st := in.Stats()
			if st.Faults == 0 {
				t.Errorf("no write was refused (%s)", st)
			}
			out := r.Stdout + r.Stderr
			for _, s := range []string{"msg=\"retrying", "_state="} {
				if strings.Contains(out, s) {
					t.Errorf("output shows %q:\n%s", s, out)
				}
			}
			t.Logf("%s: exit 1 after %s, %s\n%s", tc.kind, took.Round(time.Millisecond), st, faultsTail(r.Stderr))
		})
	}
}
