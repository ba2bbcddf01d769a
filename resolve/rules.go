package resolve

import (
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/ociref"
)

// Rules are a package format's resolution rules, applied to the
// dependencies its packages declare: how a reference written in one of its
// packages is completed, and how a dependency's version is chosen. A
// format.Reader that also implements Rules has its rules applied to the
// packages it reads; without them a reference must name its registry
// (Docker's normalisation is applied) and the highest version satisfying
// every constraint is chosen.
type Rules interface {
	format.Format
	// Qualify completes ref, as written in the package whose source is
	// parent, into a full reference.
	Qualify(ref string, parent ociref.Reference) (ociref.Reference, error)
	// Policy is how the format chooses its dependencies' versions.
	Policy() Policy
}

// Policy is a format's version policy.
type Policy struct {
	// Name describes the policy in messages: "highest", "exact", ….
	Name string
	// Unshared resolves every dependency edge on its own, so a closure
	// may hold one repository at several versions (Porter), except for
	// the edges of one sharing group, which must agree. Otherwise every
	// edge to a repository shares one version (Crossplane).
	Unshared bool
	// OneVersion reports that the format's own tool installs one version
	// of a repository (Crossplane's package manager runs one revision of
	// a package): a closure holding two digests of one of its
	// repositories is a conflict. Other formats, and plain images and
	// artifacts, may hold several tags and digests of one repository.
	OneVersion bool
	// Pick chooses a tag among tags for the requests placed on one
	// package. Nil picks the highest tag satisfying every request.
	Pick func(reqs []Request, tags []string) (string, error)
}

// Request is one demand on a package's version, as a Policy sees it.
type Request struct {
	// From labels the parent that placed it, for messages.
	From string
	// Tag is the tag written in the reference, if any.
	Tag string
	// Constraint is the declared semver range, if any.
	Constraint string
	// Prereleases allows prerelease versions.
	Prereleases bool
	// Group is the sharing group the request belongs to, if any.
	Group string
}

// Checker is a format that checks the whole closure once it is resolved,
// for rules that span packages (Porter's interface documents).
type Checker interface {
	format.Format
	// CheckGraph returns an error describing every violation.
	CheckGraph(g *Graph) error
}

// rulesNamed returns the rules of the format called name, or the default
// rules.
func rulesNamed(formats []format.Format, name string) Rules {
	for _, f := range formats {
		if r, ok := f.(Rules); ok && name != "" && f.Name() == name {
			return r
		}
	}
	return defaultRules{}
}

// defaultRules apply to packages whose format has no Rules (and to roots):
// Docker's normalisation, highest version in range.
type defaultRules struct{}

func (defaultRules) Name() string { return "default" }

func (defaultRules) Qualify(ref string, _ ociref.Reference) (ociref.Reference, error) {
	return ociref.ParseNormalized(ref, "")
}

func (defaultRules) Policy() Policy { return Policy{Name: "highest"} }
