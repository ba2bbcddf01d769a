// Package porter reads Porter bundles: CNAB bundle.json files published in
// the cnab-to-oci layout, and porter.yaml manifests. It turns them into the
// format.Metadata the resolver works with: dependencies (Porter v1
// `io.cnab.dependencies` and v2 `org.getporter.dependencies@v2`), images and
// mixins.
package porter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/lazyregexp"
)

// Keys of bundle.json's `custom` section ferry reads.
const (
	// CustomDependenciesV1 holds Porter v1 (CNAB) dependencies.
	CustomDependenciesV1 = "io.cnab.dependencies"
	// CustomDependenciesV2 holds Porter v2 dependencies.
	CustomDependenciesV2 = "org.getporter.dependencies@v2"
	// CustomPorter holds Porter's own metadata, mixins among it.
	CustomPorter = "sh.porter"
)

// Bundle is the part of a CNAB bundle.json ferry needs.
type Bundle struct {
	// SchemaVersion is the CNAB schema version, "v1.0.0" or "1.2.0".
	SchemaVersion string `json:"schemaVersion"`
	// Name is the bundle's name.
	Name string `json:"name"`
	// Version is the bundle's semantic version.
	Version string `json:"version"`
	// Description is the bundle's description.
	Description string `json:"description,omitempty"`
	// InvocationImages lists the images that run the bundle; the first is
	// the one Porter uses.
	InvocationImages []Image `json:"invocationImages"`
	// Images lists the bundle's component images by name.
	Images map[string]Image `json:"images,omitempty"`
	// Custom holds the custom extensions, raw.
	Custom map[string]json.RawMessage `json:"custom,omitempty"`
	// Parameters is the `parameters` section, raw: parameters by name,
	// each naming its definition. Read it with Declarations.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Credentials is the `credentials` section, raw.
	Credentials json.RawMessage `json:"credentials,omitempty"`
	// Outputs is the `outputs` section, raw.
	Outputs json.RawMessage `json:"outputs,omitempty"`
	// Definitions is the `definitions` section, raw: JSON schemas by name.
	Definitions json.RawMessage `json:"definitions,omitempty"`
}

// Image is an invocation or component image in bundle.json.
type Image struct {
	// Image is the image reference as written.
	Image string `json:"image"`
	// ImageType is "docker" or "oci".
	ImageType string `json:"imageType,omitempty"`
	// ContentDigest is the image manifest's digest, when recorded.
	ContentDigest string `json:"contentDigest,omitempty"`
	// MediaType is the image manifest's media type, when recorded.
	MediaType string `json:"mediaType,omitempty"`
	// Size is the image manifest's size, when recorded.
	Size int64 `json:"size,omitempty"`
	// Description describes a component image.
	Description string `json:"description,omitempty"`
}

// ParseBundle parses bundle.json. It fails on malformed JSON and on a bundle
// without a name or version.
func ParseBundle(data []byte) (*Bundle, error) {
	return parseBundle(data, "bundle.json")
}

// parseBundle parses bundle.json, naming it where in errors.
func parseBundle(data []byte, where string) (*Bundle, error) {
	var b Bundle
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if strings.TrimSpace(b.Name) == "" {
		return nil, fmt.Errorf("%s: %w", where, errNoName)
	}
	if strings.TrimSpace(b.Version) == "" {
		return nil, fmt.Errorf("%s: bundle %q: %w", where, b.Name, errNoVersion)
	}
	for i, im := range b.InvocationImages {
		if im.Image == "" {
			return nil, fmt.Errorf("%s: bundle %q: invocationImages[%d] has no image", where, b.Name, i)
		}
	}
	return &b, nil
}

var (
	errNoName    = errors.New("no name")
	errNoVersion = errors.New("no version")
)

// custom returns the raw custom extension key, or nil when it is absent or
// JSON null.
func (b *Bundle) custom(key string) json.RawMessage {
	raw, ok := b.Custom[key]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	return raw
}

// depsV1 is `custom."io.cnab.dependencies"`.
type depsV1 struct {
	Sequence []string         `json:"sequence"`
	Requires map[string]depV1 `json:"requires"`
}

type depV1 struct {
	Bundle  string     `json:"bundle"`
	Name    string     `json:"name"`
	Version *versionV1 `json:"version"`
}

type versionV1 struct {
	Ranges      []string `json:"ranges"`
	Prereleases bool     `json:"prereleases"`
}

// depsV2 is `custom."org.getporter.dependencies@v2"`.
type depsV2 struct {
	Requires map[string]depV2 `json:"requires"`
}

type depV2 struct {
	Bundle      string         `json:"bundle"`
	Version     string         `json:"version"`
	Interface   *interfaceV2   `json:"interface"`
	Sharing     *sharingV2     `json:"sharing"`
	Parameters  map[string]any `json:"parameters"`
	Credentials map[string]any `json:"credentials"`
	Outputs     map[string]any `json:"outputs"`
}

// interfaceV2 is a v2 dependency's interface: getporter/porter
// pkg/cnab/extensions/dependencies/v2/types.go DependencyInterface.
//
// Parameters, Credentials and Outputs are PEP003's short form, written
// beside id and reference without `document:` (getporter/proposals
// pep/003-advanced-dependencies.md, "Use Case Solutions": `interface:
// {outputs: [...]}`), which Porter's type drops; ferry reads them as the
// document (readInterface).
type interfaceV2 struct {
	ID          string          `json:"id"`
	Reference   string          `json:"reference"`
	Document    json.RawMessage `json:"document"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Credentials json.RawMessage `json:"credentials,omitempty"`
	Outputs     json.RawMessage `json:"outputs,omitempty"`
}

// document returns the interface document: `document`, or the short
// form's sections gathered into one. Both at once are refused.
func (i *interfaceV2) document() (json.RawMessage, error) {
	short := map[string]json.RawMessage{}
	for k, v := range map[string]json.RawMessage{"parameters": i.Parameters, "credentials": i.Credentials, "outputs": i.Outputs} {
		if !isNull(v) {
			short[k] = v
		}
	}
	if len(short) == 0 {
		return i.Document, nil
	}
	if !isNull(i.Document) {
		return nil, errors.New("interface: declares parameters, credentials or outputs both under document and beside it; write them in one place")
	}
	return json.Marshal(short)
}

// sharingV2 is a v2 dependency's sharing section. Mode is a bool in
// Porter's code (pkg/cnab/extensions/dependencies/v2/types.go
// SharingCriteria) and "none"|"group" in PEP003.
type sharingV2 struct {
	Mode  json.RawMessage `json:"mode"`
	Group *struct {
		Name string `json:"name"`
	} `json:"group"`
}

// Dependencies returns the bundle's dependencies: the v1 ones in `sequence`
// order, then v1 ones missing from the sequence sorted by name, then the v2
// ones sorted by name. A name declared by both flavours is an error.
func (b *Bundle) Dependencies() ([]format.Dependency, error) {
	v1, err := b.dependenciesV1()
	if err != nil {
		return nil, err
	}
	v2, err := b.dependenciesV2()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, d := range v1 {
		seen[d.Name] = true
	}
	for _, d := range v2 {
		if seen[d.Name] {
			return nil, fmt.Errorf("bundle.json: dependency %q is declared in both %s and %s", d.Name, CustomDependenciesV1, CustomDependenciesV2)
		}
	}
	return append(v1, v2...), nil
}

func (b *Bundle) dependenciesV1() ([]format.Dependency, error) {
	raw := b.custom(CustomDependenciesV1)
	if raw == nil {
		return nil, nil
	}
	var d depsV1
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("bundle.json: custom.%s: %w", CustomDependenciesV1, err)
	}
	var order []string
	used := map[string]bool{}
	for _, name := range d.Sequence {
		if _, ok := d.Requires[name]; !ok {
			return nil, fmt.Errorf("bundle.json: custom.%s: sequence names %q, which requires does not declare", CustomDependenciesV1, name)
		}
		if !used[name] {
			used[name] = true
			order = append(order, name)
		}
	}
	var rest []string
	for name := range d.Requires {
		if !used[name] {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	order = append(order, rest...)

	deps := make([]format.Dependency, 0, len(order))
	for _, name := range order {
		r := d.Requires[name]
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("bundle.json: custom.%s: a dependency has an empty name", CustomDependenciesV1)
		}
		if strings.TrimSpace(r.Bundle) == "" {
			return nil, fmt.Errorf("bundle.json: custom.%s: dependency %q has no bundle reference", CustomDependenciesV1, name)
		}
		dep := format.Dependency{Name: name, Ref: r.Bundle}
		if r.Version != nil {
			var ranges []string
			for _, rg := range r.Version.Ranges {
				if rg = strings.TrimSpace(rg); rg != "" {
					ranges = append(ranges, rg)
				}
			}
			dep.Constraint = strings.Join(ranges, " || ")
			dep.Prereleases = r.Version.Prereleases
		}
		deps = append(deps, dep)
	}
	return deps, nil
}

// requiresV2 reads the v2 dependencies (`org.getporter.dependencies@v2`)
// and their names, sorted; nil when the bundle declares none.
func (b *Bundle) requiresV2() (*depsV2, []string, error) {
	raw := b.custom(CustomDependenciesV2)
	if raw == nil {
		return nil, nil, nil
	}
	var d depsV2
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, nil, fmt.Errorf("bundle.json: custom.%s: %w", CustomDependenciesV2, err)
	}
	names := make([]string, 0, len(d.Requires))
	for name := range d.Requires {
		names = append(names, name)
	}
	sort.Strings(names)
	return &d, names, nil
}

func (b *Bundle) dependenciesV2() ([]format.Dependency, error) {
	d, names, err := b.requiresV2()
	if d == nil || err != nil {
		return nil, err
	}
	deps := make([]format.Dependency, 0, len(names))
	for _, name := range names {
		r := d.Requires[name]
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("bundle.json: custom.%s: a dependency has an empty name", CustomDependenciesV2)
		}
		group, err := r.Sharing.group()
		if err != nil {
			return nil, fmt.Errorf("bundle.json: custom.%s: dependency %q: %w", CustomDependenciesV2, name, err)
		}
		dep := format.Dependency{Name: name, Ref: strings.TrimSpace(r.Bundle), Constraint: strings.TrimSpace(r.Version), SharingGroup: group}
		if r.Interface != nil {
			if err := b.readInterface(&dep, r.Interface); err != nil {
				return nil, fmt.Errorf("bundle.json: custom.%s: dependency %q: %w", CustomDependenciesV2, name, err)
			}
		}
		if dep.Ref == "" {
			if r.Interface == nil {
				return nil, fmt.Errorf("bundle.json: custom.%s: dependency %q has neither a bundle reference nor an interface", CustomDependenciesV2, name)
			}
			dep.Interface = true
		}
		dep.After = wiring(name, d.Requires, r.Parameters, r.Credentials, r.Outputs)
		deps = append(deps, dep)
	}
	return deps, nil
}

// readInterface fills in dep's InterfaceRef (as written) and
// InterfaceDocument from a v2 interface. Porter refuses an interface with
// both a reference and a document (getporter/porter
// pkg/porter/dependency_interface_resolver.go
// errInterfaceReferenceAndDocument; pkg/manifest/manifest.go
// Dependency.Validate), and so does ferry. An empty document, which Porter
// writes whenever an interface is declared, counts as none (Porter's
// DependencyInterfaceDocument.IsEmpty).
func (b *Bundle) readInterface(dep *format.Dependency, iface *interfaceV2) error {
	dep.InterfaceRef = strings.TrimSpace(iface.Reference)
	raw, err := iface.document()
	if err != nil {
		return err
	}
	doc, err := b.interfaceDocument(raw)
	if err != nil {
		return err
	}
	if dep.InterfaceRef != "" && doc != nil {
		return errors.New("interface declares both a reference and a document; only one may be set")
	}
	dep.InterfaceDocument = doc
	return nil
}

// interfaceDocument returns an interface document as JSON, nil when it is
// empty. Porter's bundle.json document names definitions that live in the
// parent bundle's `definitions` (pkg/cnab/config-adapter/adapter.go
// generateDependenciesV2 adds them there), so the ones it names are copied
// into the returned document's own "definitions" member, making it
// self-contained for InterfaceFromDocument. The document is otherwise
// returned as written.
func (b *Bundle) interfaceDocument(raw json.RawMessage) ([]byte, error) {
	if isNull(raw) {
		return nil, nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("interface.document: %w", err)
	}
	empty := true
	for _, k := range []string{"parameters", "credentials", "outputs"} {
		if v := bytes.TrimSpace(doc[k]); !isNull(v) && string(v) != "{}" && string(v) != "[]" {
			empty = false
		}
	}
	if empty {
		return nil, nil
	}
	// Check the document reads, and find the definitions it names.
	own, err := definitions(doc["definitions"])
	if err != nil {
		return nil, fmt.Errorf("interface.document: %w", err)
	}
	parent, err := definitions(b.Definitions)
	if err != nil {
		return nil, fmt.Errorf("bundle.json: %w", err)
	}
	added := false
	for _, k := range []string{"parameters", "outputs"} {
		var m map[string]struct {
			Definition string `json:"definition"`
		}
		if json.Unmarshal(doc[k], &m) != nil {
			continue // a list (porter.yaml shape) or malformed: checked below
		}
		for _, e := range m {
			if _, ok := own[e.Definition]; ok || e.Definition == "" {
				continue
			}
			if def, ok := parent[e.Definition]; ok {
				if own == nil {
					own = map[string]json.RawMessage{}
				}
				own[e.Definition] = def
				added = true
			}
		}
	}
	out := []byte(raw)
	if added {
		defs, err := json.Marshal(own)
		if err != nil {
			return nil, fmt.Errorf("interface.document: %w", err)
		}
		doc["definitions"] = defs
		if out, err = json.Marshal(doc); err != nil {
			return nil, fmt.Errorf("interface.document: %w", err)
		}
	}
	if _, err := InterfaceFromDocument(out); err != nil {
		return nil, fmt.Errorf("interface.document: %w", err)
	}
	return out, nil
}

// group returns the sharing group of a dependency, "" when it is not
// shared. Porter shares a dependency when sharing.mode is true, within
// sharing.group.name, and refuses mode true without a group name and a
// group name with mode false or absent (getporter/porter
// pkg/cnab/extended_bundle.go ExtendedBundle.ResolveSharedDeps). PEP003's
// string modes are read too: "none" is unshared, "group" shares within the
// named group; an unnamed group, which PEP003 allows, cannot be told apart
// from no sharing here and is refused like Porter's mode true without one.
func (s *sharingV2) group() (string, error) {
	if s == nil {
		return "", nil
	}
	name := ""
	if s.Group != nil {
		name = s.Group.Name
	}
	var mode any
	if len(s.Mode) > 0 {
		if err := json.Unmarshal(s.Mode, &mode); err != nil {
			return "", fmt.Errorf("sharing.mode: %w", err)
		}
	}
	switch m := mode.(type) {
	case nil:
		return sharingGroup(false, name)
	case bool:
		return sharingGroup(m, name)
	case string:
		switch m {
		case "":
			return sharingGroup(false, name)
		case "none":
			return "", nil
		case "group":
			return sharingGroup(true, name)
		}
		return "", fmt.Errorf("sharing.mode %q: want true, false, \"none\" or \"group\"", m)
	default:
		return "", fmt.Errorf("sharing.mode %s: want true, false, \"none\" or \"group\"", s.Mode)
	}
}

// sharingGroup applies Porter's ResolveSharedDeps checks.
func sharingGroup(shared bool, name string) (string, error) {
	switch {
	case shared && strings.TrimSpace(name) == "":
		return "", errors.New("sharing: mode is on but group.name is empty; name the sharing group")
	case !shared && name != "":
		return "", fmt.Errorf("sharing: group.name is %q but mode is not on; set sharing.mode to true to share", name)
	case shared:
		return name, nil
	}
	return "", nil
}

// outputRef matches Porter's template reference to a dependency output,
// `${bundle.dependencies.NAME.outputs.OUTPUT}`, spaces allowed inside the
// braces.
var outputRef = lazyregexp.New(`\$\{\s*bundle\.dependencies\.([A-Za-z0-9_.-]+?)\.outputs\.[A-Za-z0-9_.-]+\s*\}`)

// wiring returns the sibling dependencies whose outputs self's parameters,
// credentials or outputs use, sorted and unique. References to unknown
// names or to self are ignored: Porter reports them when it installs.
func wiring[T any](self string, siblings map[string]T, sections ...map[string]any) []string {
	set := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			for _, m := range outputRef.FindAllStringSubmatch(x, -1) {
				if _, ok := siblings[m[1]]; ok && m[1] != self {
					set[m[1]] = true
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, s := range sections {
		for _, v := range s {
			walk(v)
		}
	}
	if len(set) == 0 {
		return nil
	}
	after := make([]string, 0, len(set))
	for n := range set {
		after = append(after, n)
	}
	sort.Strings(after)
	return after
}

// porterCustom is `custom."sh.porter"`.
type porterCustom struct {
	Mixins map[string]json.RawMessage `json:"mixins"`
}

// mixinRecord is one `custom."sh.porter".mixins.NAME`. Porter records only
// the version (getporter/porter pkg/cnab/config-adapter/stamp.go
// MixinRecord); the Mixin Versioning proposal (getporter/proposals PEP 002,
// pep/002-mixin-versioning.md, "Build", pull request #7, never merged) adds
// the url the binaries were downloaded from and their digests:
// {"url": URL, "version": V, "binaries": {"exec-linux-amd64": {"digest": D}}}.
// Its lockfile also has `source`, the feed, read here when url is absent.
type mixinRecord struct {
	Version  string                     `json:"version"`
	URL      string                     `json:"url"`
	Source   string                     `json:"source"`
	Binaries map[string]json.RawMessage `json:"binaries"`
}

// bareSHA256 matches a digest written without its algorithm, as PEP 002's
// examples do.
var bareSHA256 = lazyregexp.New(`^[0-9a-fA-F]{64}$`)

// binaryDigest reads a recorded binary's digest, {"digest": D} as PEP 002
// writes it or a bare string, as "sha256:HEX"; a bare 64-digit hex digest
// is taken as sha256.
func binaryDigest(raw json.RawMessage) (string, error) {
	var d string
	if err := json.Unmarshal(raw, &d); err != nil {
		var obj struct {
			Digest string `json:"digest"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return "", fmt.Errorf("want {\"digest\": \"sha256:...\"}, got %s", raw)
		}
		d = obj.Digest
	}
	d = strings.TrimSpace(d)
	if bareSHA256.MatchString(d) {
		d = "sha256:" + strings.ToLower(d)
	}
	parsed, err := digest.Parse(d)
	if err != nil {
		return "", fmt.Errorf("digest %q: %w", d, err)
	}
	if parsed.Algorithm() != digest.SHA256 {
		return "", fmt.Errorf("digest %q: want a sha256 digest", d)
	}
	return parsed.String(), nil
}

// Mixins returns the mixins the bundle was built with, sorted by name, and a
// warning for each one whose version the bundle does not record (older
// Porter): those resolve to the latest version. A recorded url and binary
// digests (the Mixin Versioning proposal) fill in Mixin.URL and
// Mixin.Binaries; a binary whose digest is unreadable is left out, with a
// warning.
func (b *Bundle) Mixins() ([]format.Mixin, []string) {
	raw := b.custom(CustomPorter)
	if raw == nil {
		return nil, nil
	}
	var pc porterCustom
	if err := json.Unmarshal(raw, &pc); err != nil {
		return nil, []string{fmt.Sprintf("bundle %s:%s: custom.%s is unreadable, mixins unknown: %v", b.Name, b.Version, CustomPorter, err)}
	}
	names := make([]string, 0, len(pc.Mixins))
	for n := range pc.Mixins {
		names = append(names, n)
	}
	sort.Strings(names)
	var mixins []format.Mixin
	var warnings []string
	for _, n := range names {
		m := format.Mixin{Name: n}
		var rec mixinRecord
		if r := pc.Mixins[n]; !isNull(r) {
			if err := json.Unmarshal(r, &rec); err != nil {
				warnings = append(warnings, fmt.Sprintf("bundle %s:%s: mixin %q: its record is unreadable (%v); the latest version will be used", b.Name, b.Version, n, err))
				mixins = append(mixins, m)
				continue
			}
		}
		m.Version = strings.TrimSpace(rec.Version)
		m.URL = strings.TrimSpace(rec.URL)
		if m.URL == "" {
			m.URL = strings.TrimSpace(rec.Source)
		}
		files := make([]string, 0, len(rec.Binaries))
		for f := range rec.Binaries {
			files = append(files, f)
		}
		sort.Strings(files)
		for _, f := range files {
			d, err := binaryDigest(rec.Binaries[f])
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("bundle %s:%s: mixin %q: binary %s: %v; its digest is not checked", b.Name, b.Version, n, f, err))
				continue
			}
			if m.Binaries == nil {
				m.Binaries = map[string]string{}
			}
			m.Binaries[f] = d
		}
		if m.Version == "" {
			warnings = append(warnings, fmt.Sprintf("bundle %s:%s: mixin %q: the bundle does not record its version (built by an older Porter); the latest version will be used", b.Name, b.Version, n))
		}
		mixins = append(mixins, m)
	}
	return mixins, warnings
}
