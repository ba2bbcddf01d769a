package bench

import (
	"context"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferryhq/ferry/internal/faultproxy"
)

// Stats counts what passed through a Proxy.
type Stats struct {
	// Requests is the number of requests.
	Requests int `json:"requests"`
	// ByKind counts requests by Kind.
	ByKind map[string]int `json:"byKind"`
	// BytesUp is the request body bytes sent to the registry: blob and
	// manifest uploads.
	BytesUp int64 `json:"bytesUp"`
	// BytesDown is the response body bytes the registry sent back.
	BytesDown int64 `json:"bytesDown"`
	// BlobUploads counts completed blob uploads (201 to a PUT, or to a
	// monolithic POST, under /blobs/uploads/).
	BlobUploads int `json:"blobUploads"`
	// Mounts counts cross-repository mounts the registry accepted (201).
	Mounts int `json:"mounts"`
	// MountMisses counts mount requests the registry answered by opening
	// an upload instead (202).
	MountMisses int `json:"mountMisses"`
	// ManifestPuts counts manifests written (201).
	ManifestPuts int `json:"manifestPuts"`
	// Repeats counts GET and HEAD requests for a URL already requested
	// with the same method: reads that were made twice.
	Repeats int `json:"repeats"`
	// Errors counts responses with status 5xx.
	Errors int `json:"errors"`
	// MountTries counts cross-repository mount requests: upload POSTs
	// with both mount= and from=.
	MountTries int `json:"mountTries,omitempty"`
	// Sessions counts upload sessions the registry opened (202 to an
	// upload POST).
	Sessions int `json:"sessions,omitempty"`
	// SessionsOpen counts the sessions opened since the last Take that
	// were neither completed (201 to the PUT) nor cancelled (204 to a
	// DELETE) when Take was called.
	SessionsOpen int `json:"sessionsOpen,omitempty"`
}

// Kind classifies a registry request by method and path: "ping", "tags",
// "manifest GET", "manifest HEAD", "manifest PUT", "blob GET", "blob HEAD",
// "upload POST", "upload PATCH", "upload PUT", "referrers" or "other".
func Kind(method, path string) string {
	switch {
	case path == "/v2/" || path == "/v2":
		return "ping"
	case strings.HasSuffix(path, "/tags/list"):
		return "tags"
	case strings.Contains(path, "/referrers/"):
		return "referrers"
	case strings.Contains(path, "/manifests/"):
		return "manifest " + method
	case strings.Contains(path, "/blobs/uploads"):
		return "upload " + method
	case strings.Contains(path, "/blobs/"):
		return "blob " + method
	}
	return "other"
}

// Proxy is a reverse proxy on 127.0.0.1 in front of one registry. It keeps
// the client's Host header, so the registry's upload locations point back
// through the proxy, optionally sleeps Delay before forwarding each request
// (a far-away registry), and counts requests, bytes, uploads and mounts.
type Proxy struct {
	// Addr is the proxy's HOST:PORT on 127.0.0.1.
	Addr string
	// Delay is added before each request is forwarded.
	Delay time.Duration
	// RefuseMounts makes the registry refuse cross-repository mounts the
	// way the distribution spec lets it: a mount POST is forwarded without
	// its mount= and from=, so the registry opens an upload session (202)
	// instead of mounting. Set it before the proxy serves requests.
	RefuseMounts bool

	srv *http.Server
	mu  sync.Mutex
	st  Stats
	// seen counts GET and HEAD URLs.
	seen map[string]int
	// open holds the paths of upload sessions not yet completed.
	open map[string]bool
}

// StartProxy starts a proxy to the registry at target (HOST:PORT) adding
// delay to every request.
func StartProxy(target string, delay time.Duration) (*Proxy, error) {
	rp, _ := faultproxy.Forward(target)
	// The proxy stands for network latency, so it should cost the machine
	// as little CPU as it can: the 2 cores it shares with the tools are
	// what W2 and W1-latency measure. A response is written as the
	// server's buffer fills and flushed at its end (FlushInterval 0;
	// streaming answers, of unknown length, are still flushed at once),
	// not flushed after every write, and the copy buffers are reused.
	rp.FlushInterval = 0
	rp.BufferPool = &proxyBuffers
	p := &Proxy{Delay: delay, seen: map[string]int{}, open: map[string]bool{}}
	srv, addr, err := faultproxy.Listen(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.Delay > 0 {
			time.Sleep(p.Delay)
		}
		var body *countingReader
		if r.Body != nil && r.Body != http.NoBody {
			body = &countingReader{r: r.Body}
			r.Body = body
		}
		cw := &countingWriter{ResponseWriter: w, status: http.StatusOK}
		fwd := r
		if p.RefuseMounts && r.Method == http.MethodPost && r.URL.Query().Has("mount") {
			fwd = refuseMount(r)
		}
		rp.ServeHTTP(cw, fwd)
		p.record(r, cw, body)
	}))
	if err != nil {
		return nil, err
	}
	p.srv, p.Addr = srv, addr
	return p, nil
}

func (p *Proxy) record(r *http.Request, w *countingWriter, body *countingReader) {
	kind := Kind(r.Method, r.URL.Path)
	q := r.URL.Query()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := &p.st
	if st.ByKind == nil {
		st.ByKind = map[string]int{}
	}
	st.Requests++
	st.ByKind[kind]++
	if body != nil {
		st.BytesUp += body.n.Load()
	}
	st.BytesDown += w.n
	if w.status >= 500 {
		st.Errors++
	}
	switch {
	case kind == "upload POST" && q.Get("mount") != "":
		if q.Get("from") != "" {
			st.MountTries++
		}
		if w.status == http.StatusCreated {
			st.Mounts++
		} else {
			st.MountMisses++
		}
	case kind == "upload POST" && q.Get("digest") != "" && w.status == http.StatusCreated:
		st.BlobUploads++
	case kind == "upload PUT" && w.status == http.StatusCreated:
		st.BlobUploads++
	case kind == "manifest PUT" && w.status == http.StatusCreated:
		st.ManifestPuts++
	}
	p.session(r, kind, w)
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		key := r.Method + " " + r.URL.RequestURI()
		p.seen[key]++
		if p.seen[key] > 1 {
			st.Repeats++
		}
	}
}

// proxyBuffers are the proxies' copy buffers (httputil.BufferPool).
var proxyBuffers bufferPool

type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.p.Put(&buf) }

// Take returns the counts so far and starts counting afresh.
func (p *Proxy) Take() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.st
	if st.ByKind == nil {
		st.ByKind = map[string]int{}
	}
	st.SessionsOpen = len(p.open)
	p.st = Stats{}
	p.seen = map[string]int{}
	p.open = map[string]bool{}
	return st
}

// Close stops the proxy.
func (p *Proxy) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
}

// KindsString renders ByKind as "kind=n, ..." sorted by kind.
func (s Stats) KindsString() string {
	keys := make([]string, 0, len(s.ByKind))
	for k := range s.ByKind {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		b.WriteString("=")
		b.WriteString(itoa(s.ByKind[k]))
	}
	return b.String()
}

type countingReader struct {
	r io.ReadCloser
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }

type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (c *countingWriter) WriteHeader(code int) {
	c.status = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

// Flush lets the reverse proxy stream responses.
func (c *countingWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
