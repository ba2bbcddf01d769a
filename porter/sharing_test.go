package porter

import (
	"strings"
	"testing"

	"github.com/ferryhq/ferry/resolve"
)

// TestPickGroupJoint pins the joint resolution of a sharing group: every
// request of one group on one repository chooses among the tags that
// satisfy every range of the group, PEP003's one shared installation
// (getporter/proposals pep/003-advanced-dependencies.md, "Dependency
// Resolution", "sharing"); Porter only records the group
// (getporter/porter pkg/cnab/extended_bundle.go ResolveSharedDeps). An
// expectation starting with "!" is an error containing the rest.
func TestPickGroupJoint(t *testing.T) {
	tags := []string{"v5.6.0", "v5.7.1", "v5.7.3", "v5.8.0", "v6.0.0", "v6.1.0-rc.1"}
	req := func(from, tag, constraint, group string) resolve.Request {
		return resolve.Request{From: from, Tag: tag, Constraint: constraint, Group: group}
	}
	tests := []struct {
		name     string
		strategy VersionStrategy
		reqs     []resolve.Request
		want     string
	}{
		{"highest: 5.7.x and 5.x meet at v5.7.3", StrategyHighest, []resolve.Request{req("a", "v5.7.1", "5.7.x", "db"), req("b", "v5.6.0", "5.x", "db")}, "v5.7.3"},
		{"highest: one range, one bare reference", StrategyHighest, []resolve.Request{req("a", "v5.7.1", "5.7.x", "db"), req("b", "v5.7.3", "", "db")}, "v5.7.3"},
		{"highest: no common tag falls back to the agreeing references", StrategyHighest, []resolve.Request{req("a", "v5.7.1", "5.7.x", "db"), req("b", "v5.7.1", ">=6.0.0", "db")}, "v5.7.1"},
		{"highest: no common tag, references disagree", StrategyHighest, []resolve.Request{req("a", "v5.7.1", "5.7.x", "db"), req("b", "v6.0.0", ">=6.0.0", "db")}, `!no tag satisfies every range of the group ("5.7.x" by a, ">=6.0.0" by b`},
		{"highest: no common tag, a reference without a tag", StrategyHighest, []resolve.Request{req("a", "", "5.7.x", "db"), req("b", "v6.0.0", ">=6.0.0", "db")}, `!no tag satisfies every range of the group ("5.7.x" by a, ">=6.0.0" by b`},
		{"min: the lowest of the intersection", StrategyMin, []resolve.Request{req("a", "v5.7.1", ">=5.7.0", "db"), req("b", "v5.6.0", "5.x", "db")}, "v5.7.1"},
		{"max-minor: narrowed then intersected", StrategyMaxMinor, []resolve.Request{req("a", "v5.7.1", "5.7.x", "db"), req("b", "v5.6.0", "5.x", "db")}, "v5.7.3"},
		{"max-patch: no common tag is an error naming both ranges", StrategyMaxPatch, []resolve.Request{req("a", "v5.7.1", "5.7.x", "db"), req("b", "v6.0.0", "6.x", "db")}, `!no tag satisfies every range of the group ("5.7.x" by a, "6.x" by b`},
		{"exact: ranges are not read, the references must agree", StrategyExact, []resolve.Request{req("a", "v5.7.1", "5.7.x", "db"), req("b", "v5.7.1", "6.x", "db")}, "v5.7.1"},
		{"exact: references disagree", StrategyExact, []resolve.Request{req("a", "v5.7.1", "5.7.x", "db"), req("b", "v5.7.3", "5.x", "db")}, `!version strategy exact chooses v5.7.1 by a; v5.7.3 by b`},
		{"a prerelease range admits the prerelease for all", StrategyHighest, []resolve.Request{req("a", "", ">=6.1.0-0", "db"), req("b", "", "6.x-0", "db")}, "v6.1.0-rc.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pickGroup(tt.strategy, tt.reqs, tags)
			if strings.HasPrefix(tt.want, "!") {
				if err == nil || !strings.Contains(err.Error(), tt.want[1:]) {
					t.Fatalf("= %q, %v; want an error containing %q", got, err, tt.want[1:])
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestTagOutside pins when version strategy exact warns: Porter's
// ResolveVersion and ResolveVersionv2 (getporter/porter
// pkg/cnab/extended_bundle.go) return the reference's tag under
// DependencyVersionStrategyExact before looking at the range, so a tag
// the range refuses is installed silently; ferry locks it too and warns.
// The range is read as the other strategies read it (Masterminds semver,
// the tag through semverFromTag).
func TestTagOutside(t *testing.T) {
	tests := []struct {
		tag, constraint string
		prereleases     bool
		want            bool
	}{
		{"v5.6.0", "5.7.x", false, true},
		{"v5.7.1", "5.7.x", false, false},
		{"v5.7.1", "5.6.x || 5.7.x", false, false},
		{"v8.0.0", ">=5.0.0, <6.0.0", false, true},
		{"latest", "5.x", false, true},             // no semantic version: no range holds it
		{"v6.0.0-rc.1", "6.x", false, true},        // a prerelease the range does not name
		{"v6.0.0-rc.1", ">=6.0.0-0", false, false}, // the range names one
		{"v5.6.0", "", false, false},               // no range: nothing to be outside
		{"", "5.7.x", false, false},                // no tag: exact fails instead
		{"v5.6.0", "sha256:" + strings.Repeat("a", 64), false, false},
		{"v5.6.0", "not a range", false, false}, // reported where it is read
	}
	for _, tt := range tests {
		t.Run(tt.tag+" "+tt.constraint, func(t *testing.T) {
			if got := tagOutside(resolve.Request{Tag: tt.tag, Constraint: tt.constraint, Prereleases: tt.prereleases}); got != tt.want {
				t.Errorf("= %v, want %v", got, tt.want)
			}
		})
	}
	// Only a request of the graph is reported, once, naming the root.
	var o outsideRange
	o.note([]resolve.Request{{From: "root r.example/db:v5.6.0", Tag: "v5.6.0", Constraint: "5.7.x"}, {From: "root r.example/db:v5.7.1", Tag: "v5.7.1", Constraint: "5.7.x"}})
	o.note([]resolve.Request{{From: "r.example/gone:v1", Tag: "v5.6.0", Constraint: "5.7.x"}})
	o.note([]resolve.Request{{From: "root r.example/db:v5.6.0", Tag: "v5.6.0", Constraint: "5.7.x"}})
	w := o.warnings(&resolve.Graph{Packages: map[string]*resolve.Package{}})
	if len(w) != 1 || !strings.HasPrefix(w[0], `root r.example/db:v5.6.0: tag v5.6.0 is outside its declared range "5.7.x"; version strategy exact`) {
		t.Errorf("warnings = %q", w)
	}
}
