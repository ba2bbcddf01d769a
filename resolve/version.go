package resolve

import (
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/opencontainers/go-digest"
)

// requirement is one parent's demand on a source repository.
type requirement struct {
	// from labels the parent ("ROOT" for a root) for error messages.
	from string
	// chain is the path that led to the requirement.
	chain []string
	// path is the dependency's path of names from a root ("svc-a/db"),
	// which `use` keys may name.
	path string
	// name is the dependency's name in its parent (format.Dependency.Name).
	name string
	// group is the sharing group the requirement belongs to, if any.
	group string
	// ref is the reference as declared.
	ref string
	// constraint is a semver constraint; empty when none was declared.
	constraint string
	// prereleases allows prerelease versions.
	prereleases bool
	// tag is the tag written in the reference, used when no constraint.
	tag string
	// digest pins the package exactly.
	digest digest.Digest
	// any accepts whatever the closure already selected (a replaced edge).
	any bool
	// kind is the kind the target is locked as when no format claims its
	// manifest (format.Dependency.Kind).
	kind string
	// platform, when set, locks an image index as its manifest for this
	// platform (Root.Platform).
	platform string
}

// canonical identifies what a requirement asks for, whoever asks: two
// edges resolved on their own with one canonical requirement choose the
// same version, so they share one node.
func (r requirement) canonical() string {
	s := fmt.Sprintf("tag=%s constraint=%s pre=%t digest=%s", r.tag, r.constraint, r.prereleases, r.digest)
	if r.platform != "" {
		s += " platform=" + r.platform
	}
	return s
}

func (r requirement) describe() string {
	switch {
	case r.digest != "":
		return fmt.Sprintf("%s pins %s", r.from, r.digest)
	case r.constraint != "":
		s := fmt.Sprintf("%s requires %q", r.from, r.constraint)
		if r.prereleases {
			s += " (prereleases allowed)"
		}
		return s
	case r.tag != "":
		return fmt.Sprintf("%s requires tag %s", r.from, r.tag)
	default:
		return fmt.Sprintf("%s requires any version", r.from)
	}
}

// choice is what the resolver fetches for a source: a tag or a digest.
type choice struct {
	tag    string
	digest digest.Digest
	// noLatest is set when an untagged, unconstrained request took the
	// highest tag because the repository has no `latest`: the package
	// read there must be one a format claims (see chooseUntagged).
	noLatest bool
}

func (c choice) object() string {
	if c.digest != "" {
		return c.digest.String()
	}
	return c.tag
}

// ParseTag reads a tag as a semantic version: a leading "v" is allowed and
// "_" stands for "+" (OCI tags cannot hold "+"). It returns nil for tags
// that are not full semantic versions.
func ParseTag(tag string) *semver.Version {
	s := strings.ReplaceAll(tag, "_", "+")
	v, err := semver.StrictNewVersion(strings.TrimPrefix(s, "v"))
	if err != nil {
		return nil
	}
	return v
}

// needsTags reports whether choosing among reqs needs the repository's tag
// list: true when a constraint must be matched, or when tags disagree.
func needsTags(reqs []requirement) bool {
	tags := map[string]bool{}
	for _, r := range reqs {
		switch {
		case r.digest != "" || r.any:
		case r.constraint != "":
			return true
		case r.tag != "":
			tags[r.tag] = true
		default:
			return true
		}
	}
	return len(tags) > 1
}

// pinOf returns the one digest every pinning requirement agrees on.
func pinOf(source string, reqs []requirement) (digest.Digest, error) {
	var pin digest.Digest
	var who []string
	for _, r := range reqs {
		if r.digest == "" {
			continue
		}
		who = append(who, r.describe())
		if pin == "" {
			pin = r.digest
		} else if pin != r.digest {
			return "", fmt.Errorf("%s: conflicting digest pins: %s", source, strings.Join(who, "; "))
		}
	}
	return pin, nil
}

// constraintOf compiles one requirement to a semver constraint; ok is false
// when the requirement places no semver constraint.
func constraintOf(r requirement) (*semver.Constraints, bool, error) {
	expr := r.constraint
	if expr == "" && r.tag != "" && ParseTag(r.tag) != nil {
		expr = "=" + ParseTag(r.tag).String()
	}
	switch expr {
	case "":
		return nil, false, nil
	case "latest":
		expr = "*"
	}
	c, err := semver.NewConstraint(strings.TrimSpace(expr))
	if err != nil {
		return nil, false, fmt.Errorf("%s: invalid version constraint %q: %w", r.from, r.constraint, err)
	}
	c.IncludePrerelease = r.prereleases
	return c, true, nil
}

// pickTag chooses the highest tag satisfying every requirement.
func pickTag(source string, reqs []requirement, tags []string) (string, error) {
	for _, r := range reqs {
		if _, _, err := constraintOf(r); err != nil {
			return "", withChain(reqs, source, err)
		}
	}
	c := candidates(reqs, tags)
	if len(c) == 0 {
		return "", unsatisfiable(source, reqs, tags)
	}
	return c[0], nil
}

// candidates returns the tags satisfying every requirement, best first.
func candidates(reqs []requirement, tags []string) []string {
	var cons []*semver.Constraints
	exact := ""
	for _, r := range reqs {
		if r.any || r.digest != "" {
			continue
		}
		c, ok, err := constraintOf(r)
		if err != nil {
			return nil
		}
		if ok {
			cons = append(cons, c)
			continue
		}
		if r.tag != "" {
			if exact != "" && exact != r.tag {
				return nil
			}
			exact = r.tag
		}
	}
	if exact != "" {
		// A tag that is not a semantic version satisfies no constraint.
		if len(cons) > 0 {
			return nil
		}
		for _, t := range tags {
			if t == exact {
				return []string{t}
			}
		}
		return nil
	}
	type cand struct {
		tag string
		v   *semver.Version
	}
	var cands []cand
	for _, t := range tags {
		v := ParseTag(t)
		if v == nil {
			continue
		}
		ok := true
		for _, c := range cons {
			if !c.Check(v) {
				ok = false
				break
			}
		}
		if len(cons) == 0 && v.Prerelease() != "" {
			ok = false
		}
		if ok {
			cands = append(cands, cand{t, v})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if c := cands[i].v.Compare(cands[j].v); c != 0 {
			return c > 0
		}
		return cands[i].tag < cands[j].tag
	})
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.tag
	}
	return out
}

// UnsatisfiableError reports that no tag satisfies every parent's
// constraint on a repository.
type UnsatisfiableError struct {
	Source string
	Chain  []string
	// Pinned is set when a parent pins a digest that no tag satisfying
	// the other constraints has.
	Pinned       digest.Digest
	Requirements []string
	Tags         []string
}

func (e *UnsatisfiableError) Error() string {
	var b strings.Builder
	if len(e.Chain) > 0 {
		b.WriteString(strings.Join(e.Chain, " -> "))
		b.WriteString(" -> ")
	}
	if len(e.Requirements) == 1 {
		fmt.Fprintf(&b, "%s: no tag satisfies: %s", e.Source, e.Requirements[0])
	} else {
		fmt.Fprintf(&b, "%s: no tag satisfies every constraint: %s", e.Source, strings.Join(e.Requirements, "; "))
	}
	if e.Pinned != "" {
		fmt.Fprintf(&b, " (%s is not the digest of any tag satisfying the other constraints)", e.Pinned)
	}
	fmt.Fprintf(&b, " (tags: %s)", strings.Join(e.Tags, " "))
	return b.String()
}

func unsatisfiable(source string, reqs []requirement, tags []string) error {
	e := &UnsatisfiableError{Source: source, Tags: sortedTags(tags)}
	for _, r := range reqs {
		d := r.describe()
		if len(reqs) > 1 && len(r.chain) > 1 {
			// Name the whole chain to each parent: root -> ... -> parent.
			d = strings.Join(r.chain[:len(r.chain)-1], " -> ") + " -> " + d
		}
		e.Requirements = append(e.Requirements, d)
	}
	if len(reqs) == 1 {
		e.Chain = reqs[0].chain
	}
	if len(e.Tags) == 0 {
		e.Tags = []string{"none"}
	}
	return e
}

// sortedTags orders semver tags by version, then the rest by name.
func sortedTags(tags []string) []string {
	out := append([]string(nil), tags...)
	sort.SliceStable(out, func(i, j int) bool {
		vi, vj := ParseTag(out[i]), ParseTag(out[j])
		switch {
		case vi != nil && vj != nil:
			if c := vi.Compare(vj); c != 0 {
				return c < 0
			}
			return out[i] < out[j]
		case vi != nil:
			return true
		case vj != nil:
			return false
		}
		return out[i] < out[j]
	})
	return out
}
