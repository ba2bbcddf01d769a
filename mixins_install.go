package ferry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/relocate"
)

// PorterHome is a PORTER_HOME staged by StagePorterHome: every mixin is
// downloaded and verified into a temporary directory beside the target;
// Commit moves it into place, Discard throws it away.
type PorterHome struct {
	// Dir is the PORTER_HOME directory.
	Dir string
	// Mixins lists the installed mixins as NAME@VERSION, sorted.
	Mixins []string

	staging string
	names   []string
}

// StagePorterHome reads every mixin of l from the mirror alone (the feed
// is never contacted) and stages PORTER_HOME's layout for goos/goarch:
//
//	mixins/NAME/NAME[.exe]              the client
//	mixins/NAME/runtimes/NAME-runtime   the linux/amd64 runtime
//
// Every binary is checked against the lock. PORTER_HOME holds one version
// per mixin: when the lock holds several, the highest is installed. A
// mixin the lock has not recorded a mirror for needs mirror (the --mirror
// mapping). A mixin or file name that would escape dir is refused. Nothing
// is written to dir until Commit.
func (e *Env) StagePorterHome(ctx context.Context, l *lock.Lock, mirror *relocate.Mapping, dir, goos, goarch string) (*PorterHome, error) {
	if len(l.Mixins) == 0 {
		return nil, exitcode.BadInput("--porter-home: the lock has no mixins to install")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, exitcode.BadInput("--porter-home %s: %w", dir, err)
	}
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		return nil, exitcode.BadInput("--porter-home %s is not a directory", dir)
	}
	chosen := highestPerName(l.Mixins)
	// Check every lock entry, and where it lives, before downloading.
	type job struct {
		m    lock.Mixin
		repo string
	}
	var jobs []job
	for _, m := range chosen {
		if err := m.Validate(); err != nil {
			return nil, exitcode.With(exitcode.Usage, err)
		}
		repo, _, err := mixinLocation(&m, mirror)
		if err != nil {
			return nil, exitcode.With(exitcode.Usage, err)
		}
		if repo == "" {
			return nil, exitcode.BadInput("mixin %s %s has no mirror in the lock: run ferry mirror first, or pass --mirror", m.Name, m.Version)
		}
		jobs = append(jobs, job{m: m, repo: repo})
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("--porter-home: %w", err)
	}
	staging, err := os.MkdirTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("--porter-home: %w", err)
	}
	ph := &PorterHome{Dir: abs, staging: staging}
	for _, j := range jobs {
		repo, err := e.Client.Repository(j.repo)
		if err != nil {
			ph.Discard()
			return nil, err
		}
		m := j.m
		if err := mixin.InstallPorterHome(ctx, repo, &m, staging, goos, goarch); err != nil {
			ph.Discard()
			return nil, fmt.Errorf("installing into PORTER_HOME from %s: %w", j.repo, err)
		}
		ph.names = append(ph.names, m.Name)
		ph.Mixins = append(ph.Mixins, m.Name+"@"+m.Version)
	}
	if err := os.Chmod(staging, 0o755); err != nil {
		ph.Discard()
		return nil, err
	}
	return ph, nil
}

// highestPerName keeps the highest version of each mixin, sorted by name.
func highestPerName(ms []lock.Mixin) []lock.Mixin {
	best := map[string]lock.Mixin{}
	for _, m := range ms {
		old, ok := best[m.Name]
		if !ok || versionLess(old.Version, m.Version) {
			best[m.Name] = m
		}
	}
	out := make([]lock.Mixin, 0, len(best))
	for _, m := range best {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

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
// mixins/NAME directory is swapped in with a rename, replacing an earlier
// install of that mixin and leaving the rest of PORTER_HOME untouched.
func (p *PorterHome) Commit() error {
	defer p.Discard()
	if _, err := os.Stat(p.Dir); errors.Is(err, os.ErrNotExist) {
		if err := os.Rename(p.staging, p.Dir); err != nil {
			return fmt.Errorf("--porter-home: %w", err)
		}
		return nil
	}
	mixinsDir := filepath.Join(p.Dir, "mixins")
	if err := os.MkdirAll(mixinsDir, 0o755); err != nil {
		return fmt.Errorf("--porter-home: %w", err)
	}
	for _, name := range p.names {
		src := filepath.Join(p.staging, "mixins", name)
		dst, err := mixin.SafeJoin(mixinsDir, name)
		if err != nil {
			return exitcode.With(exitcode.Usage, err)
		}
		if _, err := os.Stat(dst); err == nil {
			old := filepath.Join(p.staging, "old-"+name)
			if err := os.Rename(dst, old); err != nil {
				return fmt.Errorf("--porter-home: %w", err)
			}
			if err := os.Rename(src, dst); err != nil {
				_ = os.Rename(old, dst)
				return fmt.Errorf("--porter-home: %w", err)
			}
			continue
		}
		if err := os.Rename(src, dst); err != nil {
			return fmt.Errorf("--porter-home: %w", err)
		}
	}
	return nil
}

// Discard removes what was staged and not committed.
func (p *PorterHome) Discard() {
	if p != nil && p.staging != "" {
		_ = os.RemoveAll(p.staging)
	}
}
