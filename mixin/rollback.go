package mixin

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry/errkind"
)

// A mixin version is chosen from the feed by its <content>. The feed says
// more about which release an entry is, and an older release moved under a
// newer version (TUF's rollback) is refused by it (checkRelease):
//
//   - its download links name another version: Porter publishes a
//     version's binaries under .../mixins/VERSION/NAME-OS-ARCH
//     (porter's mixin feed, testdata/realworld/porter/mixins-atom.xml);
//   - its download links are a lower version's, file for file;
//   - its <updated> is before that of the lower version just below it in
//     the same minor line (patch releases are cut in order; a patch of an
//     older line may come after a newer release).

// ReleaseRollbackError is a mixin version whose feed entry is an older
// release of the mixin.
type ReleaseRollbackError struct {
	// Mixin and Version name the entry chosen.
	Mixin, Version string
	// Older is the older version the entry is.
	Older string
	// Why says how the feed shows it.
	Why string
}

func (e *ReleaseRollbackError) Error() string {
	return fmt.Sprintf("mixin %s version %s is an older release (%s): %s; "+
		"an older release may have been moved under a newer version; refusing it", e.Mixin, e.Version, e.Older, e.Why)
}

// strictVersion parses a full semantic version, a leading "v" allowed.
func strictVersion(s string) *semver.Version {
	v, err := semver.StrictNewVersion(strings.TrimPrefix(s, "v"))
	if err != nil {
		return nil
	}
	return v
}

// checkRelease refuses v, chosen among versions (the mixin's feed
// entries), when the feed shows it is an older release (see above).
// Versions that are not semantic versions ("canary") are not compared.
func checkRelease(v Version, versions []Version) error {
	sv := strictVersion(v.Version)
	if sv == nil {
		return nil
	}
	refuse := func(older, format string, args ...any) error {
		return errkind.Mark(errkind.Mismatch, &ReleaseRollbackError{Mixin: v.Mixin, Version: v.Version, Older: older, Why: fmt.Sprintf(format, args...)})
	}
	for _, f := range v.Files {
		u, err := url.Parse(f.URL)
		if err != nil {
			continue
		}
		segs := strings.Split(strings.Trim(u.Path, "/"), "/")
		for _, seg := range segs[:max(len(segs)-1, 0)] {
			if pv := strictVersion(seg); pv != nil && !pv.Equal(sv) {
				return refuse(seg, "its download link %s names version %s", f.URL, seg)
			}
		}
	}
	var below *Version
	var bv *semver.Version
	for i := range versions {
		o := &versions[i]
		ov := strictVersion(o.Version)
		if ov == nil || !ov.LessThan(sv) {
			continue
		}
		if len(o.Files) > 0 && sameFiles(o.Files, v.Files) {
			return refuse(o.Version, "its download links are version %s's", o.Version)
		}
		if ov.Major() == sv.Major() && ov.Minor() == sv.Minor() && (bv == nil || bv.LessThan(ov)) {
			below, bv = o, ov
		}
	}
	if below != nil && !v.Updated.IsZero() && v.Updated.Before(below.Updated) {
		return refuse(below.Version, "it was updated %s, before version %s, updated %s",
			v.Updated.UTC().Format(time.RFC3339), below.Version, below.Updated.UTC().Format(time.RFC3339))
	}
	return nil
}

// sameFiles reports whether two entries link the same URLs.
func sameFiles(a, b []File) bool {
	if len(a) != len(b) {
		return false
	}
	urls := func(fs []File) []string {
		out := make([]string, len(fs))
		for i, f := range fs {
			out[i] = f.URL
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(urls(a), urls(b))
}
