package mixin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

// PorterHome is a PORTER_HOME staged by StagePorterHome: every mixin is
// read from the mirror and verified into a temporary directory beside the
// target; Commit moves it into place, Discard throws it away.
type PorterHome struct {
	// Dir is the PORTER_HOME directory.
	Dir string
	// Mixins lists the mixins installed in Porter's flat layout
	// (mixins/NAME), as NAME@VERSION, sorted.
	Mixins []string
	// Cached lists the versions installed in the versioned mixin cache,
	// as slash-separated paths relative to Dir
	// (mixins/SOURCE/NAME/VERSION), sorted.
	Cached []string

	staging  string
	names    []string
	versions [][]string
}

// NoMirrorError is a locked mixin with no mirror recorded in the lock and
// none given in its stead. It is bad input (errkind.BadInput); the caller
// says how to mirror it or name the mirror.
type NoMirrorError struct{ Name, Version string }

func (e *NoMirrorError) Error() string {
	return fmt.Sprintf("mixin %s %s has no mirror in the lock", e.Name, e.Version)
}

// Is makes a NoMirrorError bad input (errkind.BadInput).
func (e *NoMirrorError) Is(target error) bool { return target == errkind.BadInput }

// StagePorterHome reads every mixin of l from the mirror alone (the feed
// is never contacted) and stages PORTER_HOME for goos/goarch, in two
// layouts:
//
//   - Porter's flat layout, which holds one version per mixin (the
//     highest, when the lock holds several):
//     mixins/NAME/NAME[.exe] (the client) and
//     mixins/NAME/runtimes/NAME-runtime (the linux/amd64 runtime);
//   - the versioned mixin cache of Porter's "Mixin Versioning" proposal
//     (getporter/proposals pep/002-mixin-versioning.md), which holds every
//     locked version: mixins/SOURCE/NAME/VERSION/NAME[.exe] and
//     mixins/SOURCE/NAME/VERSION/runtimes/NAME-linux-amd64 (see
//     InstallVersioned and SourceDir).
//
// Every binary is checked against the lock. A mixin the lock has not
// recorded a mirror for needs mirror (the --mirror mapping). A mixin or
// file name that would escape dir is refused. Nothing is written to dir
// until Commit.
func StagePorterHome(ctx context.Context, c *client.Client, l *lock.Lock, mirror *relocate.Mapping, dir, goos, goarch string) (*PorterHome, error) {
	locked, err := FromLock(l)
	if err != nil {
		return nil, err
	}
	if len(locked) == 0 {
		return nil, errkind.Markf(errkind.BadInput, "PORTER_HOME: the lock has no mixins to install")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, errkind.Markf(errkind.BadInput, "PORTER_HOME %s: %w", dir, err)
	}
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		return nil, errkind.Markf(errkind.BadInput, "PORTER_HOME %s is not a directory", dir)
	}
	highest := highestPerName(locked)
	// Check every lock entry, and where it lives, before downloading.
	type job struct {
		m    Locked
		repo string
		flat bool
	}
	var jobs []job
	names := map[string]bool{}
	for _, m := range highest {
		names[m.Name] = true
	}
	for _, m := range locked {
		repo, _, err := location(&m, mirror)
		if err != nil {
			return nil, errkind.Mark(errkind.BadInput, err)
		}
		if repo == "" {
			return nil, &NoMirrorError{Name: m.Name, Version: m.Version}
		}
		rel, err := VersionDir(&m)
		if err != nil {
			return nil, errkind.Mark(errkind.BadInput, err)
		}
		if names[rel[1]] {
			// mixins/SOURCE would be swapped out with mixins/NAME.
			return nil, errkind.Markf(errkind.BadInput, "mixin %s %s: its source directory mixins/%s is also the name of a mixin", m.Name, m.Version, rel[1])
		}
		jobs = append(jobs, job{m: m, repo: repo, flat: isHighest(highest, m)})
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("PORTER_HOME: %w", err)
	}
	staging, err := os.MkdirTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("PORTER_HOME: %w", err)
	}
	ph := &PorterHome{Dir: abs, staging: staging}
	for _, j := range jobs {
		if err := ph.stage(ctx, c, j.m, j.repo, j.flat, goos, goarch); err != nil {
			ph.Discard()
			return nil, err
		}
	}
	if err := os.Chmod(staging, 0o755); err != nil {
		ph.Discard()
		return nil, fmt.Errorf("PORTER_HOME: %w", err)
	}
	sort.Strings(ph.Mixins)
	sort.Strings(ph.Cached)
	return ph, nil
}

// stage installs one locked version into the staging directory.
func (p *PorterHome) stage(ctx context.Context, c *client.Client, m Locked, repoName string, flat bool, goos, goarch string) error {
	repo, err := c.Repository(repoName)
	if err != nil {
		return err
	}
	rel, err := InstallVersioned(ctx, repo, &m, p.staging, goos, goarch)
	if err != nil {
		return fmt.Errorf("installing into PORTER_HOME from %s: %w", repoName, err)
	}
	p.versions = append(p.versions, rel)
	p.Cached = append(p.Cached, strings.Join(rel, "/"))
	if !flat {
		return nil
	}
	if err := InstallPorterHome(ctx, repo, &m, p.staging, goos, goarch); err != nil {
		return fmt.Errorf("installing into PORTER_HOME from %s: %w", repoName, err)
	}
	p.names = append(p.names, m.Name)
	p.Mixins = append(p.Mixins, m.Name+"@"+m.Version)
	return nil
}

// highestPerName keeps the highest version of each mixin, sorted by name.
func highestPerName(ms []Locked) []Locked {
	best := map[string]Locked{}
	for _, m := range ms {
		old, ok := best[m.Name]
		if !ok || versionLess(old.Version, m.Version) {
			best[m.Name] = m
		}
	}
	out := make([]Locked, 0, len(best))
	for _, m := range best {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func isHighest(highest []Locked, m Locked) bool {
	for _, h := range highest {
		if h.Name == m.Name && h.Version == m.Version {
			return true
		}
	}
	return false
}

// versionLess orders versions: semver ones by precedence, above the
// others (such as "canary"), which are ordered by name.
func versionLess(a, b string) bool {
	va, ea := semver.NewVersion(a)
	vb, eb := semver.NewVersion(b)
	switch {
	case ea == nil && eb == nil:
		return va.LessThan(vb)
	case ea == nil:
		return false // semver versions win over names such as "canary"
	case eb == nil:
		return true
	}
	return a < b
}

// Commit moves the staged mixins into place. When Dir does not exist the
// whole staging directory is renamed to it in one step; otherwise each
// mixins/NAME directory, and each mixins/SOURCE/NAME/VERSION directory of
// the versioned cache, is swapped in with a rename, replacing an earlier
// install of it and leaving the rest of PORTER_HOME untouched.
func (p *PorterHome) Commit() error {
	defer p.Discard()
	if _, err := os.Stat(p.Dir); errors.Is(err, os.ErrNotExist) {
		if err := os.Rename(p.staging, p.Dir); err != nil {
			return fmt.Errorf("PORTER_HOME: %w", err)
		}
		return nil
	}
	var rels [][]string
	for _, name := range p.names {
		rels = append(rels, []string{"mixins", name})
	}
	rels = append(rels, p.versions...)
	for i, rel := range rels {
		src := filepath.Join(append([]string{p.staging}, rel...)...)
		dst, err := SafeJoin(p.Dir, rel...)
		if err != nil {
			return errkind.Mark(errkind.BadInput, err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("PORTER_HOME: %w", err)
		}
		if err := swapIn(src, dst, filepath.Join(p.staging, fmt.Sprintf(".old-%d", i))); err != nil {
			return fmt.Errorf("PORTER_HOME: %w", err)
		}
	}
	return nil
}

// swapIn renames src to dst, moving an existing dst to aside first and
// back when the rename fails.
func swapIn(src, dst, aside string) error {
	if _, err := os.Lstat(dst); err == nil {
		if err := os.Rename(dst, aside); err != nil {
			return err
		}
		if err := os.Rename(src, dst); err != nil {
			_ = os.Rename(aside, dst)
			return err
		}
		return nil
	}
	return os.Rename(src, dst)
}

// Discard removes what was staged and not committed.
func (p *PorterHome) Discard() {
	if p != nil && p.staging != "" {
		_ = os.RemoveAll(p.staging)
	}
}
