package client_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/client"
)

// TestPlainHTTPSwitch: --plain-http without a host (client.PlainHTTPAll)
// speaks plain HTTP to every registry, warning once about each one that
// is not loopback; --plain-http=HOST only to that host. Deciding makes no
// connection.
func TestPlainHTTPSwitch(t *testing.T) {
	tests := []struct {
		name      string
		plain     []string
		repos     []string
		wantPlain []bool
		warned    []string // hosts warned about, once each
	}{
		{name: "switch", plain: []string{client.PlainHTTPAll},
			repos:     []string{"registry.example.com/a", "registry.example.com/b", "127.0.0.1:5000/c", "other.example.com/d"},
			wantPlain: []bool{true, true, true, true}, warned: []string{"registry.example.com", "other.example.com"}},
		{name: "one host", plain: []string{"registry.example.com"},
			repos:     []string{"registry.example.com/a", "other.example.com/d"},
			wantPlain: []bool{true, false}},
		{name: "none", repos: []string{"registry.example.com/a"}, wantPlain: []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			c, err := client.New(client.Options{PlainHTTP: tt.plain, RegistryConfig: filepath.Join(t.TempDir(), "config.json"),
				Log: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			for i, name := range tt.repos {
				r, err := c.Repository(name)
				if err != nil {
					t.Fatal(err)
				}
				if r.PlainHTTP != tt.wantPlain[i] {
					t.Errorf("%s: PlainHTTP %v, want %v", name, r.PlainHTTP, tt.wantPlain[i])
				}
			}
			if got := strings.Count(logs.String(), "level=WARN"); got != len(tt.warned) {
				t.Errorf("%d warnings, want %d:\n%s", got, len(tt.warned), logs.String())
			}
			for _, h := range tt.warned {
				if strings.Count(logs.String(), "host="+h) != 1 {
					t.Errorf("want one warning about %s:\n%s", h, logs.String())
				}
			}
			if strings.Contains(logs.String(), "127.0.0.1") {
				t.Errorf("a loopback host was warned about:\n%s", logs.String())
			}
		})
	}
}
