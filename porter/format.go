package porter

import (
	"fmt"
	"os"
	"sort"
	"strings"

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
// sharing group must choose one version.
func pickGroup(s VersionStrategy, reqs []resolve.Request, tags []string) (string, error) {
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
	var parts []string
	for tag, from := range picks {
		parts = append(parts, fmt.Sprintf("%s by %s", tag, strings.Join(from, ", ")))
	}
	sort.Strings(parts)
	group := reqs[0].Group
	return "", fmt.Errorf("the dependencies of sharing group %q must resolve to one version, and version strategy %s chooses %s", group, s, strings.Join(parts, "; "))
}
