package porter

import (
	"fmt"

	"github.com/ferryhq/ferry/ociref"
)

// Qualify normalises a reference written in a bundle.json or porter.yaml
// (a dependency's bundle, an interface.reference) the Docker way:
// "getporter/mysql:v0.1.3" is "docker.io/getporter/mysql:v0.1.3" and
// "alpine" is "docker.io/library/alpine". parent is ignored: Porter never
// reads a reference relative to the bundle that declares it, it parses every
// one with distribution/reference.ParseNormalizedNamed (getporter/porter
// pkg/cnab/oci_reference.go ParseOCIReference, which
// pkg/cnab/extended_bundle.go ResolveVersion and ResolveVersionv2 call on
// the dependency's `bundle`).
func (Reader) Qualify(ref string, parent ociref.Reference) (ociref.Reference, error) {
	_ = parent
	r, err := ociref.ParseNormalized(ref, "")
	if err != nil {
		return ociref.Reference{}, fmt.Errorf("porter: %w", err)
	}
	return r, nil
}
