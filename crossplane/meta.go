// Package crossplane reads Crossplane packages (xpkgs): the package.yaml
// meta object inside an OCI image, its dependencies, the repositories it
// replaces and the Crossplane versions it supports. It also renders the
// manifests `ferry install` writes for a cluster that installs from a
// mirror.
//
// The formats follow upstream Crossplane: the meta types of
// meta.pkg.crossplane.io (v1, v1beta1, v1alpha1), the xpkg image layout
// (a layer annotated `io.crossplane.xpkg: base` holding package.yaml) and
// the package and ImageConfig objects of pkg.crossplane.io.
package crossplane

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/opencontainers/go-digest"
	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/ociref"
)

// MetaGroup is the API group of package meta objects.
const MetaGroup = "meta.pkg.crossplane.io"

// Kinds of Crossplane packages, as written in a meta object's `kind`.
const (
	KindConfiguration = "Configuration"
	KindProvider      = "Provider"
	KindFunction      = "Function"
)

// Errors ParsePackageYAML wraps, so callers can tell bad input apart with
// errors.Is.
var (
	// ErrMalformed is a package.yaml that is not valid YAML.
	ErrMalformed = errors.New("malformed package.yaml")
	// ErrNoMeta is a package.yaml whose first document is not a package
	// meta object (or that has no document at all).
	ErrNoMeta = errors.New("no package meta object")
	// ErrUnknownAPIVersion is a meta object of an unsupported version.
	ErrUnknownAPIVersion = errors.New("unknown meta apiVersion")
	// ErrUnknownKind is a meta object that is not a Configuration,
	// Provider or Function.
	ErrUnknownKind = errors.New("unknown package kind")
	// ErrInvalidDependency is an entry of spec.dependsOn that does not name
	// exactly one package, or whose version is not a constraint or digest.
	ErrInvalidDependency = errors.New("invalid dependency")
	// ErrInvalidReplaces is an entry of spec.replaces that is not a
	// repository.
	ErrInvalidReplaces = errors.New("invalid replaces entry")
)

// metaVersions are the meta.pkg.crossplane.io versions ferry reads.
var metaVersions = []string{"v1", "v1beta1", "v1alpha1"}

// Meta is the package meta object: the first document of package.yaml.
type Meta struct {
	// APIVersion is the meta object's apiVersion, e.g.
	// "meta.pkg.crossplane.io/v1".
	APIVersion string
	// Kind is KindConfiguration, KindProvider or KindFunction.
	Kind string
	// Name is metadata.name.
	Name string
	// DependsOn lists spec.dependsOn in declared order.
	DependsOn []Dependency
	// Replaces lists spec.replaces: repositories, without tag or digest,
	// that this package replaces (the moving-packages design).
	Replaces []string
	// Crossplane is spec.crossplane.version, the semver constraint on
	// Crossplane versions the package supports.
	Crossplane string
}

// Dependency is one entry of spec.dependsOn.
type Dependency struct {
	// Package is the dependency's package reference as written, possibly
	// partial (no registry, or no organisation). It comes from `package`
	// or from the older `provider`, `configuration` or `function` field.
	Package string
	// Kind is the dependency's package kind when known: the `kind` given
	// with `package`, or implied by the older field. It may be empty.
	Kind string
	// APIVersion is the `apiVersion` given with `package`, if any.
	APIVersion string
	// Version is a semver constraint (">=v1.0.0", "=v0.3.1", "v0.4.0") or
	// a "sha256:..." digest. It may be empty: the tag or digest written in
	// Package then applies.
	Version string
}

// IsDigest reports whether the dependency's version pins a digest.
func (d Dependency) IsDigest() bool { return strings.HasPrefix(d.Version, "sha256:") }

// Dependencies returns the dependencies as the resolver sees them: Name and
// Ref are the package reference as written (the resolver qualifies it
// against the parent), Constraint is the version.
func (m *Meta) Dependencies() []format.Dependency {
	if len(m.DependsOn) == 0 {
		return nil
	}
	deps := make([]format.Dependency, 0, len(m.DependsOn))
	for _, d := range m.DependsOn {
		deps = append(deps, format.Dependency{Name: d.Package, Ref: d.Package, Constraint: d.Version})
	}
	return deps
}

// FormatKind returns the format.Kind constant for the package's kind.
func (m *Meta) FormatKind() string { return FormatKind(m.Kind) }

// FormatKind maps a Crossplane kind (Configuration, Provider, Function) to
// its format.Kind constant, or "" for anything else.
func FormatKind(kind string) string {
	switch kind {
	case KindConfiguration:
		return format.KindCrossplaneConfiguration
	case KindProvider:
		return format.KindCrossplaneProvider
	case KindFunction:
		return format.KindCrossplaneFunction
	}
	return ""
}

// rawMeta is the part of a meta object ferry reads. Unknown fields
// (annotations, controller, capabilities, ...) are ignored.
type rawMeta struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Crossplane *struct {
			Version string `yaml:"version"`
		} `yaml:"crossplane"`
		DependsOn []rawDependency `yaml:"dependsOn"`
		Replaces  []string        `yaml:"replaces"`
	} `yaml:"spec"`
}

// rawDependency mirrors upstream meta v1 Dependency: `package` with
// `apiVersion`/`kind`, or one of the older `provider`, `configuration`,
// `function` fields, and `version`.
type rawDependency struct {
	APIVersion    *string `yaml:"apiVersion"`
	Kind          *string `yaml:"kind"`
	Package       *string `yaml:"package"`
	Provider      *string `yaml:"provider"`
	Configuration *string `yaml:"configuration"`
	Function      *string `yaml:"function"`
	Version       string  `yaml:"version"`
}

// ParsePackageYAML parses a package.yaml stream. The first non-empty
// document must be the meta object (apiVersion meta.pkg.crossplane.io/v1,
// v1beta1 or v1alpha1; kind Configuration, Provider or Function); later
// documents (CRDs, XRDs, Compositions) are skipped without being decoded
// into objects, but the stream must still be valid YAML.
func ParsePackageYAML(data []byte) (*Meta, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first *yaml.Node
	for i := 0; ; i++ {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: document %d: %w", ErrMalformed, i+1, err)
		}
		if first == nil && !emptyDoc(&doc) {
			d := doc
			first = &d
		}
	}
	if first == nil {
		return nil, fmt.Errorf("%w: package.yaml holds no YAML document; its first document must be a %s Configuration, Provider or Function", ErrNoMeta, MetaGroup)
	}
	var raw rawMeta
	if err := first.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: first document: %w", ErrMalformed, err)
	}
	return raw.toMeta()
}

// emptyDoc reports whether a decoded document has no content (an empty
// document between separators, or only comments).
func emptyDoc(doc *yaml.Node) bool {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return true
	}
	c := doc.Content[0]
	return c.Kind == yaml.ScalarNode && c.Tag == "!!null"
}

func (raw *rawMeta) toMeta() (*Meta, error) {
	group, version, hasVersion := strings.Cut(raw.APIVersion, "/")
	if group != MetaGroup || !hasVersion {
		what := raw.Kind
		if what == "" {
			what = "an object without kind"
		}
		return nil, fmt.Errorf("%w: the first document of package.yaml is %s (apiVersion %q); it must be a %s Configuration, Provider or Function", ErrNoMeta, what, raw.APIVersion, MetaGroup)
	}
	if !slices.Contains(metaVersions, version) {
		return nil, fmt.Errorf("%w %q in package.yaml: ferry reads %s/v1, v1beta1 and v1alpha1", ErrUnknownAPIVersion, raw.APIVersion, MetaGroup)
	}
	if FormatKind(raw.Kind) == "" {
		return nil, fmt.Errorf("%w %q in package.yaml (%s): want Configuration, Provider or Function", ErrUnknownKind, raw.Kind, raw.APIVersion)
	}
	name := raw.Metadata.Name
	if name == "" {
		return nil, fmt.Errorf("%w: %s in package.yaml has no metadata.name", ErrNoMeta, raw.Kind)
	}
	m := &Meta{APIVersion: raw.APIVersion, Kind: raw.Kind, Name: name}
	if raw.Spec.Crossplane != nil {
		m.Crossplane = raw.Spec.Crossplane.Version
		if m.Crossplane != "" {
			if _, err := semver.NewConstraint(m.Crossplane); err != nil {
				return nil, fmt.Errorf("%s %q: spec.crossplane.version %q is not a semver constraint: %w", raw.Kind, name, m.Crossplane, err)
			}
		}
	}
	for i, rd := range raw.Spec.DependsOn {
		d, err := rd.toDependency()
		if err != nil {
			return nil, fmt.Errorf("%s %q: spec.dependsOn[%d]: %w", raw.Kind, name, i, err)
		}
		m.DependsOn = append(m.DependsOn, d)
	}
	for i, r := range raw.Spec.Replaces {
		if err := checkRepository(r); err != nil {
			return nil, fmt.Errorf("%s %q: spec.replaces[%d]: %w", raw.Kind, name, i, err)
		}
		m.Replaces = append(m.Replaces, strings.TrimSpace(r))
	}
	return m, nil
}

func (rd rawDependency) toDependency() (Dependency, error) {
	type field struct {
		name, kind string
		value      *string
	}
	var set []field
	for _, f := range []field{
		{"package", "", rd.Package},
		{"provider", KindProvider, rd.Provider},
		{"configuration", KindConfiguration, rd.Configuration},
		{"function", KindFunction, rd.Function},
	} {
		if f.value != nil {
			set = append(set, f)
		}
	}
	switch len(set) {
	case 0:
		return Dependency{}, fmt.Errorf("%w: names no package; set one of package, provider, configuration or function", ErrInvalidDependency)
	case 1:
	default:
		names := make([]string, len(set))
		for i, f := range set {
			names[i] = f.name
		}
		return Dependency{}, fmt.Errorf("%w: sets %s; set exactly one of package, provider, configuration or function", ErrInvalidDependency, strings.Join(names, " and "))
	}
	f := set[0]
	d := Dependency{Package: strings.TrimSpace(*f.value), Kind: f.kind, Version: strings.TrimSpace(rd.Version)}
	if d.Package == "" {
		return Dependency{}, fmt.Errorf("%w: %s is empty", ErrInvalidDependency, f.name)
	}
	if rd.APIVersion != nil {
		d.APIVersion = *rd.APIVersion
	}
	if rd.Kind != nil && *rd.Kind != "" {
		k := *rd.Kind
		if FormatKind(k) == "" {
			return Dependency{}, fmt.Errorf("%w: %s: kind %q is not Configuration, Provider or Function", ErrInvalidDependency, d.Package, k)
		}
		if d.Kind != "" && d.Kind != k {
			return Dependency{}, fmt.Errorf("%w: %s: field %s contradicts kind %q", ErrInvalidDependency, d.Package, f.name, k)
		}
		d.Kind = k
	}
	if err := checkVersion(d.Version); err != nil {
		return Dependency{}, fmt.Errorf("%w: %s: %w", ErrInvalidDependency, d.Package, err)
	}
	return d, nil
}

// checkVersion accepts an empty version, a sha256 digest or a semver
// constraint.
func checkVersion(v string) error {
	switch {
	case v == "":
		return nil
	case strings.HasPrefix(v, "sha256:"):
		if _, err := digest.Parse(v); err != nil {
			return fmt.Errorf("version %q is not a valid digest: %w", v, err)
		}
		return nil
	default:
		if _, err := semver.NewConstraint(v); err != nil {
			return fmt.Errorf("version %q is neither a semver constraint nor a sha256 digest: %w", v, err)
		}
		return nil
	}
}

// checkRepository accepts a repository reference without tag or digest.
func checkRepository(r string) error {
	r = strings.TrimSpace(r)
	if r == "" {
		return fmt.Errorf("%w: empty", ErrInvalidReplaces)
	}
	if strings.Contains(r, "@") {
		return fmt.Errorf("%w: %q has a digest; write the repository only", ErrInvalidReplaces, r)
	}
	last := r
	if i := strings.LastIndex(r, "/"); i >= 0 {
		last = r[i+1:]
	}
	if strings.Contains(last, ":") {
		return fmt.Errorf("%w: %q has a tag; write the repository only", ErrInvalidReplaces, r)
	}
	// The entry names a repository the package manager looks up, so it
	// must read as one ("xpkg.upbound./a/b" does not).
	if _, err := ociref.Parse(r); err != nil {
		return fmt.Errorf("%w: %q: %v", ErrInvalidReplaces, r, err)
	}
	return nil
}
