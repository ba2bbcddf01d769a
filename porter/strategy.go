package porter

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/Masterminds/semver/v3"
)

// VersionStrategy is how a dependency's version is chosen when the
// dependency gives a version range: Porter's `dependencies.version-strategy`
// setting (Porter v1.6.0, getporter/porter pkg/config/datastore.go, the
// DependencyVersionStrategy* constants, applied by pkg/cnab/extended_bundle.go
// ExtendedBundle.ResolveVersion and ResolveVersionv2), plus ferry's
// StrategyHighest, PEP003's own precedence.
type VersionStrategy string

// The version strategies. The first four are Porter's; StrategyHighest is
// PEP003's "Dependency Resolution" precedence (getporter/proposals
// pep/003-advanced-dependencies.md), which Porter does not implement.
const (
	// StrategyExact uses the tag written in the dependency's reference and
	// ignores the range; a range without a tag is an error. Porter's
	// default (pkg/config/config.go Config.GetDependenciesVersionStrategy).
	StrategyExact VersionStrategy = "exact"
	// StrategyMaxPatch picks the highest tag in range with the same
	// major.minor as the reference's tag.
	StrategyMaxPatch VersionStrategy = "max-patch"
	// StrategyMaxMinor picks the highest tag in range with the same major
	// as the reference's tag.
	StrategyMaxMinor VersionStrategy = "max-minor"
	// StrategyMin picks the lowest tag in range.
	StrategyMin VersionStrategy = "min"
	// StrategyHighest picks the highest tag in range, and falls back to the
	// reference's own tag when no tag is in range (PEP003 precedence 3
	// then 4).
	StrategyHighest VersionStrategy = "highest"
)

// strategies lists the valid strategies in the order errors name them.
var strategies = []VersionStrategy{StrategyExact, StrategyMaxPatch, StrategyMaxMinor, StrategyMin, StrategyHighest}

// ParseVersionStrategy reads a strategy name: "" is StrategyExact (Porter's
// default); an unknown name is an error listing the valid ones, as Porter's
// option validation does (pkg/porter/lifecycle.go
// BundleExecutionOptions.Validate, pkg/porter/explain.go
// ExplainOpts.Validate).
func ParseVersionStrategy(s string) (VersionStrategy, error) {
	if s == "" {
		return StrategyExact, nil
	}
	for _, v := range strategies {
		if string(v) == s {
			return v, nil
		}
	}
	names := make([]string, len(strategies))
	for i, v := range strategies {
		names[i] = string(v)
	}
	return "", fmt.Errorf("invalid dependency version strategy %q: allowed values are %s", s, strings.Join(names, ", "))
}

// errNoTag is wrapped by Pick's errors when no tag can be chosen.
var errNoTag = errors.New("no tag satisfies the dependency")

// Pick chooses the tag of a dependency's repository to use. refTag is the
// tag written in the dependency's reference (may be empty), constraint a
// Masterminds semver v3 range (may be empty; Porter v1 ranges joined with
// " || "), prereleases Porter v1's `prereleases` (v2 has none), tags the
// repository's tags. A tag is read as Porter does (pkg/cnab/oci_reference.go
// semverFromTag): semver.NewVersion after replacing the first "_" with "+",
// so a "v" prefix and partial versions ("v1.2") are accepted. Pick returns
// the tag as the repository spells it.
//
// The rules follow pkg/cnab/extended_bundle.go (ResolveVersion,
// ResolveVersionv2, strategyConstraintFromRef, computeStrategyConstraint,
// filterAndSelectTag):
//
//   - No range: the reference's tag. Without one, the highest semver tag
//     (the lowest for StrategyMin, as filterAndSelectTag sorts by strategy
//     even then), else "latest" when the repository has it.
//   - A range with StrategyExact: the reference's tag, whether or not it
//     is in range (Porter does not check); an error without one.
//   - A range with another strategy: among the semver tags that satisfy
//     the range, StrategyMaxPatch and StrategyMaxMinor first narrow to the
//     reference tag's major.minor or major (no narrowing when the
//     reference has no semver tag), then pick the highest; StrategyMin
//     picks the lowest. Nothing in range is an error: Porter does not fall
//     back to the reference's tag.
//   - StrategyHighest (PEP003) picks the highest tag in range and, when
//     none is, falls back to the reference's tag (precedence 4).
//
// Prereleases, for Porter's strategies as filterAndSelectTag does: a
// prerelease tag is dropped unless prereleases is true, and the range must
// then also admit it (Masterminds semver admits a prerelease only when the
// range names one, and max-patch/max-minor's narrowing never does). For
// StrategyHighest, as PEP003 and the CNAB v1 dependency spec say: a
// prerelease is a candidate when prereleases is true or the range names a
// prerelease ("use vX.Y.Z-0 to allow prerelease versions").
//
// A range is checked only when a strategy other than exact uses it.
func (s VersionStrategy) Pick(refTag, constraint string, prereleases bool, tags []string) (string, error) {
	if s == "" {
		s = StrategyExact
	}
	if _, err := ParseVersionStrategy(string(s)); err != nil {
		return "", err
	}
	constraint = strings.TrimSpace(constraint)
	if constraint == "" {
		if refTag != "" {
			return refTag, nil
		}
		return s.selectTag(tags, prereleases, nil, nil, "")
	}
	if s == StrategyExact {
		if refTag != "" {
			return refTag, nil
		}
		return "", fmt.Errorf("version range %q with version strategy %q needs a tag in the reference; use the max-patch, max-minor, min or highest strategy to resolve ranges: %w", constraint, s, errNoTag)
	}
	c, err := parseConstraint(constraint)
	if err != nil {
		return "", fmt.Errorf("invalid version constraint %q: %w", constraint, err)
	}
	var narrow *semver.Constraints
	var narrowExpr string
	if v, err := tagVersion(refTag); err == nil && refTag != "" {
		// strategyConstraintFromRef and computeStrategyConstraint.
		switch s {
		case StrategyMaxPatch:
			narrowExpr = fmt.Sprintf(">= %d.%d.0, < %d.%d.0", v.Major(), v.Minor(), v.Major(), v.Minor()+1)
		case StrategyMaxMinor:
			narrowExpr = fmt.Sprintf(">= %d.0.0, < %d.0.0", v.Major(), v.Major()+1)
		}
		if narrowExpr != "" {
			narrow, err = parseConstraint(narrowExpr)
			if err != nil {
				return "", fmt.Errorf("version strategy %s: %w", s, err)
			}
		}
	}
	if s == StrategyHighest {
		c.IncludePrerelease = prereleases
		prereleases = true // the range alone decides
	}
	tag, err := s.selectTag(tags, prereleases, c, narrow, constraint)
	if err != nil && s == StrategyHighest && refTag != "" {
		return refTag, nil
	}
	if err != nil && narrowExpr != "" {
		return "", fmt.Errorf("%w (narrowed to %s by version strategy %s and the reference's tag %s)", err, narrowExpr, s, refTag)
	}
	return tag, err
}

// tagVersion reads a tag as a semantic version the way Porter does
// (pkg/cnab/oci_reference.go semverFromTag). A semver.Version is never
// changed after parsing (its methods return new values), so one is shared.
func tagVersion(tag string) (*semver.Version, error) {
	return tagVersions.get(tag, func() (*semver.Version, error) {
		return semver.NewVersion(strings.Replace(tag, "_", "+", 1))
	})
}

// parseConstraint is semver.NewConstraint, memoised as tagVersion is
// (every edge of a closure may carry the same range). Each call gets its
// own copy: Pick sets IncludePrerelease on it.
func parseConstraint(expr string) (*semver.Constraints, error) {
	c, err := constraints.get(expr, func() (*semver.Constraints, error) { return semver.NewConstraint(expr) })
	if err != nil {
		return nil, err
	}
	cp := *c
	return &cp, nil
}

// Parsing is memoised for the process. Resolving a closure chooses a
// repository's version once per edge into it, each time over the same
// tag list, and Masterminds' parser runs a regular expression: on a
// closure of 1,000 bundles of 30 tags (W2 in BENCHMARKS.md) parsing was a
// seventh of the resolver's CPU.
var (
	tagVersions memo[*semver.Version]
	constraints memo[*semver.Constraints]
)

// memo remembers the results of parsing strings, up to maxMemo of them.
type memo[T any] struct {
	m    sync.Map // string -> memoResult[T]
	held atomic.Int64
}

// maxMemo caps the strings a memo holds.
const maxMemo = 1 << 16

type memoResult[T any] struct {
	v   T
	err error
}

// get returns parse's result for key, calling it the first time.
func (m *memo[T]) get(key string, parse func() (T, error)) (T, error) {
	if r, ok := m.m.Load(key); ok {
		r := r.(memoResult[T])
		return r.v, r.err
	}
	v, err := parse()
	if m.held.Add(1) <= maxMemo {
		m.m.Store(key, memoResult[T]{v, err})
	}
	return v, err
}

// selectTag is Porter's filterAndSelectTag (pkg/cnab/extended_bundle.go):
// keep the semver tags that pass the prerelease filter, c and narrow, and
// return the highest (the lowest for StrategyMin); with no c and no such
// tag, "latest" when the repository has it. Equal versions ("1.0.0",
// "v1.0.0") keep the order of tags.
func (s VersionStrategy) selectTag(tags []string, prereleases bool, c, narrow *semver.Constraints, expr string) (string, error) {
	var best string
	var bestV *semver.Version
	hasLatest := false
	for _, t := range tags {
		if t == "latest" {
			hasLatest = true
			continue
		}
		v, err := tagVersion(t)
		if err != nil {
			continue
		}
		if !prereleases && v.Prerelease() != "" {
			continue
		}
		if c != nil && !c.Check(v) {
			continue
		}
		if narrow != nil && !narrow.Check(v) {
			continue
		}
		// Only a strictly higher (lower) version replaces the one kept, so
		// the first of equal versions wins, as Porter's stable sort keeps
		// it first; a scan, not a sort, as the highest is all it needs.
		if bestV == nil || (s == StrategyMin && v.LessThan(bestV)) || (s != StrategyMin && v.GreaterThan(bestV)) {
			best, bestV = t, v
		}
	}
	if bestV == nil {
		if hasLatest && c == nil {
			return "latest", nil
		}
		if c == nil {
			return "", fmt.Errorf("the reference has no tag and no tag of the repository is a semantic version or \"latest\" (tags: %s): %w", listTags(tags), errNoTag)
		}
		return "", fmt.Errorf("no tag satisfies %q with version strategy %s (tags: %s): %w", expr, s, listTags(tags), errNoTag)
	}
	return best, nil
}

// maxListedTags caps how many tags an error lists.
const maxListedTags = 50

// listTags lists tags for an error message.
func listTags(tags []string) string {
	if len(tags) == 0 {
		return "none"
	}
	if len(tags) > maxListedTags {
		return strings.Join(tags[:maxListedTags], " ") + fmt.Sprintf(" … and %d more", len(tags)-maxListedTags)
	}
	return strings.Join(tags, " ")
}
