package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferryhq/ferry/exitcode"
)

// TestE2ENotARegistry: a --to that is a web server, not a registry, is
// found out by one GET /v2/ before the first write (as crane and skopeo
// ping), and the run exits 1 at once naming what answered, instead of
// retrying every write for the whole retry budget (issue 32).
func TestE2ENotARegistry(t *testing.T) {
	t.Parallel()
	w := newE2EMirrored(t)
	env := w.env
	for _, tc := range []struct {
		name   string
		status int
		want   string
	}{
		{"404", http.StatusNotFound, "404 Not Found"},
		{"501", http.StatusNotImplemented, "501 Not Implemented"},
		{"405", http.StatusMethodNotAllowed, "405 Method Not Allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var writes atomic.Int32
			web := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet && r.Method != http.MethodHead {
					writes.Add(1)
				}
				http.Error(rw, "<html>not here</html>", tc.status)
			}))
			defer web.Close()
			host := strings.TrimPrefix(web.URL, "http://")
			start := time.Now()
			env.Expect(exitcode.Failure, []string{"mirror", "--lock", "ferry.lock", "--to", host + "/m"}, host+" is not an OCI registry", tc.want)
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("the refusal took %s", d)
			}
			if n := writes.Load(); n != 0 {
				t.Errorf("%d writes sent to a server that is no registry", n)
			}
		})
	}
}
