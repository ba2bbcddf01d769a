package mixin

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
)

// PorterLockFile is the name of Porter's lockfile, beside porter.yaml.
const PorterLockFile = "porter.lock.yaml"

// PorterLock is Porter's lockfile, porter.lock.yaml, as Porter's "Mixin
// Versioning" proposal defines it (getporter/proposals
// pep/002-mixin-versioning.md, "Porter Lockfile"): each mixin a bundle
// uses, by name, with the feed it was resolved from, where its binaries
// are, the version chosen, and the digest of every binary.
type PorterLock struct {
	// Mixins maps a mixin's name to its resolution.
	Mixins map[string]PorterLockMixin `yaml:"mixins" json:"mixins"`
}

// KeyPorterLock is the MirrorSet.Beside key of a porter.yaml ROOT's
// porter.lock.yaml (PorterLockInput).
const KeyPorterLock = "porterLock"

// PorterLockInput is a porter.lock.yaml found beside a porter.yaml ROOT:
// where it is, the bundle the porter.yaml names, and its content.
type PorterLockInput struct {
	// Path is the file's path, for messages.
	Path string `yaml:"path"`
	// Bundle is the porter.yaml's bundle name.
	Bundle string `yaml:"bundle"`
	// Lock is the file's content.
	Lock PorterLock `yaml:"lock"`
}

// ParsePorterLock reads porter.lock.yaml: every mixin needs a version and
// every binary a sha256 digest.
func ParsePorterLock(data []byte) (*PorterLock, error) {
	var pl PorterLock
	if err := yaml.Unmarshal(data, &pl); err != nil {
		return nil, fmt.Errorf("%s: %w", PorterLockFile, err)
	}
	for name, m := range pl.Mixins {
		if err := CheckName(name); err != nil {
			return nil, fmt.Errorf("%s: mixin %q: %w", PorterLockFile, name, err)
		}
		if strings.TrimSpace(m.Version) == "" {
			return nil, fmt.Errorf("%s: mixin %s: no version", PorterLockFile, name)
		}
		for file, b := range m.Binaries {
			if d := normalDigest(b.Digest); !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 {
				return nil, fmt.Errorf("%s: mixin %s: binary %s: digest %q is not sha256:HEX", PorterLockFile, name, file, b.Digest)
			}
		}
	}
	return &pl, nil
}

// PorterLockMixin is one mixin of porter.lock.yaml.
type PorterLockMixin struct {
	// Source is the feed the version was resolved from.
	Source string `yaml:"source" json:"source"`
	// URL is where the binaries are available (Locked.BaseURL).
	URL string `yaml:"url" json:"url"`
	// Version is the version chosen.
	Version string `yaml:"version" json:"version"`
	// Binaries maps a binary's file name to its digest.
	Binaries map[string]PorterLockBinary `yaml:"binaries" json:"binaries"`
}

// PorterLockBinary is one binary of porter.lock.yaml.
type PorterLockBinary struct {
	// Digest is "sha256:HEX".
	Digest string `yaml:"digest" json:"digest"`
}

// NewPorterLock returns the porter.lock.yaml of locked. A bundle uses one
// version from one source of each mixin (the proposal, "Mixin
// Declaration"), so two entries of one name are a bad-input error.
func NewPorterLock(locked []Locked) (*PorterLock, error) {
	pl := &PorterLock{Mixins: map[string]PorterLockMixin{}}
	for i := range locked {
		m := &locked[i]
		if err := m.Validate(); err != nil {
			return nil, errkind.Mark(errkind.BadInput, err)
		}
		if old, ok := pl.Mixins[m.Name]; ok {
			return nil, errkind.Markf(errkind.BadInput, "%s: mixin %s is locked at %s and %s, and a bundle uses one version of a mixin", PorterLockFile, m.Name, old.Version, m.Version)
		}
		e := PorterLockMixin{Source: m.Feed, URL: m.BaseURL(), Version: m.Version, Binaries: map[string]PorterLockBinary{}}
		for k, b := range m.Binaries {
			e.Binaries[k] = PorterLockBinary{Digest: b.Digest}
		}
		pl.Mixins[m.Name] = e
	}
	return pl, nil
}

// WritePorterLock writes the porter.lock.yaml of locked to path, staged in
// a temporary file beside it and renamed into place.
func WritePorterLock(path string, locked []Locked) error {
	pl, err := NewPorterLock(locked)
	if err != nil {
		return err
	}
	data, err := yaml.Marshal(pl)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := lock.WriteFileAtomic(path, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Requested returns the entries of locked that in's own `mixins` entries
// (a porter.yaml's mixin declarations) chose, leaving out versions only
// the bundles it requires asked for: for each entry, the locked version of
// its name whose constraint list holds the entry's constraint ("latest"
// for none), from the entry's feed when it sets one.
func Requested(in *mirrorset.MirrorSet, locked []Locked) ([]Locked, error) {
	s, err := readSettings(in)
	if err != nil {
		return nil, err
	}
	var out []Locked
	seen := map[string]bool{}
	for _, e := range s.entries {
		c := strings.TrimSpace(e.Version)
		if c == "" {
			c = "latest"
		}
		var found *Locked
		for i := range locked {
			m := &locked[i]
			if m.Name != e.Name {
				continue
			}
			if f := strings.TrimSpace(e.Feed); f != "" && m.Feed != f {
				continue
			}
			if slices.Contains(strings.Split(m.Constraint, ", "), c) {
				found = m
				break
			}
			// A constraint that holds ", " itself: the highest version
			// that satisfies it.
			if satisfies(m.Version, c) && (found == nil || versionLess(found.Version, m.Version)) {
				found = m
			}
		}
		if found == nil {
			return nil, fmt.Errorf("mixin %s %s: the lock has no version for it", e.Name, c)
		}
		if key := found.Name + "@" + found.Version; !seen[key] {
			seen[key] = true
			out = append(out, *found)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
