package client_test

import (
	"path/filepath"
	"testing"

	"github.com/ferryhq/ferry/client"
)

// TestPlainHTTPOnlyWhenNamed: a host that is not loopback is spoken to
// over HTTPS unless --plain-http names it. Deciding makes no connection,
// so the test sends nothing to any address.
func TestPlainHTTPOnlyWhenNamed(t *testing.T) {
	c, err := client.New(client.Options{
		RegistryConfig: filepath.Join(t.TempDir(), "config.json"),
		PlainHTTP:      []string{"registry.internal:5000"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		repo  string
		plain bool
	}{
		{"registry.internal:5000/acme/app", true},
		{"REGISTRY.internal:5000/acme/app", true},
		{"registry.internal:5001/acme/app", false},
		{"registry.internal/acme/app", false},
		{"ghcr.io/acme/app", false},
	}
	for _, tt := range tests {
		repo, err := c.Repository(tt.repo)
		if err != nil {
			t.Fatal(err)
		}
		if repo.PlainHTTP != tt.plain {
			t.Errorf("%s: plain HTTP %v, want %v", tt.repo, repo.PlainHTTP, tt.plain)
		}
	}
}
