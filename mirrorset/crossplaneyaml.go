package mirrorset

import (
	"fmt"
	"strings"

	"github.com/ferryhq/ferry/crossplane"
	"github.com/ferryhq/ferry/ociref"
)

// DefaultCrossplaneRegistry qualifies a crossplane.yaml dependency written
// without a registry, as Crossplane's package manager does by default.
const DefaultCrossplaneRegistry = "xpkg.crossplane.io"

// FromCrossplaneYAML builds a MirrorSet from a local crossplane.yaml (the
// meta object of a package being built): every `spec.dependsOn[]` entry is
// a root, constrained by its version (a digest version pins it). The
// package itself is not published yet, so it is not a root.
func FromCrossplaneYAML(data []byte) (*MirrorSet, error) {
	meta, err := crossplane.ParsePackageYAML(data)
	if err != nil {
		return nil, err
	}
	m := &MirrorSet{APIVersion: APIVersion, Kind: Kind}
	for i, d := range meta.Dependencies() {
		ref := d.Ref
		if ociref.IsPartial(ref) {
			ref = DefaultCrossplaneRegistry + "/" + ref
		}
		p := Package{Ref: ref, Version: d.Constraint}
		if strings.HasPrefix(d.Constraint, "sha256:") {
			p.Ref, p.Version = ref+"@"+d.Constraint, ""
		}
		if _, err := ociref.Parse(p.Ref); err != nil {
			return nil, fmt.Errorf("%s %q: spec.dependsOn[%d]: %w", meta.Kind, meta.Name, i, err)
		}
		m.Packages = append(m.Packages, p)
	}
	if len(m.Packages) == 0 {
		return nil, fmt.Errorf("%s %q declares no dependencies: nothing to resolve", meta.Kind, meta.Name)
	}
	return m, nil
}
