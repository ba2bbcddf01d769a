package resolve

import (
	"context"
	"fmt"
	"slices"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/format"
)

// Choosing a version. Each source gets one version from every requirement
// placed on it: a digest pin, the version an earlier lock chose while it
// still satisfies them (keepLocked), or the policy's choice among its tags.

// choose picks the tag or digest to fetch for a source.
func (rs *roundState) choose(ctx context.Context, source string, reqs []requirement, policy Policy) (choice, error) {
	pin, err := pinOf(source, reqs)
	if err != nil {
		return choice{}, withChain(reqs, source, err)
	}
	if pin != "" {
		return rs.choosePinned(ctx, source, pin, reqs)
	}
	if rs.r.opts.Update == nil || !rs.r.opts.Update(source) {
		if c, ok := keepLocked(rs.r.opts.Locked[source], reqs, policy); ok {
			return c, nil
		}
	}
	if policy.Pick == nil && untagged(reqs) {
		c, ok, err := rs.chooseUntagged(ctx, source, reqs)
		if err != nil || ok {
			return c, err
		}
		if c.noLatest {
			tags, err := rs.r.listTags(ctx, source)
			if err != nil {
				return choice{}, withChain(reqs, source, err)
			}
			if len(candidates(reqs, tags)) == 0 {
				return choice{}, withChain(reqs, source, &NoLatestError{Source: source, Tags: tags})
			}
			tag, err := pickTag(source, reqs, tags)
			return choice{tag: tag, noLatest: true}, err
		}
	}
	if !needsTags(reqs) {
		for _, r := range reqs {
			if r.tag != "" {
				return choice{tag: r.tag}, nil
			}
		}
		// Only "any" requirements: a replaced edge whose replacement was
		// not reached otherwise; take the highest release.
	}
	tags, err := rs.r.listTags(ctx, source)
	if err != nil {
		return choice{}, withChain(reqs, source, err)
	}
	if policy.Pick != nil && !anyReq(reqs) {
		tag, err := policy.Pick(requestsOf(reqs), tags)
		if err != nil {
			return choice{}, withChain(reqs, source, err)
		}
		return choice{tag: tag}, nil
	}
	tag, err := pickTag(source, reqs, tags)
	if err != nil {
		return choice{}, err
	}
	return choice{tag: tag}, nil
}

// Untagged references. A reference without tag, digest or range means
// `latest` for an image, as docker, crane and skopeo read it
// (distribution/reference's ParseNormalizedNamed + TagNameOnly adds
// "latest"), and the highest release for a package of a format ferry
// reads (a Porter bundle, a Crossplane package, a Helm chart, a KUDO
// operator), whose versions are semver tags. Which one a reference names
// is known only from the manifest a tag points at, so:
//
//   - a request of kind image (format.KindImage) takes `latest`;
//   - otherwise, when the repository has `latest` and no format claims
//     its manifest, `latest` is taken; when a format claims it, the
//     highest release tag is, as before;
//   - when it has no `latest`, the highest release tag is read, and the
//     manifest there must be one a format claims: an image or opaque
//     artifact without `latest` is an error listing the tags and
//     suggesting a range (NoLatestError).

// untagged reports whether every request on a source names neither tag,
// digest nor range (and some request is not a replaced edge's "any").
func untagged(reqs []requirement) bool {
	n := 0
	for _, r := range reqs {
		switch {
		case r.any:
		case r.tag != "" || r.digest != "" || r.constraint != "":
			return false
		default:
			n++
		}
	}
	return n > 0
}

// chooseUntagged chooses for untagged requests (see above): ok reports a
// choice of `latest`; otherwise c.noLatest reports that the repository
// has no `latest` and the highest release is to be read, and a zero c
// that `latest` is a package of a format, chosen among releases.
func (rs *roundState) chooseUntagged(ctx context.Context, source string, reqs []requirement) (c choice, ok bool, err error) {
	tags, err := rs.r.listTags(ctx, source)
	if err != nil {
		return choice{}, false, withChain(reqs, source, err)
	}
	if !slices.Contains(tags, latestTag) {
		if kindOf(reqs) == format.KindImage {
			return choice{}, false, withChain(reqs, source, &NoLatestError{Source: source, Tags: tags})
		}
		return choice{noLatest: true}, false, nil
	}
	if kindOf(reqs) == format.KindImage {
		return choice{tag: latestTag}, true, nil
	}
	e, err := rs.r.fetch(ctx, source, choice{tag: latestTag})
	if err != nil {
		return choice{}, false, withChain(reqs, source, err)
	}
	if e.meta.Kind == format.KindArtifact {
		return choice{tag: latestTag}, true, nil
	}
	return choice{}, false, nil
}

// latestTag is the tag an untagged image reference means.
const latestTag = "latest"

// kindOf returns the kind the requests ask a package to be locked as
// when no format claims its manifest, if any.
func kindOf(reqs []requirement) string {
	for _, r := range reqs {
		if r.kind != "" {
			return r.kind
		}
	}
	return ""
}

// requestsOf returns reqs as a Policy's Pick sees them.
func requestsOf(reqs []requirement) []Request {
	requests := make([]Request, len(reqs))
	for i, r := range reqs {
		requests[i] = Request{From: r.from, Tag: r.tag, Constraint: r.constraint, Prereleases: r.prereleases, Group: r.group}
	}
	return requests
}

// keepLocked returns the locked version of a source to keep for reqs.
// A policy with its own Pick chooses among the locked versions as it
// would among the repository's tags: the version an earlier resolution
// picked for these requests is the one Pick gives among the versions it
// locked, however many versions of the source the closure holds (an
// unpinned edge keeps the newest locked version, not whichever is listed
// first), and a constraint only the format reads (KUDO's
// "operatorVersion=Y") is honoured. Otherwise the first locked version
// satisfying every constraint is kept.
func keepLocked(locked []Locked, reqs []requirement, policy Policy) (choice, bool) {
	if policy.Pick != nil && !anyReq(reqs) {
		var tags []string
		digests := map[string]digest.Digest{}
		for _, l := range locked {
			if l.Digest != "" {
				tags = append(tags, l.Version)
				digests[l.Version] = l.Digest
			}
		}
		if len(tags) == 0 {
			return choice{}, false
		}
		tag, err := policy.Pick(requestsOf(reqs), tags)
		if err != nil || digests[tag] == "" {
			return choice{}, false
		}
		return choice{tag: tag, digest: digests[tag]}, true
	}
	for _, l := range locked {
		if l.Digest != "" && satisfies(l.Version, reqs) {
			return choice{tag: l.Version, digest: l.Digest}, true
		}
	}
	return choice{}, false
}

// anyReq reports whether some requirement accepts any version (a
// replaced edge).
func anyReq(reqs []requirement) bool {
	for _, r := range reqs {
		if r.any {
			return true
		}
	}
	return false
}

// choosePinned checks a digest pin against the other requirements on the
// same source: when some parent constrains the version instead, the pinned
// digest must be the digest of a tag satisfying those constraints.
func (rs *roundState) choosePinned(ctx context.Context, source string, pin digest.Digest, reqs []requirement) (choice, error) {
	tag := ""
	var others []requirement
	for _, r := range reqs {
		switch {
		case r.digest == pin:
			if r.tag != "" {
				tag = r.tag
			}
		case !r.any:
			others = append(others, r)
		}
	}
	if len(others) == 0 {
		return choice{tag: tag, digest: pin}, nil
	}
	tags, err := rs.r.listTags(ctx, source)
	if err != nil {
		return choice{}, withChain(reqs, source, err)
	}
	repo, err := rs.r.open(source)
	if err != nil {
		return choice{}, err
	}
	for _, t := range candidates(others, tags) {
		desc, err := repo.Resolve(ctx, t)
		if err != nil {
			return choice{}, withChain(reqs, source, fmt.Errorf("resolving %s:%s: %w", source, t, err))
		}
		if desc.Digest == pin {
			return choice{tag: t, digest: pin}, nil
		}
	}
	e := unsatisfiable(source, reqs, tags).(*UnsatisfiableError)
	e.Pinned = pin
	return choice{}, e
}

// satisfies reports whether a locked tag still meets every requirement.
func satisfies(tag string, reqs []requirement) bool {
	v := ParseTag(tag)
	for _, r := range reqs {
		switch {
		case r.any:
		case r.constraint != "":
			c, ok, err := constraintOf(r)
			if err != nil || !ok || v == nil || !c.Check(v) {
				return false
			}
		case r.tag != "":
			if r.tag != tag {
				return false
			}
		}
	}
	return true
}
