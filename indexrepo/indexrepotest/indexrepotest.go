// Package indexrepotest serves the files of a classic HTTP repository
// (index.yaml and archives) over real HTTP on 127.0.0.1 for tests, and
// counts the GETs of each path.
package indexrepotest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Server serves files by URL path: what Put stored, 404 for anything
// else. It is closed when the test ends.
type Server struct {
	*httptest.Server

	mu    sync.Mutex
	files map[string][]byte
	hits  map[string]int
}

// New starts an empty Server.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{files: map[string][]byte{}, hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		b, ok := s.files[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

// Put serves b at path p ("/stable/index.yaml").
func (s *Server) Put(p string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[p] = b
}

// Count returns how many requests path p has had.
func (s *Server) Count(p string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[p]
}
