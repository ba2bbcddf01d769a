package mixin

import (
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry/errkind"
)

// Choose picks the version of mixin name that constraint selects:
//   - "" or "latest": the highest version that is not a prerelease;
//   - a version written exactly as in the feed ("v1.2.3", or a non-semver
//     name such as "canary"): that version, as Porter's --version does;
//   - otherwise a Masterminds semver v3 constraint ("1.x", ">=1.2 <2"):
//     the highest satisfying version. Prereleases match only when the
//     constraint names one; non-semver versions never match.
//
// When nothing matches, the error lists the versions the feed has. A
// version whose feed entry is an older release (checkRelease) is refused
// with a *ReleaseRollbackError of kind errkind.Mismatch.
func (f *Feed) Choose(name, constraint string) (Version, error) {
	versions := f.Versions(name)
	if len(versions) == 0 {
		return Version{}, fmt.Errorf("mixin %s: not in feed %s (mixins: %s)", name, f.URL, strings.Join(f.Names(), " "))
	}
	c := strings.TrimSpace(constraint)
	if v, ok := f.Lookup(name, c); ok && c != "" {
		return v, checkRelease(v, versions)
	}
	var match func(*semver.Version) bool
	if c == "" || c == "latest" {
		match = func(v *semver.Version) bool { return v.Prerelease() == "" }
	} else {
		sc, err := semver.NewConstraint(c)
		if err != nil {
			return Version{}, errkind.Mark(errkind.BadInput, fmt.Errorf("mixin %s: invalid version constraint %q: %w", name, constraint, err))
		}
		match = sc.Check
	}
	// versions is sorted ascending with non-semver ones last: scan back.
	for i := len(versions) - 1; i >= 0; i-- {
		sv, err := semver.NewVersion(versions[i].Version)
		if err != nil {
			continue
		}
		if match(sv) {
			return versions[i], checkRelease(versions[i], versions)
		}
	}
	names := make([]string, len(versions))
	for i, v := range versions {
		names[i] = v.Version
	}
	shown := constraint
	if c == "" {
		shown = "latest"
	}
	return Version{}, fmt.Errorf("mixin %s: no version satisfies %q in %s (versions: %s)", name, shown, f.URL, strings.Join(names, " "))
}

// sortVersions orders semver versions ascending, then the others by name.
func sortVersions(vs []Version) {
	parsed := make(map[string]*semver.Version, len(vs))
	for _, v := range vs {
		if sv, err := semver.NewVersion(v.Version); err == nil {
			parsed[v.Version] = sv
		}
	}
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := parsed[vs[i].Version], parsed[vs[j].Version]
		switch {
		case a != nil && b != nil:
			if c := a.Compare(b); c != 0 {
				return c < 0
			}
			return vs[i].Version < vs[j].Version
		case a != nil:
			return true
		case b != nil:
			return false
		}
		return vs[i].Version < vs[j].Version
	})
}
