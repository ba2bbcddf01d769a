package mixin

import (
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"oras.land/oras-go/v2/registry/remote"
)

// MirrorHandler answers Porter's mirror protocol (/mixins/atom.xml and
// /mixins/VERSION/NAME-OS-ARCH[.exe]) from the mixin artifacts a registry
// stores under any prefix (repositories ending in porter-mixins/NAME). It
// is mounted in `ferry serve` before the registry starts, and bound to the
// registry's handler once it runs; it reads that handler in process, so it
// needs neither the network nor credentials of its own (the request that
// reached it has already passed the server's authentication).
type MirrorHandler struct {
	h atomic.Pointer[http.Handler]
}

// NewMirrorHandler returns an unbound MirrorHandler, for `ferry serve` to
// mount at /mixins/; it answers 503 until Bind.
func NewMirrorHandler() *MirrorHandler { return &MirrorHandler{} }

// Bind serves the mixins stored in the registry that registry (an OCI
// distribution handler such as serve.Server.Registry) answers for.
func (m *MirrorHandler) Bind(registry http.Handler) error {
	reg, err := remote.NewRegistry("ferry.local")
	if err != nil {
		return err
	}
	reg.PlainHTTP = true
	reg.Client = &http.Client{Transport: handlerTransport{h: registry}}
	var h http.Handler = NewHandler(&RegistryStore{Registry: reg, AnyPrefix: true})
	m.h.Store(&h)
	return nil
}

// ServeHTTP implements http.Handler.
func (m *MirrorHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := m.h.Load()
	if h == nil {
		http.Error(w, "the registry is starting", http.StatusServiceUnavailable)
		return
	}
	(*h).ServeHTTP(w, r)
}

// handlerTransport is an http.RoundTripper that answers requests with an
// http.Handler in process, streaming the response body.
type handlerTransport struct{ h http.Handler }

// RoundTrip serves req with the handler.
func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	w := &pipeResponse{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	in := req.Clone(req.Context())
	if in.Body == nil {
		in.Body = http.NoBody
	}
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "127.0.0.1:0"
	go func() {
		defer func() {
			if p := recover(); p != nil {
				w.WriteHeader(http.StatusInternalServerError)
			}
			w.WriteHeader(http.StatusOK) // no-op when already written
			pw.Close()
		}()
		t.h.ServeHTTP(w, in)
	}()
	select {
	case <-w.ready:
	case <-req.Context().Done():
		pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	resp := &http.Response{
		Status:        strconv.Itoa(w.status) + " " + http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          pr,
		ContentLength: -1,
		Request:       req,
	}
	if n, err := strconv.ParseInt(w.sent.Get("Content-Length"), 10, 64); err == nil {
		resp.ContentLength = n
	}
	if req.Method == http.MethodHead {
		resp.Body = http.NoBody
		go io.Copy(io.Discard, pr)
	}
	return resp, nil
}

// pipeResponse is an http.ResponseWriter writing the body into a pipe.
type pipeResponse struct {
	header http.Header
	sent   http.Header
	status int
	pw     *io.PipeWriter
	once   sync.Once
	ready  chan struct{}
}

// Header returns the headers to send.
func (w *pipeResponse) Header() http.Header { return w.header }

// WriteHeader sends the status and headers, once.
func (w *pipeResponse) WriteHeader(code int) {
	w.once.Do(func() {
		w.status = code
		w.sent = w.header.Clone()
		close(w.ready)
	})
}

// Write writes body bytes into the pipe.
func (w *pipeResponse) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}

// Flush implements http.Flusher; writes go straight to the pipe.
func (w *pipeResponse) Flush() {}
