package porter

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

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

// Register declares what the format adds to the pipeline's packages
// (package formats' one initialiser calls it: an initialiser here would
// read in one more page of machine code at every start of every
// command). Calling it again changes nothing.
// For Porter: the version strategy $FERRY_VERSION_STRATEGY gives, when
// ferry.yaml and the flags set none, changes what resolves: it is an
// input of the lock (a lock resolved under another strategy is stale).
func Register() { mirrorset.RegisterEnvInput(strategyInput) }

// strategyInput is the lock input $FERRY_VERSION_STRATEGY makes.
func strategyInput(m *mirrorset.MirrorSet) (string, string, bool) {
	var s Settings
	if _, err := m.Section(KeyPorter, &s); err != nil || s.VersionStrategy != "" {
		return "", "", false
	}
	v := strings.TrimSpace(os.Getenv(StrategyEnv))
	return StrategyEnv, v, v != ""
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
	r.outside = &outsideRange{}
	var ri []rootInterface
	if _, err := m.Beside.Decode(keyRootInterfaces, &ri); err != nil {
		return nil, err
	}
	r.roots = &ri
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
			tag, err := pickGroup(strategy, reqs, tags)
			if err == nil && strategy == StrategyExact && r.outside != nil {
				r.outside.note(reqs)
			}
			return tag, err
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
		if err != nil && jointErr != nil {
			return "", jointErr
		}
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

// outsideRange collects the requests whose reference's tag is outside
// their declared range: version strategy exact locks the tag as written
// and never reads the range, as Porter does (getporter/porter
// pkg/cnab/extended_bundle.go ResolveVersion and ResolveVersionv2: under
// DependencyVersionStrategyExact the reference's tag is returned before
// the range is looked at), so Porter installs it without a word; ferry
// warns.
type outsideRange struct {
	mu   sync.Mutex
	seen map[outsideKey]bool
}

// outsideKey is one request whose tag is outside its range.
type outsideKey struct {
	from, tag, constraint string
}

// note records every request of reqs whose tag its range refuses, or
// whose tag is no semantic version a range could hold.
func (o *outsideRange) note(reqs []resolve.Request) {
	for _, r := range reqs {
		if !tagOutside(r) {
			continue
		}
		o.mu.Lock()
		if o.seen == nil {
			o.seen = map[outsideKey]bool{}
		}
		o.seen[outsideKey{r.From, r.Tag, strings.TrimSpace(r.Constraint)}] = true
		o.mu.Unlock()
	}
}

// tagOutside reports whether r names a tag that its range, read as the
// other strategies read it (Masterminds semver, prereleases as r allows
// them), does not hold.
func tagOutside(r resolve.Request) bool {
	expr := strings.TrimSpace(r.Constraint)
	if r.Tag == "" || expr == "" || strings.HasPrefix(expr, "sha256:") {
		return false
	}
	c, err := parseConstraint(expr)
	if err != nil {
		return false // an invalid range is reported where it is read
	}
	c.IncludePrerelease = r.Prereleases
	v, err := tagVersion(r.Tag)
	return err != nil || !c.Check(v)
}

// warnings words what was collected, for the requests still in g: a
// root's, or one placed by a package of g (naming the dependency and the
// bundle it resolved to when an edge of that package matches), sorted.
func (o *outsideRange) warnings(g *resolve.Graph) []string {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	byLabel := map[string]*resolve.Package{}
	for _, p := range g.Packages {
		byLabel[p.Label()] = p
	}
	var out []string
	for k := range o.seen {
		what := fmt.Sprintf("tag %s", k.tag)
		if strings.HasPrefix(k.from, "root ") {
			what = fmt.Sprintf("%s: %s", k.from, what)
		} else {
			p := byLabel[k.from]
			if p == nil {
				continue // a package a later round dropped
			}
			what = fmt.Sprintf("%s: %s", k.from, what)
			for _, e := range p.Dependencies {
				t := g.Packages[e.Target]
				if e.Role == "" && t != nil && t.Version == k.tag && strings.TrimSpace(e.Constraint) == k.constraint {
					what = fmt.Sprintf("%s: dependency %q: %s tag %s", k.from, e.Name, t.Source, k.tag)
					break
				}
			}
		}
		out = append(out, fmt.Sprintf("%s is outside its declared range %q; version strategy exact (Porter's default) locks the reference's tag without reading the range, as Porter installs it; another strategy (highest, max-patch, max-minor, min) chooses within the range", what, k.constraint))
	}
	sort.Strings(out)
	return out
}
