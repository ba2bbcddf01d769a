package trust_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/trust"
)

// TestProvenanceConfig: a rule's provenance section as ferry.yaml writes
// it; what does not hold is bad input (exit 2). The check itself is
// helm's TestProvenance (the format registers it).
func TestProvenanceConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "acme.gpg"), []byte("keyring"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeKey(t, dir, "a.pub")
	tests := []struct {
		name, yaml string
		err        string
	}{
		{name: "keyring alone", yaml: "- match: https://charts.acme.example/\n  provenance: {keyring: acme.gpg}\n"},
		{name: "with keys", yaml: "- match: ghcr.io/acme/\n  keys: [a.pub]\n  required: true\n  provenance: {keyring: acme.gpg}\n"},
		{name: "no keyring", yaml: "- match: a/\n  provenance: {}\n", err: "keyring is required"},
		{name: "missing keyring", yaml: "- match: a/\n  provenance: {keyring: none.gpg}\n", err: "none.gpg"},
		{name: "required without keys", yaml: "- match: a/\n  required: true\n  provenance: {keyring: acme.gpg}\n", err: "give keys or keyless"},
		{name: "unknown field", yaml: "- match: a/\n  provenance: {keys: acme.gpg}\n", err: "field keys not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cfg trust.Config
			err := yaml.Unmarshal([]byte(tc.yaml), &cfg)
			var p *trust.Policy
			if err == nil {
				p, err = trust.New(&cfg, trust.Options{Dir: dir})
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if !strings.Contains(tc.err, "not found") && exitcode.Of(err) != exitcode.Usage {
					t.Errorf("err = %v (exit %d), want exit 2", err, exitcode.Of(err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, "acme.gpg"); p.Rules[0].Keyring != want {
				t.Errorf("keyring %q, want %q", p.Rules[0].Keyring, want)
			}
		})
	}
}
