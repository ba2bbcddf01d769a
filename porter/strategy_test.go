package porter

import (
	"errors"
	"strings"
	"testing"
)

func TestParseVersionStrategy(t *testing.T) {
	tests := []struct {
		in      string
		want    VersionStrategy
		wantErr string
	}{
		{"", StrategyExact, ""},
		{"exact", StrategyExact, ""},
		{"max-patch", StrategyMaxPatch, ""},
		{"max-minor", StrategyMaxMinor, ""},
		{"min", StrategyMin, ""},
		{"highest", StrategyHighest, ""},
		{"Max-Patch", "", `invalid dependency version strategy "Max-Patch": allowed values are exact, max-patch, max-minor, min, highest`},
		{"latest", "", "allowed values are exact, max-patch, max-minor, min, highest"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseVersionStrategy(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// pickTags are the repository's tags in TestPick.
var pickTags = []string{"v0.9.0", "v1.0.0", "v1.0.1", "v1.0.2", "v1.1.0", "v1.1.3", "v1.2.0-rc.1", "v2.0.0"}

// TestPick checks each strategy's pick. An expectation starting with "!" is
// an error containing the rest. The expectations follow getporter/porter
// pkg/cnab/extended_bundle.go, as named on each case: ResolveVersion (and
// ResolveVersionv2, the same rules), strategyConstraintFromRef and
// computeStrategyConstraint (max-patch, max-minor narrowing) and
// filterAndSelectTag (prerelease filter, range check, ascending for min,
// descending otherwise); "highest" follows PEP003's resolution precedence
// (getporter/proposals pep/003-advanced-dependencies.md).
func TestPick(t *testing.T) {
	type want map[VersionStrategy]string
	tests := []struct {
		name        string
		refTag      string
		constraint  string
		prereleases bool
		want        want
	}{
		{
			// ResolveVersion: no range and a tag: the reference as is.
			name: "no range, tag in reference", refTag: "v1.0.1",
			want: want{StrategyExact: "v1.0.1", StrategyMaxPatch: "v1.0.1", StrategyMaxMinor: "v1.0.1", StrategyMin: "v1.0.1", StrategyHighest: "v1.0.1"},
		},
		{
			// ResolveVersion -> determineDefaultTag -> filterAndSelectTag
			// with no constraint: sorted by strategy even so, so min
			// takes the lowest tag; prereleases dropped.
			name: "no range, no tag",
			want: want{StrategyExact: "v2.0.0", StrategyMaxPatch: "v2.0.0", StrategyMaxMinor: "v2.0.0", StrategyMin: "v0.9.0", StrategyHighest: "v2.0.0"},
		},
		{
			// Range: exact keeps the reference; max-patch narrows to
			// 1.0.x, max-minor to 1.x (computeStrategyConstraint); min is
			// the lowest in range; highest the highest.
			name: "range, tag in reference", refTag: "v1.0.1", constraint: ">=1.0.0, <2.0.0",
			want: want{StrategyExact: "v1.0.1", StrategyMaxPatch: "v1.0.2", StrategyMaxMinor: "v1.1.3", StrategyMin: "v1.0.0", StrategyHighest: "v1.1.3"},
		},
		{
			// exact does not check the reference's tag against the range
			// (ResolveVersion returns the reference when it has a tag);
			// the narrowing of max-patch and max-minor to 0.9.x and 0.x
			// leaves nothing in ^1.0.0, and Porter does not fall back.
			name: "range excludes the reference's tag", refTag: "v0.9.0", constraint: "^1.0.0",
			want: want{StrategyExact: "v0.9.0", StrategyMaxPatch: "!no tag satisfies", StrategyMaxMinor: "!no tag satisfies", StrategyMin: "v1.0.0", StrategyHighest: "v1.1.3"},
		},
		{
			// prereleases lets filterAndSelectTag keep v1.2.0-rc.1, but
			// the Masterminds range ^1.0.0 names no prerelease and rejects
			// it; highest includes prereleases when asked (PEP003, CNAB
			// dependencies `prereleases`).
			name: "prereleases allowed, range names none", refTag: "v1.0.1", constraint: "^1.0.0", prereleases: true,
			want: want{StrategyExact: "v1.0.1", StrategyMaxPatch: "v1.0.2", StrategyMaxMinor: "v1.1.3", StrategyMin: "v1.0.0", StrategyHighest: "v1.2.0-rc.1"},
		},
		{
			// Without prereleases, filterAndSelectTag drops the
			// prerelease before the range is checked, even one the range
			// names; highest takes it ("use vX.Y.Z-0", PEP003).
			name: "range names a prerelease, prereleases off", refTag: "v1.1.0", constraint: ">=1.2.0-0, <2.0.0",
			want: want{StrategyExact: "v1.1.0", StrategyMaxPatch: "!no tag satisfies", StrategyMaxMinor: "!no tag satisfies", StrategyMin: "!no tag satisfies", StrategyHighest: "v1.2.0-rc.1"},
		},
		{
			// With prereleases, the range admits the prerelease; max-minor's
			// narrowing (>= 1.0.0, < 2.0.0) names none and rejects it.
			name: "range names a prerelease, prereleases on", refTag: "v1.1.0", constraint: ">=1.2.0-0, <2.0.0", prereleases: true,
			want: want{StrategyExact: "v1.1.0", StrategyMaxPatch: "!no tag satisfies", StrategyMaxMinor: "!narrowed to >= 1.0.0, < 2.0.0", StrategyMin: "v1.2.0-rc.1", StrategyHighest: "v1.2.0-rc.1"},
		},
		{
			// Nothing in range: Porter errors; PEP003's precedence 4
			// falls back to the reference (the default implementation).
			name: "nothing in range", refTag: "v1.0.1", constraint: ">=3.0.0",
			want: want{StrategyExact: "v1.0.1", StrategyMaxPatch: "!no tag satisfies \">=3.0.0\"", StrategyMaxMinor: "!no tag satisfies", StrategyMin: "!no tag satisfies", StrategyHighest: "v1.0.1"},
		},
		{
			// exact refuses a range without a tag (ResolveVersion's
			// "specifies a version range but the version strategy is");
			// without a tag there is no narrowing (strategyConstraintFromRef).
			name: "range, no tag", constraint: "1.x",
			want: want{StrategyExact: "!needs a tag in the reference", StrategyMaxPatch: "v1.1.3", StrategyMaxMinor: "v1.1.3", StrategyMin: "v1.0.0", StrategyHighest: "v1.1.3"},
		},
		{
			name: "range, no tag, nothing in range", constraint: ">=3",
			want: want{StrategyExact: "!needs a tag", StrategyMaxPatch: "!no tag satisfies", StrategyMaxMinor: "!no tag satisfies", StrategyMin: "!no tag satisfies", StrategyHighest: "!no tag satisfies"},
		},
		{
			// A tag that is not a version does not narrow
			// (strategyConstraintFromRef: !ref.HasVersion()).
			name: "tag is not a version", refTag: "latest", constraint: "~1.0",
			want: want{StrategyExact: "latest", StrategyMaxPatch: "v1.0.2", StrategyMaxMinor: "v1.0.2", StrategyMin: "v1.0.0", StrategyHighest: "v1.0.2"},
		},
		{
			// Porter v1 ranges, joined with " || " (ResolveVersion).
			name: "v1 ranges", refTag: "v1.0.1", constraint: "0.9.x || 2.x",
			want: want{StrategyExact: "v1.0.1", StrategyMaxPatch: "!no tag satisfies", StrategyMaxMinor: "!no tag satisfies", StrategyMin: "v0.9.0", StrategyHighest: "v2.0.0"},
		},
		{
			// filterAndSelectTag's "invalid version constraint"; exact
			// never parses the range.
			name: "invalid range", refTag: "v1.0.1", constraint: "not a range",
			want: want{StrategyExact: "v1.0.1", StrategyMaxPatch: "!invalid version constraint", StrategyMaxMinor: "!invalid version constraint", StrategyMin: "!invalid version constraint", StrategyHighest: "!invalid version constraint"},
		},
	}
	for _, tt := range tests {
		for _, s := range strategies {
			t.Run(tt.name+"/"+string(s), func(t *testing.T) {
				w, ok := tt.want[s]
				if !ok {
					t.Fatalf("no expectation for %s", s)
				}
				got, err := s.Pick(tt.refTag, tt.constraint, tt.prereleases, pickTags)
				if strings.HasPrefix(w, "!") {
					if err == nil || !strings.Contains(err.Error(), w[1:]) {
						t.Fatalf("= %q, %v; want an error containing %q", got, err, w[1:])
					}
					return
				}
				if err != nil || got != w {
					t.Errorf("= %q, %v; want %q", got, err, w)
				}
			})
		}
	}
}

func TestPickTags(t *testing.T) {
	tests := []struct {
		name       string
		strategy   VersionStrategy
		refTag     string
		constraint string
		tags       []string
		want       string
		wantErr    string
	}{
		// filterAndSelectTag: no semver tag, no range: "latest".
		{name: "latest fallback", strategy: StrategyExact, tags: []string{"nightly", "latest"}, want: "latest"},
		{name: "latest fallback, min", strategy: StrategyMin, tags: []string{"latest"}, want: "latest"},
		// With a range, "latest" is never picked.
		{name: "no latest with a range", strategy: StrategyHighest, constraint: "1.x", tags: []string{"latest"}, wantErr: "no tag satisfies \"1.x\" with version strategy highest (tags: latest)"},
		{name: "no tags", strategy: StrategyExact, wantErr: "tags: none"},
		{name: "no version tags", strategy: StrategyExact, tags: []string{"nightly"}, wantErr: "no tag of the repository is a semantic version"},
		// semverFromTag: "_" is "+"; the tag comes back as spelt.
		{name: "build metadata", strategy: StrategyHighest, constraint: "~1.0", tags: []string{"v1.0.0", "v1.0.1_build.7"}, want: "v1.0.1_build.7"},
		// semver.NewVersion reads partial versions and no "v".
		{name: "loose versions", strategy: StrategyMin, constraint: ">=1.1", tags: []string{"1.2.0", "v1.1", "1"}, want: "v1.1"},
		// Equal versions keep the repository's order.
		{name: "equal versions", strategy: StrategyHighest, constraint: "1.x", tags: []string{"1.0.0", "v1.0.0"}, want: "1.0.0"},
		{name: "equal versions, other order", strategy: StrategyHighest, constraint: "1.x", tags: []string{"v1.0.0", "1.0.0", "0.9.0"}, want: "v1.0.0"},
		{name: "equal versions, min", strategy: StrategyMin, constraint: "1.x", tags: []string{"1.1.0", "v1.0.0", "1.0.0"}, want: "v1.0.0"},
		{name: "equal highest after a lower one", strategy: StrategyHighest, constraint: "1.x", tags: []string{"1.0.0", "1.2.0", "v1.2.0"}, want: "1.2.0"},
		{name: "empty strategy is exact", strategy: "", constraint: "1.x", wantErr: `version strategy "exact" needs a tag`},
		{name: "unknown strategy", strategy: "newest", refTag: "v1", wantErr: `invalid dependency version strategy "newest"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.strategy.Pick(tt.refTag, tt.constraint, false, tt.tags)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("= %q, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestPickErrorWrapsNoTag(t *testing.T) {
	_, err := StrategyMin.Pick("", ">=9", false, pickTags)
	if !errors.Is(err, errNoTag) {
		t.Fatalf("err = %v, want it to wrap errNoTag", err)
	}
	if !strings.Contains(err.Error(), strings.Join(pickTags, " ")) {
		t.Errorf("err = %v, want it to list the tags", err)
	}
}
