package relocate_test

import (
	"strings"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/relocate"
)

// TestParseMappingMessages: a bad --to is exit 2 with a message about the
// user's value, never about a name ferry made up to check it.
func TestParseMappingMessages(t *testing.T) {
	tests := []struct {
		to      string
		want    string // empty: valid
		mapping string
	}{
		{to: "registry.internal/mirror/", mapping: "registry.internal/mirror"},
		{to: "127.0.0.1:5000", mapping: "127.0.0.1:5000"},
		{to: "registry.internal/repo:tag", want: `mirror "registry.internal/repo:tag": a mirror is HOST[/PREFIX], where repositories land, not a reference with a tag or digest (":tag")`},
		{to: "registry.internal/repo@sha256:abc", want: `not a reference with a tag or digest ("@sha256:abc")`},
		{to: "127.0.0.1:5000/Mirror", want: `mirror "127.0.0.1:5000/Mirror": "Mirror" is not a valid repository prefix`},
		{to: "registry.internal/a//b", want: `"a//b" is not a valid repository prefix`},
		{to: "https://registry.internal/m", want: "without a URL scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.to, func(t *testing.T) {
			m, err := relocate.ParseMapping(tt.to)
			if tt.want == "" {
				if err != nil || m.String() != tt.mapping {
					t.Fatalf("ParseMapping(%q) = %q, %v; want %q", tt.to, m.String(), err, tt.mapping)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseMapping(%q) = %q, want an error", tt.to, m.String())
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "/x") {
				t.Errorf("error %q names the internal placeholder /x", err)
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Errorf("exit code %d, want %d", exitcode.Of(err), exitcode.Usage)
			}
		})
	}
}
