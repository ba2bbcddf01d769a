package crossplane

import (
	"fmt"

	"github.com/ferryhq/ferry/ociref"
)

// Qualify completes a dependency reference written in the package at
// parent, by the "partially qualified dependencies" rule of Crossplane's
// one-pager "Moving Package Dependencies" (design/one-pager-moving-packages.md,
// proposed in crossplane/crossplane PR #6014, status Accepted; section
// "Replicating a Package"): the missing components of a dependency are
// copied from its immediate dependent, so a package replicated to another
// registry finds its dependencies there too.
//
//   - a reference with a registry ("xpkg.crossplane.io/acme/db") is kept;
//   - one without a registry ("crossplane-contrib/provider-a") takes the
//     parent's registry;
//   - one with neither registry nor organisation ("provider-b") takes the
//     parent's registry and organisation: its repository path up to the
//     last '/', so nested paths are kept too.
//
// Crossplane's package manager itself never merged this rule (PR #6014 was
// closed; PR #6019 implemented only `replaces`): Crossplane v1 gave a
// partial reference its default registry, and v2 gives it Docker Hub.
// ferry applies the design's rule, which is what lets a mirror of a
// package hold its dependencies. The rule is ociref.Qualify's.
func (Reader) Qualify(ref string, parent ociref.Reference) (ociref.Reference, error) {
	r, err := ociref.Qualify(ref, parent)
	if err != nil {
		return ociref.Reference{}, fmt.Errorf("dependency of %s: %w", parent.Repo(), err)
	}
	return r, nil
}
