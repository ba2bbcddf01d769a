package porter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Declarations are the parameters, credentials and outputs a bundle declares
// (Reader.Read puts them in format.Metadata.Data), or those a dependency's
// interface requires (PEP003 "Bundle Interfaces", getporter/proposals
// pep/003-advanced-dependencies.md). Each list is sorted by name, then $id.
type Declarations struct {
	// Parameters are the declared parameters.
	Parameters []Declared
	// Credentials are the declared credentials. A bundle.json records no
	// type or $id for a credential (CNAB credentials have no definition),
	// so only an interface document can give them.
	Credentials []Declared
	// Outputs are the declared outputs.
	Outputs []Declared
}

// Declared is one parameter, credential or output.
type Declared struct {
	// Name is its name; it may be empty in an interface that gives an ID.
	Name string
	// Type is its JSON schema type ("string", "integer", ...; several
	// types sorted and joined with ","), or empty when unknown.
	Type string
	// ID is the `$id` of its JSON schema definition (PEP003's well-known
	// identifier), or empty.
	ID string
}

// describe names d for a message: `output "connstr" (string)`.
func (d Declared) describe(kind string) string {
	var s string
	if d.Name != "" {
		s = fmt.Sprintf("%s %q", kind, d.Name)
	} else {
		s = kind
	}
	var attrs []string
	if d.Type != "" {
		attrs = append(attrs, d.Type)
	}
	if d.ID != "" {
		attrs = append(attrs, fmt.Sprintf("$id %q", d.ID))
	}
	if len(attrs) > 0 {
		s += " (" + strings.Join(attrs, ", ") + ")"
	}
	return s
}

// typesMatch reports whether an interface's type and an implementation's
// agree; an unknown type on either side matches any.
func typesMatch(want, have string) bool {
	return want == "" || have == "" || want == have
}

// satisfies reports whether one of have implements want: by `$id` (and
// type) when want gives an `$id`, else by name and type. PEP003
// (pep/003-advanced-dependencies.md, "porter.yaml" and "Well-known
// Identifiers"): "By default porter only requires the name and the type to
// match"; "When an $id is specified, the dependency must use the same $id
// value for the parameter/credential/output and the name does not have to
// match the name declared on the interface."
func satisfies(want Declared, have []Declared) bool {
	for _, h := range have {
		if want.ID != "" {
			if h.ID == want.ID && typesMatch(want.Type, h.Type) {
				return true
			}
			continue
		}
		if h.Name == want.Name && typesMatch(want.Type, h.Type) {
			return true
		}
	}
	return false
}

// Missing returns, sorted, every parameter, credential and output iface
// names that d does not implement, each described like
// `output "connstr" (string)`. Matching follows PEP003: by name and type, or
// by `$id` when the interface gives one; an unknown type matches any.
//
// Porter's own check is looser: getporter/porter pkg/cnab/interface_match.go
// EvaluateInterfaceMatch compares names only ("no schema/type checking, no
// well-known-identifier matching, see #2650"), and checks outputs only when
// matching an existing installation (InterfaceMatchOutputsOnly). Missing
// checks all three, PEP003's and InterfaceMatchFull's rule for a bundle.
func (d *Declarations) Missing(iface *Declarations) []string {
	if iface == nil {
		return nil
	}
	if d == nil {
		d = &Declarations{}
	}
	var missing []string
	check := func(kind string, want, have []Declared) {
		for _, w := range want {
			if !satisfies(w, have) {
				missing = append(missing, w.describe(kind))
			}
		}
	}
	check("parameter", iface.Parameters, d.Parameters)
	check("credential", iface.Credentials, d.Credentials)
	check("output", iface.Outputs, d.Outputs)
	sort.Strings(missing)
	return missing
}

// IsEmpty reports whether d declares nothing.
func (d *Declarations) IsEmpty() bool {
	return d == nil || len(d.Parameters)+len(d.Credentials)+len(d.Outputs) == 0
}

// schema is the part of a JSON schema definition ferry reads.
type schema struct {
	Type json.RawMessage `json:"type"`
	ID   string          `json:"$id"`
}

// schemaType normalises a JSON schema `type`: a string, or an array of
// strings sorted and joined with ",". Porter's "file" type is CNAB's
// "string" (getporter/porter pkg/cnab/config-adapter/adapter.go
// ManifestConverter.addDefinition).
func schemaType(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return fileType(one), nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return "", fmt.Errorf("type %s: want a string or a list of strings", raw)
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range many {
		if t = fileType(t); !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ","), nil
}

func fileType(t string) string {
	if t == "file" {
		return "string"
	}
	return t
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// definitions reads a bundle.json `definitions` section.
func definitions(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	var defs map[string]json.RawMessage
	if err := json.Unmarshal(raw, &defs); err != nil {
		return nil, fmt.Errorf("definitions: %w", err)
	}
	return defs, nil
}

// fromDefinition fills in d's type and $id from the named definition; an
// unknown definition leaves them empty.
func fromDefinition(d *Declared, name string, defs map[string]json.RawMessage) error {
	raw, ok := defs[name]
	if !ok || isNull(raw) {
		return nil
	}
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("definitions.%s: %w", name, err)
	}
	t, err := schemaType(s.Type)
	if err != nil {
		return fmt.Errorf("definitions.%s: %w", name, err)
	}
	d.Type, d.ID = t, s.ID
	return nil
}

// section reads one parameters, credentials or outputs section. It takes
// both shapes: bundle.json's object keyed by name whose entries name a
// `definition` (CNAB, and Porter's v2 DependencyInterfaceDocument in
// getporter/porter pkg/cnab/extensions/dependencies/v2/types.go), and
// porter.yaml's list of {name, type, $id} (PEP003's interface document,
// Porter's manifest.BundleInterfaceDocument in pkg/manifest/manifest.go).
func section(key string, raw json.RawMessage, defs map[string]json.RawMessage) ([]Declared, error) {
	if isNull(raw) {
		return nil, nil
	}
	var out []Declared
	switch bytes.TrimSpace(raw)[0] {
	case '{':
		var m map[string]struct {
			Definition string `json:"definition"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		for name, e := range m {
			d := Declared{Name: name}
			if e.Definition != "" {
				if err := fromDefinition(&d, e.Definition, defs); err != nil {
					return nil, fmt.Errorf("%s.%s: %w", key, name, err)
				}
			}
			out = append(out, d)
		}
	case '[':
		var l []struct {
			Name string          `json:"name"`
			Type json.RawMessage `json:"type"`
			ID   string          `json:"$id"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		for i, e := range l {
			if e.Name == "" && e.ID == "" {
				return nil, fmt.Errorf("%s[%d]: neither a name nor an $id", key, i)
			}
			t, err := schemaType(e.Type)
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", key, i, err)
			}
			out = append(out, Declared{Name: e.Name, Type: t, ID: e.ID})
		}
	default:
		return nil, fmt.Errorf("%s: want an object keyed by name or a list, got %s", key, raw)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// declarationsDoc is a bundle.json, or an interface document, as far as its
// declarations go.
type declarationsDoc struct {
	Parameters  json.RawMessage `json:"parameters"`
	Credentials json.RawMessage `json:"credentials"`
	Outputs     json.RawMessage `json:"outputs"`
	Definitions json.RawMessage `json:"definitions"`
}

func (doc *declarationsDoc) declarations() (*Declarations, error) {
	defs, err := definitions(doc.Definitions)
	if err != nil {
		return nil, err
	}
	var d Declarations
	if d.Parameters, err = section("parameters", doc.Parameters, defs); err != nil {
		return nil, err
	}
	if d.Credentials, err = section("credentials", doc.Credentials, defs); err != nil {
		return nil, err
	}
	if d.Outputs, err = section("outputs", doc.Outputs, defs); err != nil {
		return nil, err
	}
	return &d, nil
}

// Declarations returns the parameters, credentials and outputs b declares,
// with the type and `$id` of their definitions.
func (b *Bundle) Declarations() (*Declarations, error) {
	doc := declarationsDoc{Parameters: b.Parameters, Credentials: b.Credentials, Outputs: b.Outputs, Definitions: b.Definitions}
	d, err := doc.declarations()
	if err != nil {
		return nil, fmt.Errorf("bundle.json: bundle %q: %w", b.Name, err)
	}
	return d, nil
}

// InterfaceFromDocument reads a dependency's inline interface document
// (format.Dependency.InterfaceDocument; PEP003 `interface.document`). It
// takes Porter's bundle.json shape, {"parameters": {NAME: {"definition":
// DEF}}, "credentials": {...}, "outputs": {...}} (getporter/porter
// pkg/cnab/extensions/dependencies/v2/types.go DependencyInterfaceDocument,
// written by pkg/cnab/config-adapter/adapter.go generateDependenciesV2),
// whose types and `$id`s come from a "definitions" member (Bundle.Dependencies
// copies the parent's definitions in), and porter.yaml's shape, lists of
// {name, type, $id} (PEP003). Other members, as in a whole bundle.json, are
// ignored. An empty document requires nothing.
func InterfaceFromDocument(doc []byte) (*Declarations, error) {
	if isNull(doc) {
		return &Declarations{}, nil
	}
	var d declarationsDoc
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("interface document: %w", err)
	}
	decl, err := d.declarations()
	if err != nil {
		return nil, fmt.Errorf("interface document: %w", err)
	}
	return decl, nil
}
