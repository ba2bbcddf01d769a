package client_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferryhq/ferry/client"
)

// silent accepts connections on 127.0.0.1 and never answers.
func silent(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// TestTimeouts: a registry that accepts the connection and never answers
// makes Resolve fail with an error naming the host and "timeout", instead
// of hanging.
func TestTimeouts(t *testing.T) {
	tests := []struct {
		name    string
		plain   bool
		waiting string
	}{
		{name: "plain HTTP, no response headers", plain: true, waiting: "response headers"},
		{name: "HTTPS, no TLS handshake", waiting: "TLS handshake"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := silent(t)
			o := client.Options{
				RegistryConfig:        filepath.Join(t.TempDir(), "config.json"),
				Retry:                 client.RetryPolicy{Attempts: 2, Backoff: time.Millisecond},
				TLSHandshakeTimeout:   300 * time.Millisecond,
				ResponseHeaderTimeout: 300 * time.Millisecond,
			}
			if tt.plain {
				o.PlainHTTP = []string{host}
			}
			c, err := client.New(o)
			if err != nil {
				t.Fatal(err)
			}
			repo, err := c.Repository(host + "/a/b")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err = repo.Resolve(ctx, "v1")
			if err == nil {
				t.Fatal("resolve against a silent registry succeeded")
			}
			if ctx.Err() != nil {
				t.Fatalf("resolve returned only when the test's own deadline expired: %v", err)
			}
			for _, want := range []string{host, "timeout", tt.waiting} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			var te *client.TimeoutError
			if !errors.As(err, &te) || te.Host != host {
				t.Errorf("error %q is not a *client.TimeoutError for %s", err, host)
			}
			if !client.IsTransient(err) {
				t.Errorf("timeout %q is not transient", err)
			}
		})
	}
}
