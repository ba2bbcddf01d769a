package resolve

import (
	"errors"
	"fmt"
	"strings"

	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/errkind"
)

// badInput marks an error caused by the user's or a package's input.
func badInput(err error) error { return errkind.Mark(errkind.BadInput, err) }

// maxNearestTags is how many tags a TagNotFoundError lists when the
// repository has more.
const maxNearestTags = 8

// TagNotFoundError reports a tag the repository does not have, with the
// tags it has (the nearest few when there are many), as a user would ask
// next. It unwraps to errdef.ErrNotFound.
type TagNotFoundError struct {
	// Source is the repository, HOST/PATH.
	Source string
	// Tag is the missing tag.
	Tag string
	// Tags are every tag of the repository.
	Tags []string
}

func (e *TagNotFoundError) Error() string {
	ref := e.Source + ":" + e.Tag
	if len(e.Tags) == 0 {
		return fmt.Sprintf("%s: tag %s not found: the repository has no tags", ref, e.Tag)
	}
	near := NearestTags(e.Tag, e.Tags, maxNearestTags)
	if len(near) == len(e.Tags) {
		return fmt.Sprintf("%s: tag %s not found (tags: %s)", ref, e.Tag, strings.Join(near, " "))
	}
	return fmt.Sprintf("%s: tag %s not found (nearest of its %d tags: %s)", ref, e.Tag, len(e.Tags), strings.Join(near, " "))
}

// Unwrap returns errdef.ErrNotFound.
func (e *TagNotFoundError) Unwrap() error { return errdef.ErrNotFound }

// NearestTags returns at most n of tags closest to tag, in version order:
// all of them when there are no more than n; else, for a semantic version,
// the tags around where it would sort, and for another tag those with the
// smallest edit distance.
func NearestTags(tag string, tags []string, n int) []string {
	sorted := sortedTags(tags)
	if len(sorted) <= n {
		return sorted
	}
	if v := ParseTag(tag); v != nil {
		// Where tag would sort among the versions; the others keep their
		// place after them (sortedTags puts non-versions last).
		at := 0
		for at < len(sorted) {
			w := ParseTag(sorted[at])
			if w == nil || w.Compare(v) >= 0 {
				break
			}
			at++
		}
		lo := max(0, min(at-n/2, len(sorted)-n))
		return sorted[lo : lo+n]
	}
	type scored struct {
		i, d int
	}
	all := make([]scored, len(sorted))
	for i, t := range sorted {
		all[i] = scored{i, editDistance(tag, t)}
	}
	// Stable selection of the n smallest distances, kept in version order.
	keep := make([]bool, len(sorted))
	for range n {
		best := -1
		for j, s := range all {
			if !keep[j] && (best < 0 || s.d < all[best].d) {
				best = j
			}
		}
		keep[best] = true
	}
	out := make([]string, 0, n)
	for i, t := range sorted {
		if keep[i] {
			out = append(out, t)
		}
	}
	return out
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func withChain(reqs []requirement, source string, err error) error {
	var chain []string
	if len(reqs) > 0 {
		chain = reqs[0].chain
	}
	var ue *UnsatisfiableError
	if errors.As(err, &ue) {
		return err
	}
	last := source
	// The edge's name says how the parent named the package when it is
	// more than the package's own name (a Helm chart's image names the
	// template that deploys it), as lock.Why shows it.
	if len(reqs) > 0 && reqs[0].name != "" && reqs[0].name != source[strings.LastIndex(source, "/")+1:] {
		last += " (via " + reqs[0].name + ")"
	}
	prefix := strings.Join(append(append([]string(nil), chain...), last), " -> ")
	return &ChainError{Chain: prefix, Err: err}
}

// ChainError is an error reached through a chain of dependencies.
type ChainError struct {
	Chain string
	Err   error
}

func (e *ChainError) Error() string { return e.Chain + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ChainError) Unwrap() error { return e.Err }

// NoLatestError reports an untagged reference to an image (or opaque
// artifact) whose repository has no `latest` tag, which an untagged
// image reference means. It lists the tags and suggests a range; the
// chain that wraps it (ChainError) names the source.
type NoLatestError struct {
	// Source is the repository, HOST/PATH.
	Source string
	// Tags are every tag of the repository.
	Tags []string
}

// Range is the version range the error suggests: the highest release's
// minor line (^MAJOR.MINOR, ~0.MINOR below 1.0.0), empty when the
// repository has no release tag.
func (e *NoLatestError) Range() string {
	v := highestVersion(sortedTags(e.Tags))
	if v == "" {
		return ""
	}
	pv := ParseTag(v)
	if pv.Major() == 0 {
		return fmt.Sprintf("~0.%d", pv.Minor())
	}
	return fmt.Sprintf("^%d.%d", pv.Major(), pv.Minor())
}

func (e *NoLatestError) Error() string {
	var b strings.Builder
	// The chain names the source (withChain).
	fmt.Fprintf(&b, "an untagged image reference means %s, as docker and crane read it, and the repository has no tag %s", latestTag, latestTag)
	sorted := sortedTags(e.Tags)
	switch {
	case len(sorted) == 0:
		b.WriteString(" (it has no tags)")
		return b.String()
	case len(sorted) > maxNearestTags:
		// The newest releases are the likeliest wanted.
		fmt.Fprintf(&b, " (%d tags, the last of them: %s)", len(sorted), strings.Join(lastVersions(sorted, maxNearestTags), " "))
	default:
		fmt.Fprintf(&b, " (tags: %s)", strings.Join(sorted, " "))
	}
	if v := highestVersion(sorted); v != "" {
		rng := e.Range()
		fmt.Fprintf(&b, "; name a tag (%s:%s) or choose a range: '%s' as the version, or in ferry.yaml `images: [{ref: %s, tags: [\"%s\"]}]`", e.Source, v, rng, e.Source, rng)
		return b.String()
	}
	fmt.Fprintf(&b, "; name a tag (%s:%s)", e.Source, sorted[len(sorted)-1])
	return b.String()
}

// lastVersions returns the last n tags of sorted, releases first: the
// newest releases, then other tags while room is left.
func lastVersions(sorted []string, n int) []string {
	var releases, others []string
	for _, t := range sorted {
		if ParseTag(t) != nil {
			releases = append(releases, t)
		} else {
			others = append(others, t)
		}
	}
	if len(releases) >= n {
		return releases[len(releases)-n:]
	}
	return append(releases, others[:min(len(others), n-len(releases))]...)
}

// highestVersion returns the highest release tag (no prerelease) of
// sorted tags, or "".
func highestVersion(sorted []string) string {
	for i := len(sorted) - 1; i >= 0; i-- {
		if v := ParseTag(sorted[i]); v != nil && v.Prerelease() == "" {
			return sorted[i]
		}
	}
	return ""
}
