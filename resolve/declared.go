package resolve

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
)

// VersionMismatchError is a package found under a semver tag other than
// the version it declares itself: an older (possibly properly signed)
// release moved under a newer tag, at the source or in a mirror. It exits
// with errkind.Mismatch.
type VersionMismatchError struct {
	// Ref is the reference the package was read from (SOURCE:TAG).
	Ref string
	// Tag is the tag the package was found under.
	Tag string
	// Declared is the version the package declares (bundle.json `version`).
	Declared string
	// Ranged reports whether the tag was chosen by a version range.
	Ranged bool
}

func (e *VersionMismatchError) Error() string {
	how := "tag"
	if e.Ranged {
		how = "tag chosen by a version range"
	}
	return fmt.Sprintf("%s: %s %s names version %s, but the package declares version %s: "+
		"an older release may have been moved under a newer tag; refusing it",
		e.Ref, how, e.Tag, ParseTag(e.Tag), e.Declared)
}

// checkDeclared compares the tag a package was read under with the
// version the package declares, when its format publishes packages under
// their version (format.Metadata.TaggedByVersion) and the tag is a
// semantic version. Tags that are not versions ("latest", "stable", "v1")
// and packages read by digest alone are not compared. Versions are equal
// as semantic versions: a leading "v" and "_" for "+" (an OCI tag cannot
// hold "+", so Porter and Helm write "+" as "_" in tags) make no
// difference; build metadata does.
func checkDeclared(source string, c choice, reqs []requirement, meta *format.Metadata) error {
	if meta == nil || !meta.TaggedByVersion || meta.Version == "" || c.tag == "" {
		return nil
	}
	tv := ParseTag(c.tag)
	if tv == nil {
		return nil
	}
	// "_" for "+" in the declared version too: a KUDO operator's version
	// is APPVERSION_OPERATORVERSION (kudo.Package.Version).
	dv, err := semver.NewVersion(strings.ReplaceAll(strings.TrimPrefix(strings.TrimSpace(meta.Version), "v"), "_", "+"))
	if err == nil && tv.Equal(dv) && tv.Metadata() == dv.Metadata() {
		return nil
	}
	return errkind.Mark(errkind.Mismatch, &VersionMismatchError{
		Ref:      source + ":" + c.tag,
		Tag:      c.tag,
		Declared: meta.Version,
		Ranged:   c.digest == "" && ranged(reqs),
	})
}

// ranged reports whether some requirement places a version range (as
// opposed to a tag or a digest) on the source.
func ranged(reqs []requirement) bool {
	for _, r := range reqs {
		if r.constraint != "" && !r.any {
			return true
		}
	}
	return false
}
