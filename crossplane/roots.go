package crossplane

import (
	"errors"
	"fmt"

	"github.com/ferryhq/ferry/ociref"
)

// DefaultRegistry is the registry ferry gives a crossplane.yaml dependency
// written without one: what current Crossplane uses, go-containerregistry's
// own default, Docker Hub (with "library/" for a one-element name, as
// name.ParseReference does). Crossplane v1 had a default of its own:
// internal/xpkg/name.go DefaultRegistry was "xpkg.upbound.io" until
// crossplane commit 939ff655e ("fix: change default registry to
// xpkg.crossplane.io", released in v1.20.0), and "xpkg.crossplane.io"
// from then on. Crossplane v2.0.0 dropped the default registry altogether
// (commit 2ac9036a2, "feat: drop default registry for packages"):
// cmd/crossplane/core/core.go now rejects --registry ("support for a
// default registry value has been removed. Please ensure that all packages
// have fully qualified names"), and the resolver parses dependencies with
// go-containerregistry's own default, Docker Hub
// (internal/controller/pkg/resolver/reconciler.go, Reconcile:
// name.ParseReference(depID)). Fully qualified references, which
// Crossplane v2 expects, do not depend on it; a package written for
// Crossplane v1 takes `--default-registry xpkg.crossplane.io` (ferry.yaml
// `crossplane: {defaultRegistry: …}`).
const DefaultRegistry = "docker.io"

// ErrNoDependencies is returned (wrapped) by ReadRoots for a
// crossplane.yaml that declares no dependency: there is nothing to resolve.
var ErrNoDependencies = errors.New("no dependencies")

// Root is one dependency of a local crossplane.yaml, as a root to resolve.
type Root struct {
	// Ref is the dependency's fully qualified reference, HOST/PATH, with the
	// tag written in the package if any, and "@sha256:..." when its version
	// is a digest.
	Ref string
	// Constraint is the dependency's semver constraint; empty when Ref pins
	// a digest or when no version is given (the tag in Ref then applies).
	Constraint string
	// Kind is the dependency's Crossplane kind (KindProvider, ...) when the
	// entry names it, else "".
	Kind string
}

// ReadRoots reads a local crossplane.yaml (the meta object of a package
// being built, which is not published yet and so is not itself a root) and
// returns its spec.dependsOn entries in declared order. A reference without
// a registry is qualified with defaultRegistry (DefaultRegistry when
// empty) by ociref.ParseNormalized, the way go-containerregistry's
// name.WithDefaultRegistry did for Crossplane v1: no "library/" namespace,
// except with the Docker Hub default ("docker.io"), which normalises the
// Docker way. A digest version pins the reference. A file without
// dependencies is an error wrapping ErrNoDependencies.
func ReadRoots(data []byte, defaultRegistry string) ([]Root, error) {
	if defaultRegistry == "" {
		defaultRegistry = DefaultRegistry
	}
	meta, err := ParsePackageYAML(data)
	if err != nil {
		return nil, fmt.Errorf("reading crossplane.yaml: %w", err)
	}
	return metaRoots(meta, defaultRegistry)
}

// ReadProjectRoots is ReadRoots for an Upbound project file
// (upbound.yaml): the dependencies of the Configuration `up project
// build` makes of it (ProjectMeta).
func ReadProjectRoots(data []byte, defaultRegistry string) ([]Root, error) {
	if defaultRegistry == "" {
		defaultRegistry = DefaultRegistry
	}
	meta, err := ProjectMeta(data)
	if err != nil {
		return nil, err
	}
	return metaRoots(meta, defaultRegistry)
}

func metaRoots(meta *Meta, defaultRegistry string) ([]Root, error) {
	roots := make([]Root, 0, len(meta.DependsOn))
	for i, d := range meta.DependsOn {
		ref, constraint := d.Package, d.Version
		if d.IsDigest() {
			ref, constraint = ref+"@"+d.Version, ""
		}
		r, err := ociref.ParseNormalized(ref, defaultRegistry)
		if err != nil {
			return nil, fmt.Errorf("%s %q: spec.dependsOn[%d]: %w", meta.Kind, meta.Name, i, err)
		}
		roots = append(roots, Root{Ref: r.String(), Constraint: constraint, Kind: d.Kind})
	}
	if len(roots) == 0 {
		return nil, fmt.Errorf("%s %q declares %w", meta.Kind, meta.Name, ErrNoDependencies)
	}
	return roots, nil
}
