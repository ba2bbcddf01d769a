// Package mirrorset reads ferry.yaml, the MirrorSet that names what to
// resolve, lock and mirror, and computes the digest of its normalised
// inputs that a lock records to detect staleness.
package mirrorset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/resolve"
	"github.com/ferryhq/ferry/sizecap"
	"github.com/ferryhq/ferry/sourcemirror"
	"github.com/ferryhq/ferry/trust"
)

// APIVersion and Kind identify a ferry.yaml.
const (
	APIVersion = "ferry.dev/v1alpha1"
	Kind       = "MirrorSet"
	// DefaultFile is read when a command is given no ROOT.
	DefaultFile = "ferry.yaml"
)

// MirrorSet is the content of ferry.yaml.
type MirrorSet struct {
	APIVersion string         `yaml:"apiVersion" json:"apiVersion"`
	Kind       string         `yaml:"kind" json:"kind"`
	Packages   []Package      `yaml:"packages,omitempty" json:"packages,omitempty"`
	Replace    []Replace      `yaml:"replace,omitempty" json:"replace,omitempty"`
	Use        map[string]Use `yaml:"use,omitempty" json:"use,omitempty"`
	Mirror     Mirror         `yaml:"mirror,omitempty" json:"mirror,omitempty"`
	// Mirrors maps a registry host, a host/path prefix or a repository
	// URL to the locations serving the same content, read in order before
	// the source (see package sourcemirror). It is not an input of the
	// lock's digest: every name stays the source's.
	Mirrors map[string]Locations `yaml:"mirrors,omitempty" json:"mirrors,omitempty"`
	// Trust is the signature policy (package trust). It is not an input
	// of the lock's digest: it does not change what resolves, and ferry
	// lock and ferry mirror check it on every run.
	Trust *trust.Config `yaml:"trust,omitempty" json:"trust,omitempty"`
	// Lock is the policy for the lock itself (`lock: {requireSigned:
	// true}`); like Trust it is not an input of the lock's digest.
	Lock LockPolicy `yaml:"lock,omitempty" json:"lock,omitempty"`
	// Sections holds the top-level keys a format owns (`mixins` and
	// `platforms` of Porter mixins, `porter`, `crossplane`), each read by
	// its format through Section. A key no format owns is an error.
	Sections format.Sections `yaml:",inline" json:"-"`

	// Config, in the settings flags give (FromArgs, LoadFile), is the
	// --config file: the ferry.yaml whose settings apply to a ROOT given
	// on the command line, instead of the one beside it.
	Config string `yaml:"-" json:"-"`

	// Beside holds what a format's input reader found beside a
	// command-line ROOT that is not an input of the lock, by key (the
	// porter.yaml's porter.lock.yaml, whose versions are kept and whose
	// digests are enforced, as a previous lock's are): not in Digest.
	Beside format.Sections `yaml:"-" json:"-"`
}

// Locations is one or more mirror locations: in ferry.yaml a string or a
// list of strings.
type Locations []string

// UnmarshalYAML reads a location or a list of them.
func (l *Locations) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*l = Locations{n.Value}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*l = list
	return nil
}

// MirrorEntries returns the `mirrors:` entries, by prefix.
func (m *MirrorSet) MirrorEntries() []sourcemirror.Entry {
	keys := make([]string, 0, len(m.Mirrors))
	for k := range m.Mirrors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]sourcemirror.Entry, 0, len(keys))
	for _, k := range keys {
		out = append(out, sourcemirror.Entry{Prefix: k, Locations: append([]string(nil), m.Mirrors[k]...)})
	}
	return out
}

// Use is a user-chosen implementation of a named dependency: in ferry.yaml
// either a reference (`use: {db: REF}`) or `{ref: REF, force: true}`. The
// key is a dependency name, matching that name anywhere in the closure, or
// a path of names from a root (`svc-a/db`), which wins over a bare name.
type Use struct {
	// Ref is the reference that satisfies the dependency.
	Ref string `yaml:"ref" json:"ref"`
	// Force accepts a Ref that breaks the parent's version constraint.
	Force bool `yaml:"force,omitempty" json:"force,omitempty"`
}

// UnmarshalYAML reads a Use from a plain reference or a mapping.
func (u *Use) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		u.Ref = n.Value
		return nil
	}
	type plain Use
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	// Node.Decode does not inherit the decoder's KnownFields: check the
	// keys here, so that a misspelt one is not silently dropped.
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Value != "ref" && k.Value != "force" {
				return fmt.Errorf("line %d: unknown key %q in an entry of use (known keys: force, ref)", k.Line, k.Value)
			}
		}
	}
	*u = Use(p)
	return nil
}

// MarshalYAML writes a Use without force as its plain reference.
func (u Use) MarshalYAML() (any, error) {
	if !u.Force {
		return u.Ref, nil
	}
	type plain Use
	return plain(u), nil
}

// Section decodes the format-owned top-level key into v. It reports
// false, leaving v alone, when the key is absent.
func (m *MirrorSet) Section(key string, v any) (bool, error) {
	ok, err := m.Sections.Decode(key, v)
	if err != nil {
		return true, errkind.Markf(errkind.BadInput, "%s: %w", key, userYAMLError(err))
	}
	return ok, nil
}

// SetSection sets a format-owned top-level key to v (nil removes it).
func (m *MirrorSet) SetSection(key string, v any) error {
	return m.Sections.Set(key, v)
}

// Package is a root package: a reference, or a local input (Path).
type Package struct {
	Ref string `yaml:"ref,omitempty" json:"ref"`
	// Path is a local input, read as it is read when given as ROOT on
	// the command line (a porter.yaml, a crossplane.yaml, a chart
	// directory, Chart.yaml or .tgz, a KUDO package folder, operator.yaml
	// or .tgz), relative to the working directory: its roots are the
	// MirrorSet's. Load replaces such an entry by those roots.
	Path    string `yaml:"path,omitempty" json:"-"`
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	// Format names the format whose version policy chooses the root's
	// version, when the input file is that format's (a porter.yaml's
	// dependencies follow Porter's strategy); empty: the highest in range.
	Format string `yaml:"-" json:"-"`
	// Kind, when set, is the kind the root is locked as when no format
	// claims its manifest (format.KindImage for an image a local Helm
	// chart deploys).
	Kind string `yaml:"-" json:"-"`
	// Prereleases, set by a format's input reader, lets Version admit
	// prerelease tags (a porter.yaml's prerelease version, as Porter's
	// config adapter allows them).
	Prereleases bool `yaml:"-" json:"-"`
	// Select, when set, makes the root a selection of the tags of the
	// repository Ref names (an `images:` entry with ranges or regular
	// expressions), resolved at lock time into a root per tag.
	// It is an input of the lock's digest (command-line selections).
	Select *resolve.TagSelection `yaml:"-" json:"select,omitempty"`
	// Platform, when set, locks an image index as its manifest for this
	// platform (resolve.Root.Platform).
	Platform string `yaml:"-" json:"platform,omitempty"`
}

// Replace redirects every edge to From to To.
type Replace struct {
	From string `yaml:"from" json:"from"`
	To   string `yaml:"to" json:"to"`
}

// LockPolicy is ferry.yaml's `lock:` section.
type LockPolicy struct {
	// RequireSigned makes ferry install refuse a lock without a valid
	// cosign signature LOCK.sig, as --require-signed-lock does.
	RequireSigned bool `yaml:"requireSigned,omitempty" json:"requireSigned,omitempty"`
}

// Mirror is the default mirror.
type Mirror struct {
	To string `yaml:"to,omitempty" json:"to,omitempty"`
}

// MaxFileSize caps the size of an input file (ferry.yaml, porter.yaml,
// crossplane.yaml) Load and LoadFile accept; it is checked before the file
// is parsed, so a huge file cannot take the memory.
var MaxFileSize int64 = 64 << 20

// Load reads and validates a ferry.yaml, whose format-owned keys formats
// check. Errors exit with code 2.
func Load(path string, formats []format.Format) (*MirrorSet, error) {
	return load(path, formats, false)
}

// load reads a ferry.yaml; settingsFile reads one for its settings alone
// (beside a command-line ROOT), which may name no root.
func load(path string, formats []format.Format, settingsFile bool) (*MirrorSet, error) {
	data, err := sizecap.ReadFile(path, MaxFileSize)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errkind.Markf(errkind.BadInput, "%s not found: pass a ROOT reference or write a %s", path, DefaultFile)
		}
		if sizecap.IsTooLarge(err) {
			return nil, errkind.Markf(errkind.BadInput, "%w", err)
		}
		return nil, errkind.Markf(errkind.BadInput, "reading %s: %w", path, err)
	}
	m, err := parse(data, !settingsFile)
	if err == nil {
		err = m.CheckSections(formats)
	}
	if err == nil {
		err = m.expandPaths(formats)
	}
	if err != nil {
		return nil, errkind.Markf(errkind.BadInput, "%s: %w", path, err)
	}
	return m, nil
}

// Parse parses and validates ferry.yaml content.
func Parse(data []byte) (*MirrorSet, error) { return parse(data, true) }

// parse parses and validates ferry.yaml content; needRoots refuses one
// that names nothing to resolve (a ferry.yaml read for its settings alone
// may).
func parse(data []byte, needRoots bool) (*MirrorSet, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var m MirrorSet
	if err := dec.Decode(&m); err != nil && !errors.Is(err, io.EOF) {
		return nil, userYAMLError(err)
	}
	if m.APIVersion != APIVersion || m.Kind != Kind {
		return nil, fmt.Errorf("want apiVersion %s and kind %s, got %q and %q", APIVersion, Kind, m.APIVersion, m.Kind)
	}
	if !needRoots {
		return &m, m.validate(false)
	}
	return &m, m.Validate()
}

// Validate checks references, replaces, mirrors and platforms.
func (m *MirrorSet) Validate() error { return m.validate(true) }

func (m *MirrorSet) validate(needRoots bool) error {
	if needRoots && len(m.Packages) == 0 && len(m.Sections) == 0 {
		return errors.New("no packages to resolve")
	}
	for i, p := range m.Packages {
		switch {
		case p.Path != "" && (p.Ref != "" || p.Version != ""):
			return fmt.Errorf("packages[%d]: give either ref (and version) or path (a local input), not both", i)
		case p.Path != "":
			continue
		}
		if _, err := ociref.ParseNormalized(p.Ref, ""); err != nil {
			return fmt.Errorf("packages[%d]: %w", i, err)
		}
	}
	if _, err := sourcemirror.New(m.MirrorEntries(), false); err != nil {
		return err
	}
	for k, u := range m.Use {
		if _, err := ociref.ParseNormalized(u.Ref, ""); err != nil {
			return fmt.Errorf("use %s: %w", k, err)
		}
	}
	for i, r := range m.Replace {
		for _, s := range []string{r.From, r.To} {
			ref, err := ociref.Parse(s)
			if err != nil {
				return fmt.Errorf("replace[%d]: %w", i, err)
			}
			if ref.Tag != "" || ref.Digest != "" {
				return fmt.Errorf("replace[%d]: %q: name a repository, without tag or digest", i, s)
			}
		}
	}
	return nil
}

// FromRefs builds a MirrorSet from command-line references; version, when
// set, constrains every reference.
func FromRefs(refs []string, version string) (*MirrorSet, error) {
	m := &MirrorSet{APIVersion: APIVersion, Kind: Kind}
	for _, r := range refs {
		m.Packages = append(m.Packages, Package{Ref: r, Version: version})
	}
	if err := m.Validate(); err != nil {
		return nil, errkind.Mark(errkind.BadInput, err)
	}
	return m, nil
}

// Roots returns the root packages to resolve. A reference without a
// registry is normalised the Docker way, as crane, oras and porter read
// one; input files of a format (crossplane.yaml) qualify theirs by the
// format's rules when they are read.
func (m *MirrorSet) Roots() []resolve.Root {
	out := make([]resolve.Root, 0, len(m.Packages))
	for _, p := range m.Packages {
		ref := p.Ref
		if r, err := ociref.ParseNormalized(ref, ""); err == nil {
			ref = r.String()
		}
		out = append(out, resolve.Root{Ref: ref, Constraint: p.Version, Format: p.Format, Kind: p.Kind, Prereleases: p.Prereleases, Select: p.Select, Platform: p.Platform})
	}
	return out
}

// ReplaceMap returns the user replaces as from -> to.
func (m *MirrorSet) ReplaceMap() map[string]string {
	out := map[string]string{}
	for _, r := range m.Replace {
		out[r.From] = r.To
	}
	return out
}

// Digest returns "sha256:HEX" of the normalised inputs: roots and their
// constraints, replace, use, mixins and platforms. The mirror target is not
// an input: one lock serves several mirrors; nor is the trust policy, which
// does not change resolution and is checked on every lock and mirror.
func (m *MirrorSet) Digest() string {
	type norm struct {
		Packages []Package         `json:"packages"`
		Replace  []Replace         `json:"replace"`
		Use      map[string]Use    `json:"use"`
		Sections map[string]any    `json:"sections,omitempty"`
		Env      map[string]string `json:"env,omitempty"`
	}
	n := norm{
		Packages: append([]Package{}, m.Packages...),
		Replace:  append([]Replace{}, m.Replace...),
		Use:      map[string]Use{},
		Sections: map[string]any{},
	}
	for k, v := range m.Use {
		n.Use[k] = v
	}
	for k, node := range m.Sections {
		var v any
		if node.Decode(&v) == nil {
			n.Sections[k] = canonical(v)
		}
	}
	for _, in := range envInputs {
		if k, v, ok := in(m); ok {
			if n.Env == nil {
				n.Env = map[string]string{}
			}
			n.Env[k] = v
		}
	}
	sort.Slice(n.Packages, func(i, j int) bool {
		return n.Packages[i].Ref+" "+n.Packages[i].Version < n.Packages[j].Ref+" "+n.Packages[j].Version
	})
	sort.Slice(n.Replace, func(i, j int) bool { return n.Replace[i].From < n.Replace[j].From })
	b, _ := json.Marshal(n)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// canonical sorts the lists of strings inside a section and the lists of
// mappings by their `name`, so that the order entries are written in is
// not a change of inputs (encoding/json already sorts mapping keys).
func canonical(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, y := range x {
			x[k] = canonical(y)
		}
	case []any:
		for i, y := range x {
			x[i] = canonical(y)
		}
		sort.SliceStable(x, func(i, j int) bool { return sortKey(x[i]) < sortKey(x[j]) })
	}
	return v
}

func sortKey(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if n, ok := x["name"].(string); ok {
			return n
		}
	}
	return ""
}

// FromArgs returns the MirrorSet named by command-line ROOTs: OCI
// references, or one input file (a ferry.yaml, or a file one of formats
// accepts, see LoadFile); with none, ferry.yaml in the working directory.
// It also returns the file the inputs came from, if any. settings carries
// format sections given by flags (it may be nil); they are merged into the
// result, over what the file says.
func FromArgs(args []string, version string, formats []format.Format, settings *MirrorSet) (*MirrorSet, string, error) {
	m, file, err := fromArgs(args, version, formats, settings)
	if err != nil {
		return nil, "", err
	}
	if err := m.Apply(settings, formats); err != nil {
		return nil, "", err
	}
	return m, file, nil
}

// Apply sets the format sections settings carries (from flags) over what
// m says, and checks them; settings may be nil. Every command that reads
// inputs applies the same flags, so a lock's inputs digest is reproduced
// by `ferry verify` given the flags `ferry lock` was given.
func (m *MirrorSet) Apply(settings *MirrorSet, formats []format.Format) error {
	if settings == nil || len(settings.Sections) == 0 {
		return nil
	}
	m.Sections.Merge(settings.Sections)
	if err := m.CheckSections(formats); err != nil {
		return errkind.Markf(errkind.BadInput, "%w", err)
	}
	return nil
}

func fromArgs(args []string, version string, formats []format.Format, settings *MirrorSet) (*MirrorSet, string, error) {
	if len(args) == 0 {
		path := DefaultFile
		if settings != nil && settings.Config != "" {
			path = settings.Config
		}
		m, err := Load(path, formats)
		return m, path, err
	}
	var refs []string
	var file string
	for _, a := range args {
		if isFile(a) {
			if file != "" {
				return nil, "", errkind.Markf(errkind.BadInput, "more than one input file: %s and %s", file, a)
			}
			file = a
			continue
		}
		refs = append(refs, a)
	}
	if file == "" {
		m, err := FromRefs(refs, version)
		if err != nil {
			return nil, "", err
		}
		cfg, err := configFor(formats, settings)
		if err != nil {
			return nil, "", err
		}
		if cfg != nil {
			m.applyConfig(cfg, formats)
			if err := m.CheckSections(formats); err != nil {
				return nil, "", errkind.Markf(errkind.BadInput, "%w", err)
			}
		}
		return m, "", nil
	}
	if len(refs) > 0 {
		return nil, "", errkind.Markf(errkind.BadInput, "give either references or an input file (%s), not both", file)
	}
	m, err := LoadFile(file, formats, settings)
	return m, file, err
}

func isFile(arg string) bool {
	if strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		return true
	}
	// A directory is an input a format may read (a Helm chart directory).
	_, err := os.Stat(arg)
	return err == nil
}

// EnvInput returns an input of resolution that comes from the environment
// rather than from m (a format's environment variable, when m does not
// set what it sets), as KEY and VALUE; ok is false when it does not apply.
type EnvInput func(m *MirrorSet) (key, value string, ok bool)

// envInputs are the registered EnvInputs.
var envInputs []EnvInput

// RegisterEnvInput makes in part of every MirrorSet's Digest: a lock
// resolved under another value of it is stale. Formats call it from
// their Register (package formats); registering one twice changes no
// Digest.
func RegisterEnvInput(in EnvInput) { envInputs = append(envInputs, in) }
