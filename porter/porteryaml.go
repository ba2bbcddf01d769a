package porter

import (
	"errors"
	"fmt"
	"sort"
	"strings"

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
	// Constraint is the version constraint after '@' ("exec@1.x"), or
	// empty for the latest version.
	Constraint string
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
	Bundle    struct {
		Reference string         `yaml:"reference"`
		Version   string         `yaml:"version"`
		Interface map[string]any `yaml:"interface"`
	} `yaml:"bundle"`
	Parameters  map[string]any `yaml:"parameters"`
	Credentials map[string]any `yaml:"credentials"`
	Outputs     map[string]any `yaml:"outputs"`
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
		ref := strings.TrimSpace(d.Bundle.Reference)
		if ref == "" {
			ref = strings.TrimSpace(d.Reference)
		}
		dep := format.Dependency{Name: d.Name, Ref: ref, Constraint: strings.TrimSpace(d.Bundle.Version)}
		if ref == "" {
			if d.Bundle.Interface == nil {
				return nil, fmt.Errorf("porter.yaml: dependency %q has neither bundle.reference nor bundle.interface", d.Name)
			}
			dep.Interface = true
		}
		dep.After = wiring(d.Name, names, d.Parameters, d.Credentials, d.Outputs)
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

// parseMixinEntry reads one `mixins:` entry: `exec`, `exec@1.x`, or a
// one-key mapping `{helm3: {...}}` (whose key may carry @VERSION too).
func parseMixinEntry(n *yaml.Node) (MixinRef, error) {
	var s string
	switch n.Kind {
	case yaml.ScalarNode:
		s = n.Value
	case yaml.MappingNode:
		if len(n.Content) != 2 {
			keys := make([]string, 0, len(n.Content)/2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				keys = append(keys, n.Content[i].Value)
			}
			sort.Strings(keys)
			return MixinRef{}, fmt.Errorf("want one mixin per entry, got %s", strings.Join(keys, ", "))
		}
		s = n.Content[0].Value
	default:
		return MixinRef{}, errors.New("want a mixin name or a mapping of one mixin to its configuration")
	}
	name, constraint, _ := strings.Cut(strings.TrimSpace(s), "@")
	if name == "" {
		return MixinRef{}, errors.New("empty mixin name")
	}
	return MixinRef{Name: name, Constraint: strings.TrimSpace(constraint)}, nil
}
