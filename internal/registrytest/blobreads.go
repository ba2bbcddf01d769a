package registrytest

import (
	"net/http"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
)

// BlobReads counts, per digest, the blob GETs a registry answered and the
// bytes of their bodies, as sent on the wire. Pass its Wrap to New with
// WithWrap. Its zero value is ready.
type BlobReads struct {
	mu    sync.Mutex
	gets  map[digest.Digest]int
	bytes int64
}

// Reset forgets what was counted.
func (b *BlobReads) Reset() {
	b.mu.Lock()
	b.gets, b.bytes = nil, 0
	b.mu.Unlock()
}

// Counts returns the blob GETs per digest and the body bytes sent since
// the last Reset.
func (b *BlobReads) Counts() (map[digest.Digest]int, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	gets := make(map[digest.Digest]int, len(b.gets))
	for d, n := range b.gets {
		gets[d] = n
	}
	return gets, b.bytes
}

// Wrap counts the blob GETs next answers.
func (b *BlobReads) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, d, isBlob := strings.Cut(r.URL.Path, "/blobs/")
		if r.Method != http.MethodGet || !isBlob || strings.HasPrefix(d, "uploads/") {
			next.ServeHTTP(w, r)
			return
		}
		cw := &countWriter{ResponseWriter: w}
		next.ServeHTTP(cw, r)
		b.mu.Lock()
		if b.gets == nil {
			b.gets = map[digest.Digest]int{}
		}
		b.gets[digest.Digest(d)]++
		b.bytes += cw.n
		b.mu.Unlock()
	})
}

// countWriter counts the body bytes written.
type countWriter struct {
	http.ResponseWriter
	n int64
}

func (w *countWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *countWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
