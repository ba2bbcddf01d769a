package resolve

import (
	"context"
	"fmt"

	"github.com/opencontainers/go-digest"
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
