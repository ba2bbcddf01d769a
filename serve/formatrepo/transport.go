package formatrepo

import (
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/opencontainers/go-digest"
)

// HandlerTransport returns an http.RoundTripper that answers requests with
// h in process, streaming the response body: the formats that answer a
// protocol of their own over what the served registry stores (Porter's
// mixin protocol, a Helm chart repository) read the registry through it,
// with oras-go, without a network round trip.
func HandlerTransport(h http.Handler) http.RoundTripper { return handlerTransport{h: h} }

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

// ErrContentMismatch is wrapped by the errors of a VerifiedReader whose
// content does not match its digest or size.
var ErrContentMismatch = errors.New("content does not match its digest")

// VerifiedReader returns a reader of r that hashes what it reads and
// holds back the read that completes the content until the whole has
// digest want and size bytes: a download served through it that does not
// match ends with an error before its last byte, so a client never holds a
// complete file that is wrong. The error describes the mismatch.
func VerifiedReader(r io.Reader, want digest.Digest, size int64) io.Reader {
	return &verifiedReader{r: r, want: want, size: size, h: want.Algorithm().Hash()}
}

// verifiedReader is VerifiedReader's reader.
type verifiedReader struct {
	r    io.Reader
	want digest.Digest
	size int64
	n    int64
	h    hash.Hash
	err  error
}

func (v *verifiedReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	switch {
	case v.n > v.size:
		v.err = fmt.Errorf("%w: more than the expected %d bytes", ErrContentMismatch, v.size)
		return 0, v.err
	case v.n == v.size:
		if got := digest.NewDigestFromBytes(v.want.Algorithm(), v.h.Sum(nil)); got != v.want {
			v.err = fmt.Errorf("%w: content is %s, not %s", ErrContentMismatch, got, v.want)
			return 0, v.err
		}
	case err == io.EOF:
		v.err = fmt.Errorf("%w: %d bytes, not %d", ErrContentMismatch, v.n, v.size)
		return 0, v.err
	}
	return n, err
}
