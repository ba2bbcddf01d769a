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
