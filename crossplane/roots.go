package crossplane

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/internal/lazyregexp"
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

// RegistryEra is the default registry the Crossplane releases from From
// (inclusive) to To (exclusive; empty: no end) give a package reference
// written without a registry.
type RegistryEra struct {
	From, To string
	// Registry qualifies a reference without one.
	Registry string
}

// RegistryEras are Crossplane's default registries by release, as
// DefaultRegistry's comment traces them in crossplane/crossplane:
//   - before v1.20.0, internal/xpkg/name.go DefaultRegistry
//     "xpkg.upbound.io" (v1.19.0), the --registry default of
//     cmd/crossplane/core/core.go that the resolver passes to
//     name.ParseReference(depID, name.WithDefaultRegistry(r.registry))
//     (internal/controller/pkg/resolver/reconciler.go);
//   - from v1.20.0 (commit 939ff655e, "fix: change default registry to
//     xpkg.crossplane.io"), "xpkg.crossplane.io" the same way;
//   - from v2.0.0 (commit 2ac9036a2, "feat: drop default registry for
//     packages"), none of its own: name.ParseReference(depID), that is
//     go-containerregistry's default, Docker Hub.
var RegistryEras = []RegistryEra{
	{From: "0.0.0", To: "1.20.0", Registry: "xpkg.upbound.io"},
	{From: "1.20.0", To: "2.0.0", Registry: "xpkg.crossplane.io"},
	{From: "2.0.0", Registry: DefaultRegistry},
}

// semverToken finds the versions written in a constraint.
var semverToken = lazyregexp.New(`v?[0-9]+(\.[0-9]+){0,2}(-[0-9A-Za-z.-]+)?`)

// RegistriesFor returns the default registries of RegistryEras that the
// Crossplane versions a package supports (its spec.crossplane.version
// constraint) give a reference without a registry, in era order. An empty
// constraint supports every version: every era. The constraint is tried
// on every release version up to v4.49.29 and on the versions it names.
// A prerelease counts in the era before its release (v1.20.0-rc.0 still
// had "xpkg.upbound.io"; some later release candidates already carried
// the change, which only a constraint naming them exactly could tell).
func RegistriesFor(constraint string) ([]string, error) {
	constraint = strings.TrimSpace(constraint)
	if constraint == "" {
		out := make([]string, len(RegistryEras))
		for i, e := range RegistryEras {
			out[i] = e.Registry
		}
		return out, nil
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return nil, fmt.Errorf("spec.crossplane.version %q is not a semver constraint: %w", constraint, err)
	}
	var samples []*semver.Version
	for major := uint64(0); major < 5; major++ {
		for minor := uint64(0); minor < 50; minor++ {
			for patch := uint64(0); patch < 30; patch++ {
				samples = append(samples, semver.New(major, minor, patch, "", ""))
			}
		}
	}
	for _, tok := range semverToken.FindAllString(constraint, -1) {
		if v, err := semver.NewVersion(tok); err == nil {
			samples = append(samples, v)
		}
	}
	hit := make([]bool, len(RegistryEras))
	for _, v := range samples {
		if !c.Check(v) {
			continue
		}
		for i, e := range RegistryEras {
			if v.LessThan(semver.MustParse(e.From)) || (e.To != "" && !v.LessThan(semver.MustParse(e.To))) {
				continue
			}
			hit[i] = true
			break
		}
	}
	var out []string
	for i, e := range RegistryEras {
		if hit[i] && !slices.Contains(out, e.Registry) {
			out = append(out, e.Registry)
		}
	}
	return out, nil
}

// eraNames words the eras of registries for a message.
func eraNames(registries []string) string {
	var parts []string
	for _, e := range RegistryEras {
		if !slices.Contains(registries, e.Registry) {
			continue
		}
		switch {
		case e.From == "0.0.0":
			parts = append(parts, fmt.Sprintf("%s before v%s", e.Registry, e.To))
		case e.To == "":
			parts = append(parts, fmt.Sprintf("%s from v%s", e.Registry, e.From))
		default:
			parts = append(parts, fmt.Sprintf("%s from v%s to v%s", e.Registry, e.From, e.To))
		}
	}
	return strings.Join(parts, ", ")
}

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
// a registry is qualified with defaultRegistry by ociref.ParseNormalized,
// the way go-containerregistry's name.WithDefaultRegistry did for
// Crossplane v1: no "library/" namespace, except with the Docker Hub
// default ("docker.io"), which normalises the Docker way. With
// defaultRegistry empty, the package's spec.crossplane.version selects
// it: the registry of the RegistryEras the versions it supports fall in
// (DefaultRegistry when it names none); when they fall in eras with
// different registries, a reference without a registry is ambiguous, an
// error marked errkind.BadInput. A digest version pins the reference. A
// file without dependencies is an error wrapping ErrNoDependencies.
func ReadRoots(data []byte, defaultRegistry string) ([]Root, error) {
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
	meta, err := ProjectMeta(data)
	if err != nil {
		return nil, err
	}
	return metaRoots(meta, defaultRegistry)
}

func metaRoots(meta *Meta, defaultRegistry string) ([]Root, error) {
	var eras []string
	if defaultRegistry == "" && meta.Crossplane != "" {
		var err error
		if eras, err = RegistriesFor(meta.Crossplane); err != nil {
			return nil, errkind.Mark(errkind.BadInput, fmt.Errorf("%s %q: %w", meta.Kind, meta.Name, err))
		}
		if len(eras) == 1 {
			defaultRegistry = eras[0]
		}
	}
	if defaultRegistry == "" && len(eras) < 2 {
		defaultRegistry = DefaultRegistry
	}
	roots := make([]Root, 0, len(meta.DependsOn))
	for i, d := range meta.DependsOn {
		if defaultRegistry == "" && ociref.IsPartial(d.Package) {
			return nil, errkind.Markf(errkind.BadInput, "%s %q: spec.dependsOn[%d] %q names no registry, and the Crossplane versions spec.crossplane.version %q allows qualify it differently (%s): write its registry, or set crossplane.defaultRegistry", meta.Kind, meta.Name, i, d.Package, meta.Crossplane, eraNames(eras))
		}
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
