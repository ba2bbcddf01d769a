package mixin

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
)

// The top-level keys the mixin format owns, in ferry.yaml and in
// ferry.lock.
const (
	// KeyMixins is ferry.yaml's list of mixins to lock ([]Entry), and
	// ferry.lock's list of locked mixins ([]Locked).
	KeyMixins = "mixins"
	// KeyPlatforms is ferry.yaml's list of OS/ARCH platforms whose
	// binaries are kept ([]string); the linux/amd64 runtime always is.
	KeyPlatforms = "platforms"
	// KeyBundleMixins is ferry.yaml's switch (bool) that locks the mixins
	// every resolved bundle records, not only those ferry.yaml names. The
	// --bundle-mixins flag sets it.
	KeyBundleMixins = "bundleMixins"
)

// FeedEnv names the environment variable that replaces the default mixin
// feed (DefaultFeedURL) for mixins no ferry.yaml entry or bundle gives a
// source for: an internal copy of Porter's feed, or a test feed.
const FeedEnv = "FERRY_MIXIN_FEED"

// DefaultFeed returns $FERRY_MIXIN_FEED, else Porter's feed.
func DefaultFeed() string {
	if f := strings.TrimSpace(os.Getenv(FeedEnv)); f != "" {
		return f
	}
	return DefaultFeedURL
}

// Entry is one ferry.yaml `mixins` entry: a mixin to lock. A porter.yaml
// mixin declaration (`- NAME: {mixin: {version, source}}`, Porter's
// "Mixin Versioning" proposal, getporter/proposals
// pep/002-mixin-versioning.md) becomes an Entry whose Feed is its source.
type Entry struct {
	// Name is the mixin's name, for example "exec".
	Name string `yaml:"name" json:"name"`
	// Version is "", "latest", an exact feed version ("v1.2.3",
	// "canary") or a semver constraint ("1.x").
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	// Feed is the Atom feed the version is chosen from; empty:
	// DefaultFeed().
	Feed string `yaml:"feed,omitempty" json:"feed,omitempty"`
}

// UnmarshalYAML reads an Entry, refusing keys it does not know, so that a
// misspelt `vesrion:` is an error rather than "latest".
func (e *Entry) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping of name, version and feed", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i].Value; k {
		case "name", "version", "feed":
		default:
			return fmt.Errorf("line %d: unknown key %q (want name, version, feed)", n.Content[i].Line, k)
		}
	}
	type plain Entry
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*e = Entry(p)
	return nil
}

// Format is the Porter mixin format: it owns ferry.yaml's `mixins`,
// `platforms` and `bundleMixins` keys and ferry.lock's `mixins` section,
// and carries mixin binaries, which live in Atom feeds rather than
// registries, through every step (ferry.Extension): lock, mirror, archive,
// verify. `ferry install --porter-home` (StagePorterHome) and `ferry
// serve` (NewMirrorHandler) call this package directly.
type Format struct {
	// Feed replaces DefaultFeed() when set.
	Feed string
}

var (
	_ ferry.Extension            = Format{}
	_ mirrorset.SectionOwner     = Format{}
	_ mirrorset.RootSectionOwner = Format{}
)

// Name returns "mixin".
func (Format) Name() string { return "mixin" }

// Sections returns the ferry.yaml keys the format owns.
func (Format) Sections() []string {
	return []string{KeyMixins, KeyPlatforms, KeyBundleMixins}
}

// RootSections lists the keys that name what to lock: `mixins`. A
// ferry.yaml beside a command-line ROOT does not add its mixins.
func (Format) RootSections() []string { return []string{KeyMixins} }

// feed returns the default feed for requests nobody gives one.
func (f Format) feed() string {
	if f.Feed != "" {
		return f.Feed
	}
	return DefaultFeed()
}

// settings is what the format reads of a MirrorSet.
type settings struct {
	entries   []Entry
	platforms []string
	bundles   bool
	// porterLock is the porter.yaml ROOT's porter.lock.yaml, if any.
	porterLock *PorterLockInput
}

// CheckSections validates the format's keys of m: every `mixins` entry
// has a safe name and a usable feed URL, one name is not given two feeds,
// every platform is OS/ARCH, and `bundleMixins` is a boolean. Every error
// is marked errkind.BadInput and names the key.
func (Format) CheckSections(m *mirrorset.MirrorSet) error {
	_, err := readSettings(m)
	return err
}

func readSettings(m *mirrorset.MirrorSet) (*settings, error) {
	s := &settings{}
	if m == nil {
		return s, nil
	}
	if _, err := m.Section(KeyMixins, &s.entries); err != nil {
		return nil, errkind.Mark(errkind.BadInput, err)
	}
	if _, err := m.Section(KeyPlatforms, &s.platforms); err != nil {
		return nil, errkind.Mark(errkind.BadInput, err)
	}
	if _, err := m.Section(KeyBundleMixins, &s.bundles); err != nil {
		return nil, errkind.Mark(errkind.BadInput, err)
	}
	var pl PorterLockInput
	if ok, err := m.Beside.Decode(KeyPorterLock, &pl); err != nil {
		return nil, errkind.Markf(errkind.BadInput, "%s: %w", PorterLockFile, err)
	} else if ok {
		s.porterLock = &pl
	}
	feeds := map[string]string{}
	for i, e := range s.entries {
		if err := CheckName(e.Name); err != nil {
			return nil, errkind.Markf(errkind.BadInput, "%s[%d]: invalid name %q: %w", KeyMixins, i, e.Name, err)
		}
		f := strings.TrimSpace(e.Feed)
		if f == "" {
			continue
		}
		if err := checkFeedURL(f); err != nil {
			return nil, errkind.Markf(errkind.BadInput, "%s[%d] (%s): feed: %w", KeyMixins, i, e.Name, err)
		}
		if old, ok := feeds[e.Name]; ok && old != f {
			return nil, errkind.Markf(errkind.BadInput, "mixin %s is given two feeds, %s and %s: give one", e.Name, old, f)
		}
		feeds[e.Name] = f
	}
	for _, p := range s.platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok || !isWord(goos) || !isWord(goarch) {
			return nil, errkind.Markf(errkind.BadInput, "%s: %q is not OS/ARCH", KeyPlatforms, p)
		}
	}
	return s, nil
}

// checkFeedURL refuses a feed URL ferry cannot read, or one that carries
// credentials (never quoted back).
func checkFeedURL(raw string) error {
	if hasUserinfo(raw) {
		return errors.New("credentials in feed URLs (user:password@host) are not accepted")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	switch u.Scheme {
	case "https", "http", "file":
		return nil
	}
	return fmt.Errorf("%q: unsupported scheme %q (want https, http or file)", raw, u.Scheme)
}

// Register declares what the format adds to the pipeline's packages
// (package formats' one initialiser calls it: an initialiser here would
// read in one more page of machine code at every start of every
// command). Calling it again changes nothing.
// For mixins: the lock section, which lock.Parse checks (a malformed
// `mixins:` fails when the lock is read), and where a signed lock's
// sidecar records that mixins were mirrored.
func Register() {
	lock.RegisterSection(KeyMixins, checkLockSection)
	lock.RegisterSectionMirrors(KeyMixins, sectionMirrors)
}

// checkLockSection checks a lock's `mixins:` section.
func checkLockSection(n *yaml.Node) error {
	var ls []Locked
	if err := n.Decode(&ls); err != nil {
		return err
	}
	return validateLocked(ls)
}

// FromLock returns the mixins l locks (its `mixins` section), validated:
// every entry by Locked.Validate, and no NAME@VERSION twice. A malformed
// section is a bad-input error (exit 2). A lock without mixins gives nil.
func FromLock(l *lock.Lock) ([]Locked, error) {
	if l == nil {
		return nil, nil
	}
	var out []Locked
	if _, err := l.Section(KeyMixins, &out); err != nil {
		return nil, errkind.Mark(errkind.BadInput, err)
	}
	if err := validateLocked(out); err != nil {
		return nil, errkind.Markf(errkind.BadInput, "lock %s: %w", KeyMixins, err)
	}
	return out, nil
}

// validateLocked checks every entry, and that no NAME@VERSION is locked
// twice.
func validateLocked(ls []Locked) error {
	seen := map[string]bool{}
	for i := range ls {
		if err := ls[i].Validate(); err != nil {
			return err
		}
		key := ls[i].Name + "@" + ls[i].Version
		if seen[key] {
			return fmt.Errorf("mixin %s %s is locked twice", ls[i].Name, ls[i].Version)
		}
		seen[key] = true
	}
	return nil
}

// SetLock writes locked into l's `mixins` section, sorted by name and
// version; an empty list removes the section.
func SetLock(l *lock.Lock, locked []Locked) error {
	sortLocked(locked)
	if err := l.SetSection(KeyMixins, locked); err != nil {
		return fmt.Errorf("mixins: %w", err)
	}
	return nil
}

func sortLocked(ls []Locked) {
	sort.SliceStable(ls, func(i, j int) bool {
		if ls[i].Name != ls[j].Name {
			return ls[i].Name < ls[j].Name
		}
		return ls[i].Version < ls[j].Version
	})
}

// runDir returns the run's download directory.
func runDir(run *ferry.Run) (string, error) {
	if run == nil || run.Downloads == nil {
		return "", errors.New("mixins: the run has no download directory")
	}
	dir, err := run.Downloads()
	if err != nil {
		return "", fmt.Errorf("mixins: %w", err)
	}
	return dir, nil
}
