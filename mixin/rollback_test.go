package mixin

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/errkind"
)

// TestChooseRollback: a mixin version whose feed entry is an older release
// (download links naming another version, a lower version's links, or an
// <updated> before the lower patch of its minor line) is refused with a
// *ReleaseRollbackError of kind errkind.Mismatch naming both versions,
// whether a range or the exact version chose it; honest entries, a patch
// of an older line published later, and non-semver versions pass. The
// real Porter feed passes.
func TestChooseRollback(t *testing.T) {
	const base = "https://cdn.example/mixins/"
	links := func(version string) []string {
		return []string{base + version + "/exec-linux-amd64", base + version + "/exec-darwin-arm64"}
	}
	tests := []struct {
		name       string
		entries    []string
		constraint string
		want       string   // the version chosen, when it passes
		errs       []string // what the refusal names
	}{
		{name: "honest", constraint: "1.x", want: "v1.1.0", entries: []string{
			entry("exec", "v1.0.0", "2025-01-01T00:00:00Z", links("v1.0.0")...),
			entry("exec", "v1.1.0", "2025-02-01T00:00:00Z", links("v1.1.0")...),
		}},
		{name: "links naming another version", constraint: "1.x", entries: []string{
			entry("exec", "v1.0.0", "2025-01-01T00:00:00Z", links("v1.0.0")...),
			entry("exec", "v1.1.0", "2025-02-01T00:00:00Z", base+"v1.0.1/exec-linux-amd64"),
		}, errs: []string{"mixin exec version v1.1.0 is an older release (v1.0.1)", "names version v1.0.1"}},
		{name: "a lower version's links, chosen exactly", constraint: "v1.1.0", entries: []string{
			entry("exec", "v1.0.0", "2025-01-01T00:00:00Z", "https://other.example/exec-linux-amd64"),
			entry("exec", "v1.1.0", "2025-02-01T00:00:00Z", "https://other.example/exec-linux-amd64"),
		}, errs: []string{"older release (v1.0.0)", "download links are version v1.0.0's"}},
		{name: "updated before the lower patch", constraint: "~1.2", entries: []string{
			entry("exec", "v1.2.0", "2025-03-01T00:00:00Z", links("v1.2.0")...),
			entry("exec", "v1.2.1", "2025-01-01T00:00:00Z", links("v1.2.1")...),
		}, errs: []string{"older release (v1.2.0)", "updated 2025-01-01T00:00:00Z, before version v1.2.0, updated 2025-03-01T00:00:00Z"}},
		{name: "a patch of an older line published later", constraint: "1.x", want: "v1.1.0", entries: []string{
			entry("exec", "v1.0.5", "2025-06-01T00:00:00Z", links("v1.0.5")...),
			entry("exec", "v1.1.0", "2025-02-01T00:00:00Z", links("v1.1.0")...),
		}},
		{name: "not a semantic version", constraint: "canary", want: "canary", entries: []string{
			entry("exec", "v1.0.0", "2025-01-01T00:00:00Z", links("v1.0.0")...),
			entry("exec", "canary", "2024-01-01T00:00:00Z", links("v1.0.0")...),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFeed(strings.NewReader(feedXML(tt.entries...)), base+"atom.xml")
			if err != nil {
				t.Fatal(err)
			}
			v, err := f.Choose("exec", tt.constraint)
			if tt.errs == nil {
				if err != nil || v.Version != tt.want {
					t.Fatalf("Choose = %s, %v; want %s", v.Version, err, tt.want)
				}
				return
			}
			var re *ReleaseRollbackError
			if !errors.As(err, &re) || !errors.Is(err, errkind.Mismatch) {
				t.Fatalf("Choose = %s, %v; want a rollback", v.Version, err)
			}
			for _, w := range tt.errs {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	rf, err := os.Open(realworldFeed)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	feed, err := ParseFeed(rf, "https://cdn.porter.sh/mixins/atom.xml")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range feed.Names() {
		for _, c := range []string{"", "canary", "v1.2.3"} {
			if _, err := feed.Choose(name, c); errors.Is(err, errkind.Mismatch) {
				t.Errorf("the real feed: %s %q: %v", name, c, err)
			}
		}
	}
}
