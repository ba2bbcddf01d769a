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

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/resolve"
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
	APIVersion string            `yaml:"apiVersion" json:"apiVersion"`
	Kind       string            `yaml:"kind" json:"kind"`
	Packages   []Package         `yaml:"packages" json:"packages"`
	Mixins     []Mixin           `yaml:"mixins,omitempty" json:"mixins,omitempty"`
	Platforms  []string          `yaml:"platforms,omitempty" json:"platforms,omitempty"`
	Replace    []Replace         `yaml:"replace,omitempty" json:"replace,omitempty"`
	Use        map[string]string `yaml:"use,omitempty" json:"use,omitempty"`
	Mirror     Mirror            `yaml:"mirror,omitempty" json:"mirror,omitempty"`
}

// Package is a root package.
type Package struct {
	Ref     string `yaml:"ref" json:"ref"`
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
}

// Mixin is a Porter mixin to resolve from a feed.
type Mixin struct {
	Name    string `yaml:"name" json:"name"`
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	Feed    string `yaml:"feed,omitempty" json:"feed,omitempty"`
}

// Replace redirects every edge to From to To.
type Replace struct {
	From string `yaml:"from" json:"from"`
	To   string `yaml:"to" json:"to"`
}

// Mirror is the default mirror.
type Mirror struct {
	To string `yaml:"to,omitempty" json:"to,omitempty"`
}

// Load reads and validates a ferry.yaml. Errors exit with code 2.
func Load(path string) (*MirrorSet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, exitcode.BadInput("%s not found: pass a ROOT reference or write a %s", path, DefaultFile)
		}
		return nil, exitcode.BadInput("reading %s: %w", path, err)
	}
	m, err := Parse(data)
	if err != nil {
		return nil, exitcode.BadInput("%s: %w", path, err)
	}
	return m, nil
}

// Parse parses and validates ferry.yaml content.
func Parse(data []byte) (*MirrorSet, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var m MirrorSet
	if err := dec.Decode(&m); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if m.APIVersion != APIVersion || m.Kind != Kind {
		return nil, fmt.Errorf("want apiVersion %s and kind %s, got %q and %q", APIVersion, Kind, m.APIVersion, m.Kind)
	}
	return &m, m.Validate()
}

// Validate checks references, replaces and platforms.
func (m *MirrorSet) Validate() error {
	if len(m.Packages) == 0 && len(m.Mixins) == 0 {
		return errors.New("no packages or mixins to resolve")
	}
	for i, p := range m.Packages {
		if _, err := ociref.Parse(p.Ref); err != nil {
			return fmt.Errorf("packages[%d]: %w", i, err)
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
	for i, mx := range m.Mixins {
		if mx.Name == "" || strings.ContainsAny(mx.Name, `/\`) || strings.Contains(mx.Name, "..") {
			return fmt.Errorf("mixins[%d]: invalid name %q", i, mx.Name)
		}
	}
	for _, p := range m.Platforms {
		if os, arch, ok := strings.Cut(p, "/"); !ok || os == "" || arch == "" {
			return fmt.Errorf("platforms: %q is not OS/ARCH", p)
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
		return nil, exitcode.With(exitcode.Usage, err)
	}
	return m, nil
}

// Roots returns the root packages to resolve.
func (m *MirrorSet) Roots() []resolve.Root {
	out := make([]resolve.Root, 0, len(m.Packages))
	for _, p := range m.Packages {
		out = append(out, resolve.Root{Ref: p.Ref, Constraint: p.Version})
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
// an input: one lock serves several mirrors.
func (m *MirrorSet) Digest() string {
	type norm struct {
		Packages  []Package         `json:"packages"`
		Mixins    []Mixin           `json:"mixins"`
		Platforms []string          `json:"platforms"`
		Replace   []Replace         `json:"replace"`
		Use       map[string]string `json:"use"`
	}
	n := norm{
		Packages:  append([]Package{}, m.Packages...),
		Mixins:    append([]Mixin{}, m.Mixins...),
		Platforms: append([]string{}, m.Platforms...),
		Replace:   append([]Replace{}, m.Replace...),
		Use:       map[string]string{},
	}
	for k, v := range m.Use {
		n.Use[k] = v
	}
	sort.Slice(n.Packages, func(i, j int) bool {
		return n.Packages[i].Ref+" "+n.Packages[i].Version < n.Packages[j].Ref+" "+n.Packages[j].Version
	})
	sort.Slice(n.Mixins, func(i, j int) bool { return n.Mixins[i].Name < n.Mixins[j].Name })
	sort.Strings(n.Platforms)
	sort.Slice(n.Replace, func(i, j int) bool { return n.Replace[i].From < n.Replace[j].From })
	b, _ := json.Marshal(n)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// FromArgs returns the MirrorSet named by command-line ROOTs: OCI
// references, or one input file (ferry.yaml or porter.yaml, see fileKind);
// with none, ferry.yaml in the working directory. It also returns the file
// the inputs came from, if any.
func FromArgs(args []string, version string) (*MirrorSet, string, error) {
	if len(args) == 0 {
		m, err := Load(DefaultFile)
		return m, DefaultFile, err
	}
	var refs []string
	var file string
	for _, a := range args {
		if isFile(a) {
			if file != "" {
				return nil, "", exitcode.BadInput("more than one input file: %s and %s", file, a)
			}
			file = a
			continue
		}
		refs = append(refs, a)
	}
	if file == "" {
		m, err := FromRefs(refs, version)
		return m, "", err
	}
	if len(refs) > 0 {
		return nil, "", exitcode.BadInput("give either references or an input file (%s), not both", file)
	}
	m, err := LoadFile(file)
	return m, file, err
}

func isFile(arg string) bool {
	if strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		return true
	}
	st, err := os.Stat(arg)
	return err == nil && !st.IsDir()
}
