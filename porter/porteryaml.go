package porter

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/format"
)

// Manifest is the part of a porter.yaml ferry needs.
type Manifest struct {
	// Name is the bundle's name.
	Name string
	// Version is the bundle's version.
	Version string
	// Registry is the registry (and optional path) Porter publishes to.
	Registry string
	// Reference is the full reference Porter publishes to, when set.
	Reference string
	// Dependencies lists the bundles this one requires, in declared order.
	Dependencies []format.Dependency
	// Mixins lists the mixins the bundle uses, in declared order.
	Mixins []MixinRef
}

// MixinRef is one `mixins:` entry of porter.yaml.
type MixinRef struct {
	// Name is the mixin's name.
	Name string
	// Constraint is the version constraint: after '@' ("exec@1.x"), or the
	// Mixin Versioning proposal's `mixin.version`; empty for the latest
	// version.
	Constraint string
	// Feed is the Mixin Versioning proposal's `mixin.source`, the feed (or
	// download location) to resolve the mixin from; empty for the default
	// feed.
	Feed string
	// ClientVersion is the entry's `clientVersion`, the version of the
	// client tool the mixin installs in the bundle, if given.
	ClientVersion string
}

// Ref returns the reference Porter publishes the bundle to: `reference`
// when set, else REGISTRY/NAME:vVERSION.
func (m *Manifest) Ref() string {
	if m.Reference != "" {
		return m.Reference
	}
	if m.Registry == "" {
		return ""
	}
	v := m.Version
	if v != "" && !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	return strings.TrimSuffix(m.Registry, "/") + "/" + m.Name + ":" + v
}

type yamlManifest struct {
	Name         string      `yaml:"name"`
	Version      string      `yaml:"version"`
	Registry     string      `yaml:"registry"`
	Reference    string      `yaml:"reference"`
	Dependencies yaml.Node   `yaml:"dependencies"`
	Mixins       []yaml.Node `yaml:"mixins"`
}

// yamlDep is one dependency in either porter.yaml form: `requires[]` with a
// `bundle` section (Porter v1 and v2), or the oldest top-level list with
// `reference`.
type yamlDep struct {
	Name      string `yaml:"name"`
	Reference string `yaml:"reference"`
	// Bundle is `bundle: {reference, version, interface}` (Porter's
	// pkg/manifest/manifest.go BundleCriteria) or PEP003's short form
	// `bundle: REF`.
	Bundle      yaml.Node      `yaml:"bundle"`
	Sharing     *yamlSharing   `yaml:"sharing"`
	Parameters  map[string]any `yaml:"parameters"`
	Credentials map[string]any `yaml:"credentials"`
	Outputs     map[string]any `yaml:"outputs"`
}

// yamlBundle is a dependency's long-form `bundle` section.
type yamlBundle struct {
	Reference string         `yaml:"reference"`
	Version   string         `yaml:"version"`
	Interface *yamlInterface `yaml:"interface"`
}

// yamlInterface is `bundle.interface` (Porter's pkg/manifest/manifest.go
// BundleInterface), plus PEP003's short form: parameters, credentials and
// outputs written directly under `interface:`, without `document:`
// (getporter/proposals pep/003-advanced-dependencies.md, "Bundle
// Interfaces" and "Use Case Solutions": `interface: {outputs: [...]}`).
type yamlInterface struct {
	ID          string    `yaml:"id"`
	Reference   string    `yaml:"reference"`
	Document    yaml.Node `yaml:"document"`
	Parameters  yaml.Node `yaml:"parameters"`
	Credentials yaml.Node `yaml:"credentials"`
	Outputs     yaml.Node `yaml:"outputs"`
}

// document returns the interface document as JSON: `document:`, or the
// parameters, credentials and outputs PEP003's short form writes beside
// id and reference, checked alike. Both forms at once are refused: which
// one Porter would read is not defined.
func (i *yamlInterface) document() (json.RawMessage, error) {
	doc, err := yamlJSON(&i.Document)
	if err != nil {
		return nil, fmt.Errorf("interface.document: %w", err)
	}
	short := map[string]json.RawMessage{}
	for key, n := range map[string]*yaml.Node{"parameters": &i.Parameters, "credentials": &i.Credentials, "outputs": &i.Outputs} {
		v, err := yamlJSON(n)
		if err != nil {
			return nil, fmt.Errorf("interface.%s: %w", key, err)
		}
		if v != nil {
			short[key] = v
		}
	}
	if len(short) == 0 {
		return doc, nil
	}
	if doc != nil {
		return nil, errors.New("interface: declares parameters, credentials or outputs both under document and beside it; write them in one place")
	}
	return json.Marshal(short)
}

// yamlSharing is a dependency's `sharing` section: mode true/false
// (Porter's pkg/manifest/manifest.go SharingCriteria) or "none"/"group"
// (PEP003).
type yamlSharing struct {
	Mode  yaml.Node `yaml:"mode"`
	Group *struct {
		Name string `yaml:"name"`
	} `yaml:"group"`
}

// yamlJSON converts a YAML node to JSON; nil for an absent or null node.
func yamlJSON(n *yaml.Node) (json.RawMessage, error) {
	if n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// bundleSection reads a dependency's `bundle`: the long form, or PEP003's
// short form `bundle: REF` (pep/003-advanced-dependencies.md, "Solution:
// Unshared"), which Porter's own BundleCriteria does not accept.
func (d *yamlDep) bundleSection() (yamlBundle, error) {
	var b yamlBundle
	n := &d.Bundle
	switch {
	case n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null"):
	case n.Kind == yaml.ScalarNode:
		b.Reference = n.Value
	case n.Kind == yaml.MappingNode:
		if err := n.Decode(&b); err != nil {
			return b, fmt.Errorf("bundle: %w", err)
		}
	default:
		return b, fmt.Errorf("line %d: bundle: want a reference or a mapping with reference, version and interface", n.Line)
	}
	return b, nil
}

// dependency turns d into a format.Dependency.
func (d *yamlDep) dependency(names map[string]yamlDep) (format.Dependency, error) {
	b, err := d.bundleSection()
	if err != nil {
		return format.Dependency{}, err
	}
	ref := strings.TrimSpace(b.Reference)
	if ref == "" {
		ref = strings.TrimSpace(d.Reference)
	}
	dep := format.Dependency{Name: d.Name, Ref: ref, Constraint: strings.TrimSpace(b.Version)}
	if d.Sharing != nil {
		mode, err := yamlJSON(&d.Sharing.Mode)
		if err != nil {
			return format.Dependency{}, fmt.Errorf("sharing.mode: %w", err)
		}
		s := sharingV2{Mode: mode}
		if d.Sharing.Group != nil {
			s.Group = &struct {
				Name string `json:"name"`
			}{d.Sharing.Group.Name}
		}
		if dep.SharingGroup, err = s.group(); err != nil {
			return format.Dependency{}, err
		}
	}
	if b.Interface != nil {
		doc, err := b.Interface.document()
		if err != nil {
			return format.Dependency{}, fmt.Errorf("bundle.%w", err)
		}
		iface := interfaceV2{ID: b.Interface.ID, Reference: b.Interface.Reference, Document: doc}
		if err := (&Bundle{}).readInterface(&dep, &iface); err != nil {
			return format.Dependency{}, fmt.Errorf("bundle.%w", err)
		}
	}
	if ref == "" {
		if b.Interface == nil {
			return format.Dependency{}, errors.New("no bundle.reference and no bundle.interface")
		}
		dep.Interface = true
	}
	dep.After = wiring(d.Name, names, d.Parameters, d.Credentials, d.Outputs)
	return dep, nil
}

// ParsePorterYAML parses porter.yaml.
func ParsePorterYAML(data []byte) (*Manifest, error) {
	var y yamlManifest
	if err := yaml.Unmarshal(data, &y); err != nil {
		return nil, fmt.Errorf("porter.yaml: %w", err)
	}
	if strings.TrimSpace(y.Name) == "" {
		return nil, fmt.Errorf("porter.yaml: %w", errNoName)
	}
	m := &Manifest{Name: y.Name, Version: y.Version, Registry: y.Registry, Reference: y.Reference}

	var deps []yamlDep
	switch y.Dependencies.Kind {
	case 0:
	case yaml.MappingNode:
		var w struct {
			Requires []yamlDep `yaml:"requires"`
		}
		if err := y.Dependencies.Decode(&w); err != nil {
			return nil, fmt.Errorf("porter.yaml: dependencies: %w", err)
		}
		deps = w.Requires
	case yaml.SequenceNode:
		if err := y.Dependencies.Decode(&deps); err != nil {
			return nil, fmt.Errorf("porter.yaml: dependencies: %w", err)
		}
	default:
		return nil, fmt.Errorf("porter.yaml: line %d: dependencies: want a mapping with requires", y.Dependencies.Line)
	}
	names := make(map[string]yamlDep, len(deps))
	for i, d := range deps {
		if d.Name == "" {
			return nil, fmt.Errorf("porter.yaml: dependencies.requires[%d]: no name", i)
		}
		if _, dup := names[d.Name]; dup {
			return nil, fmt.Errorf("porter.yaml: dependency %q is declared twice", d.Name)
		}
		names[d.Name] = d
	}
	for _, d := range deps {
		dep, err := d.dependency(names)
		if err != nil {
			return nil, fmt.Errorf("porter.yaml: dependency %q: %w", d.Name, err)
		}
		m.Dependencies = append(m.Dependencies, dep)
	}

	for i, n := range y.Mixins {
		mx, err := parseMixinEntry(&n)
		if err != nil {
			return nil, fmt.Errorf("porter.yaml: mixins[%d] (line %d): %w", i, n.Line, err)
		}
		m.Mixins = append(m.Mixins, mx)
	}
	return m, nil
}

// parseMixinEntry reads one `mixins:` entry, in the shapes Porter reads
// (getporter/porter pkg/manifest/manifest.go MixinDeclaration.UnmarshalYAML):
// `exec`, `exec@1.x`, or a one-key mapping `{helm3: CONFIG}` whose key may
// carry @VERSION too and whose CONFIG is null or a mapping. In CONFIG, the
// Mixin Versioning proposal's (getporter/proposals PEP 002,
// pep/002-mixin-versioning.md, "Mixin Declaration")
// `mixin: {version: RANGE, source: URL}` sets the constraint and feed and
// `clientVersion` is recorded; the rest is the mixin's own configuration.
// Any other shape is an error: nothing is defaulted.
func parseMixinEntry(n *yaml.Node) (MixinRef, error) {
	var key string
	var config *yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return MixinRef{}, errors.New("empty mixin entry")
		}
		key = n.Value
	case yaml.MappingNode:
		if len(n.Content) != 2 {
			keys := make([]string, 0, len(n.Content)/2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				keys = append(keys, n.Content[i].Value)
			}
			sort.Strings(keys)
			if len(keys) == 0 {
				return MixinRef{}, errors.New("empty mixin entry")
			}
			return MixinRef{}, fmt.Errorf("want one mixin per entry, got %s", strings.Join(keys, ", "))
		}
		if n.Content[0].Kind != yaml.ScalarNode {
			return MixinRef{}, errors.New("want a mixin name as the entry's key")
		}
		key, config = n.Content[0].Value, n.Content[1]
	default:
		return MixinRef{}, errors.New("want a mixin name or a mapping of one mixin to its configuration")
	}
	name, constraint, hasAt := strings.Cut(strings.TrimSpace(key), "@")
	name, constraint = strings.TrimSpace(name), strings.TrimSpace(constraint)
	if name == "" {
		return MixinRef{}, errors.New("empty mixin name")
	}
	mx := MixinRef{Name: name, Constraint: constraint}
	// extractVersionFromName: a version after '@' must be a constraint.
	if hasAt {
		if err := checkMixinConstraint(constraint); err != nil {
			return MixinRef{}, fmt.Errorf("mixin %q: %w", name, err)
		}
	}
	if config == nil || (config.Kind == yaml.ScalarNode && config.Tag == "!!null") {
		return mx, nil
	}
	if config.Kind != yaml.MappingNode {
		return MixinRef{}, fmt.Errorf("mixin %q: line %d: want its configuration as a mapping", name, config.Line)
	}
	for i := 0; i+1 < len(config.Content); i += 2 {
		k, v := config.Content[i], config.Content[i+1]
		switch k.Value {
		case "mixin":
			if err := mx.readMixinSection(v); err != nil {
				return MixinRef{}, fmt.Errorf("mixin %q: %w", name, err)
			}
		case "clientVersion":
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				return MixinRef{}, fmt.Errorf("mixin %q: line %d: clientVersion: want a version", name, v.Line)
			}
			mx.ClientVersion = strings.TrimSpace(v.Value)
		}
	}
	return mx, nil
}

// readMixinSection reads the Mixin Versioning proposal's
// `mixin: {version, source}`. A version there and one after '@' must agree.
func (mx *MixinRef) readMixinSection(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: mixin: want a mapping with version and source", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return fmt.Errorf("line %d: mixin.%s: want a string", v.Line, k.Value)
		}
		val := strings.TrimSpace(v.Value)
		switch k.Value {
		case "version":
			if err := checkMixinConstraint(val); err != nil {
				return fmt.Errorf("mixin.version: %w", err)
			}
			if mx.Constraint != "" && mx.Constraint != val {
				return fmt.Errorf("mixin.version %q disagrees with the version %q after '@'", val, mx.Constraint)
			}
			mx.Constraint = val
		case "source":
			if val == "" {
				return errors.New("mixin.source is empty")
			}
			mx.Feed = val
		default:
			return fmt.Errorf("line %d: mixin.%s: unknown key; want version and source", k.Line, k.Value)
		}
	}
	return nil
}

// checkMixinConstraint checks a mixin version constraint the way Porter does
// (pkg/manifest/manifest.go extractVersionFromName: semver.NewConstraint).
func checkMixinConstraint(c string) error {
	if c == "" {
		return errors.New("empty version")
	}
	if _, err := semver.NewConstraint(c); err != nil {
		return fmt.Errorf("version %q: %w", c, err)
	}
	return nil
}
