// Package registrytest starts real in-process distribution registries on
// 127.0.0.1 random ports for tests. Every test that needs a registry goes
// through New.
package registrytest

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/serve"
)

// Registry is a running test registry.
type Registry struct {
	// Host is "127.0.0.1:PORT", usable as a reference's registry.
	Host string
	// Root is the registry's storage directory.
	Root string

	t       testing.TB
	srv     *serve.Server
	ln      *trackingListener // nil when an Option brought its own
	mu      sync.Mutex
	stopped bool
	reqs    []Request
}

// Request is one request the registry received.
type Request struct {
	Method string
	Path   string
	Status int
}

// Option changes how New starts a registry.
type Option func(*serve.Options)

// WithWrap puts h in front of the registry handler, for example to inject
// faults.
func WithWrap(wrap func(http.Handler) http.Handler) Option {
	return func(o *serve.Options) {
		prev := o.Wrap
		o.Wrap = func(next http.Handler) http.Handler {
			if prev != nil {
				next = prev(next)
			}
			return wrap(next)
		}
	}
}

// New starts a registry with filesystem storage in a temporary directory and
// stops it when the test ends. It is CNCF distribution v3 as it answers
// alone (serve.Options.DistributionOnly): no referrers API, so clients fall
// back to the referrers tag schema, as against most registries deployed.
func New(t testing.TB, opts ...Option) *Registry {
	t.Helper()
	r := &Registry{t: t, Root: storageDir(t)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("registrytest: %v", err)
	}
	r.ln = &trackingListener{Listener: ln, conns: map[*trackedConn]bool{}}
	// Plain distribution v3: no referrers API (NewReferrersAPI has one,
	// as ferry serve does).
	o := serve.Options{Root: r.Root, Listener: r.ln, Wrap: r.record, DistributionOnly: true}
	for _, opt := range opts {
		opt(&o)
	}
	if o.Listener != r.ln {
		_ = ln.Close()
		r.ln = nil
	}
	srv, err := serve.Start(context.Background(), o)
	if err != nil {
		t.Fatalf("registrytest: %v", err)
	}
	r.srv = srv
	r.Host = srv.Addr
	t.Cleanup(func() { r.stop(false) })
	return r
}

// Stop shuts the registry down; later requests to Host fail to connect
// (connection refused) until the test ends: the port is held, so no
// other registry of a parallel test is given it (hold.go).
func (r *Registry) Stop() { r.stop(true) }

// stop shuts the registry down, holding its port when hold is set (not
// when the test has ended: the hold would end with it).
func (r *Registry) stop(hold bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	r.stopped = true
	if r.ln != nil {
		r.ln.abortAll()
	}
	_ = r.srv.Close()
	if r.ln == nil {
		return
	}
	// Closed here too: a registry stopped before its Serve goroutine
	// began would otherwise close its listener only once that runs.
	_ = r.ln.Close()
	if !hold {
		return
	}
	held, err := holdPort(r.Host)
	if err != nil {
		r.t.Logf("registrytest: the stopped registry's port stays free (another test may be given it): %v", err)
		return
	}
	r.t.Cleanup(func() { _ = held.Close() })
}

// Requests returns the requests received since the last Reset.
func (r *Registry) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.reqs...)
}

// Reset forgets the recorded requests.
func (r *Registry) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = nil
}

func (r *Registry) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		// Recorded when the status goes out, before any byte of the
		// answer reaches the client: a client that has read its answer
		// and then counts the requests finds this one among them (after
		// ServeHTTP returned, it could be missing: the body can be read
		// before the handler returns).
		sw.record = func(status int) {
			r.mu.Lock()
			r.reqs = append(r.reqs, Request{Method: req.Method, Path: req.URL.Path, Status: status})
			r.mu.Unlock()
		}
		next.ServeHTTP(sw, req)
		sw.recordOnce(http.StatusOK)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status   int
	record   func(status int)
	recorded bool
}

// recordOnce records the request with status the first time it is called.
func (w *statusWriter) recordOnce(status int) {
	if w.recorded {
		return
	}
	w.recorded = true
	w.status = status
	if w.record != nil {
		w.record(status)
	}
}

func (w *statusWriter) WriteHeader(code int) {
	// Informational answers (100 Continue) precede the real one.
	if code >= 200 {
		w.recordOnce(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.recordOnce(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Client returns a registry client with an empty docker config of its own,
// so no credentials from the machine reach a test.
func Client(t testing.TB) *client.Client {
	t.Helper()
	c, err := client.New(client.Options{RegistryConfig: filepath.Join(t.TempDir(), "config.json")})
	if err != nil {
		t.Fatalf("registrytest: %v", err)
	}
	return c
}

// Repository opens "HOST/PATH" with c, failing the test on a bad name.
func Repository(t testing.TB, c *client.Client, name string) *remote.Repository {
	t.Helper()
	r, err := c.Repository(name)
	if err != nil {
		t.Fatalf("registrytest: %v", err)
	}
	return r
}
