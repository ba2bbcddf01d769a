package porter

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/resolve"
)

// KeyPorter is ferry.yaml's `porter:` section: Porter's resolution
// settings.
const KeyPorter = "porter"

// StrategyEnv names the environment variable giving the version strategy
// when neither ferry.yaml nor --version-strategy does (as Porter reads its
// `dependencies.version-strategy` setting from its config or environment).
const StrategyEnv = "FERRY_VERSION_STRATEGY"

// Settings are ferry.yaml's `porter:` section.
type Settings struct {
	// VersionStrategy chooses a dependency's version within its range:
	// exact (Porter's default), max-patch, max-minor, min or highest.
	VersionStrategy string `yaml:"versionStrategy,omitempty"`
}

// Name returns "porter".
func (Reader) Name() string { return "porter" }

// Kinds lists the package kinds the format reads.
func (Reader) Kinds() []string { return []string{format.KindPorterBundle} }

// CarriesImages reports that a bundle carries images: its invocation and
// component images, in its index (format.ImageCarrier).
func (Reader) CarriesImages() bool { return true }

// Sections lists the ferry.yaml keys the format owns.
func (Reader) Sections() []string { return []string{KeyPorter} }

// CheckSections validates ferry.yaml's `porter:` section.
func (Reader) CheckSections(m *mirrorset.MirrorSet) error {
	_, err := settingsOf(m)
	return err
}

// The version strategy $FERRY_VERSION_STRATEGY gives, when ferry.yaml
// and the flags set none, changes what resolves: it is an input of the
// lock (a lock resolved under another strategy is stale).
func init() {
	mirrorset.RegisterEnvInput(func(m *mirrorset.MirrorSet) (string, string, bool) {
		var s Settings
		if _, err := m.Section(KeyPorter, &s); err != nil || s.VersionStrategy != "" {
			return "", "", false
		}
		v := strings.TrimSpace(os.Getenv(StrategyEnv))
		return StrategyEnv, v, v != ""
	})
}

func settingsOf(m *mirrorset.MirrorSet) (Settings, error) {
	var s Settings
	if _, err := m.Section(KeyPorter, &s); err != nil {
		return s, err
	}
	if s.VersionStrategy == "" {
		s.VersionStrategy = strings.TrimSpace(os.Getenv(StrategyEnv))
	}
	if _, err := ParseVersionStrategy(s.VersionStrategy); err != nil {
		return s, fmt.Errorf("%s.versionStrategy: %w", KeyPorter, err)
	}
	return s, nil
}

// Configure returns the format with ferry.yaml's `porter:` settings.
func (r Reader) Configure(m *mirrorset.MirrorSet) (format.Format, error) {
	s, err := settingsOf(m)
	if err != nil {
		return nil, err
	}
	r.Strategy, _ = ParseVersionStrategy(s.VersionStrategy)
	return r, nil
}

// Policy is Porter's: every dependency is resolved on its own (PEP003
// "Solution: Unshared"; a shared dependency's group must agree), by the
// version strategy.
func (r Reader) Policy() resolve.Policy {
	strategy := r.Strategy
	if strategy == "" {
		strategy = StrategyExact
	}
	return resolve.Policy{
		Name:     string(strategy),
		Unshared: true,
		Pick: func(reqs []resolve.Request, tags []string) (string, error) {
			return pickGroup(strategy, reqs, tags)
		},
	}
}

// pickGroup applies the strategy to each request; the requests of one
// sharing group must choose one version. They are resolved jointly: PEP003
// (getporter/proposals pep/003-advanced-dependencies.md, "Dependency
// Resolution" and "sharing") reuses one installation for every dependency
// of a group, so each request chooses among the tags that satisfy every
// range of the group (the group's constraints intersected), and the
// strategy then picks within that set. `5.7.x` and `5.x` in one group
// both choose v5.7.3 under highest, where each alone would choose its own
// highest. Porter itself records the group and does not resolve it
// (getporter/porter pkg/cnab/extended_bundle.go ResolveSharedDeps).
func pickGroup(s VersionStrategy, reqs []resolve.Request, tags []string) (string, error) {
	// Under exact the ranges are not read (Porter does not check them), so
	// there is nothing to intersect. Under highest, a group whose ranges
	// share no tag falls back to the references' own tags (PEP003
	// precedence 4), which must then agree.
	var jointErr error
	if len(reqs) > 1 && reqs[0].Group != "" && s != StrategyExact && s != "" {
		joint, err := jointTags(reqs, tags)
		switch {
		case err != nil && s == StrategyHighest:
			tags, jointErr = nil, err
		case err != nil:
			return "", err
		default:
			tags = joint
		}
	}
	picks := map[string][]string{}
	var first string
	for _, r := range reqs {
		tag, err := s.Pick(r.Tag, r.Constraint, r.Prereleases, tags)
		if err != nil {
			return "", fmt.Errorf("%s: %w", r.From, err)
		}
		if first == "" {
			first = tag
		}
		picks[tag] = append(picks[tag], r.From)
	}
	if len(picks) <= 1 {
		return first, nil
	}
	if jointErr != nil {
		return "", jointErr
	}
	var parts []string
	for tag, from := range picks {
		parts = append(parts, fmt.Sprintf("%s by %s", tag, strings.Join(from, ", ")))
	}
	sort.Strings(parts)
	group := reqs[0].Group
	return "", fmt.Errorf("the dependencies of sharing group %q must resolve to one version, and version strategy %s chooses %s", group, s, strings.Join(parts, "; "))
}

// jointTags returns the tags that satisfy the range of every request of a
// sharing group that gives one (a request's prereleases setting admits
// prereleases for its own range), in the order of tags; tags unchanged
// when no request gives a range. An empty intersection is an error naming
// each range and who asked for it.
func jointTags(reqs []resolve.Request, tags []string) ([]string, error) {
	type ranged struct {
		c    *semver.Constraints
		expr string
		from string
	}
	var rs []ranged
	for _, r := range reqs {
		expr := strings.TrimSpace(r.Constraint)
		if expr == "" {
			continue
		}
		c, err := parseConstraint(expr)
		if err != nil {
			return nil, fmt.Errorf("%s: invalid version constraint %q: %w", r.From, expr, err)
		}
		c.IncludePrerelease = r.Prereleases
		rs = append(rs, ranged{c, expr, r.From})
	}
	if len(rs) == 0 {
		return tags, nil
	}
	var out []string
	for _, t := range tags {
		v, err := tagVersion(t)
		if err != nil {
			continue
		}
		ok := true
		for _, r := range rs {
			if !r.c.Check(v) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		parts := make([]string, len(rs))
		for i, r := range rs {
			parts[i] = fmt.Sprintf("%q by %s", r.expr, r.from)
		}
		return nil, fmt.Errorf("the dependencies of sharing group %q must resolve to one version, and no tag satisfies every range of the group (%s; tags: %s): %w", reqs[0].Group, strings.Join(parts, ", "), listTags(tags), errNoTag)
	}
	return out, nil
}
