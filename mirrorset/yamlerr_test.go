package mirrorset_test

import (
	"strings"
	"testing"

	"github.com/ferryhq/ferry/mirrorset"
)

// TestParseErrorsInUserTerms: a ferry.yaml error names the line and the
// key as the user wrote them, with the keys that place takes, and never a
// Go type.
func TestParseErrorsInUserTerms(t *testing.T) {
	const head = "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n"
	tests := []struct {
		name string
		body string
		want string
	}{
		{"unknown key of a package", "packages:\n  - reff: a.io/x:v1\n",
			`line 4: unknown key "reff" in an entry of packages (known keys: path, ref, version)`},
		{"unknown key of mirror", "packages:\n  - ref: a.io/x:v1\nmirror:\n  too: b.io/m\n",
			`line 6: unknown key "too" in mirror (known keys: to)`},
		{"unknown key of a replace", "packages:\n  - ref: a.io/x:v1\nreplace:\n  - from: a.io/x\n    into: b.io/x\n",
			`line 7: unknown key "into" in an entry of replace (known keys: from, to)`},
		{"unknown key of a use entry", "packages:\n  - ref: a.io/x:v1\nuse:\n  db: {ref: a.io/db:v1, forse: true}\n",
			`line 6: unknown key "forse" in an entry of use (known keys: force, ref)`},
		{"a string for a list", "packages: a.io/x:v1\n",
			"line 3: got a string (a.io/x:v1) for packages, want a list"},
		{"a list for a mapping", "packages:\n  - ref: a.io/x:v1\nmirror: [a]\n",
			"line 5: got a list for mirror, want a mapping"},
		{"a list for a string", "packages:\n  - ref: [a]\n",
			"line 4: got a list, want a string"},
		{"unknown key of a trust rule", "packages:\n  - ref: a.io/x:v1\ntrust:\n  - match: a.io/\n    key: k.pub\n",
			`trust: line 7: unknown key "key" in a trust rule (known keys: attestations, keyless, keys, match, provenance, required)`},
		{"unknown key of trust", "packages:\n  - ref: a.io/x:v1\ntrust:\n  trustedroot: r.json\n",
			`trust: line 6: unknown key "trustedroot" in trust (known keys: default, rules, trustedRoot)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mirrorset.Parse([]byte(head + tt.body))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
			for _, goName := range []string{"mirrorset.", "[]", "!!", "not found in type"} {
				if strings.Contains(err.Error(), goName) {
					t.Errorf("error %q names %q, a Go or YAML internal", err, goName)
				}
			}
		})
	}
}
