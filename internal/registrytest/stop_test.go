//go:build unix

package registrytest_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"syscall"
	"testing"

	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestStopHoldsThePort: a stopped registry's address refuses connections
// and cannot be taken by another listener for the rest of the test, both
// when it served nothing and when a client still held a kept-alive
// connection to it (the server closes that one first).
func TestStopHoldsThePort(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve bool
	}{
		{"unused", false},
		{"after serving, a connection kept alive", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := registrytest.New(t)
			if tc.serve {
				tr := &http.Transport{}
				defer tr.CloseIdleConnections()
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://"+reg.Host+"/v2/", nil)
				resp, err := (&http.Client{Transport: tr}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close() // the connection stays open, idle
			}
			reg.Stop()
			if ln, err := net.Listen("tcp", reg.Host); err == nil {
				ln.Close()
				t.Fatalf("another listener took the stopped registry's address %s", reg.Host)
			}
			_, err := net.Dial("tcp", reg.Host)
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Fatalf("dialling the stopped registry: %v, want connection refused", err)
			}
		})
	}
}
