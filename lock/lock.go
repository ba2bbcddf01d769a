// Package lock reads and writes ferry.lock: every package, image and mixin
// binary of a resolved closure, by digest. A lock is written atomically and
// byte-identically when nothing changed: entries are sorted and it holds no
// timestamps.
package lock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/redact"
	"github.com/ferryhq/ferry/resolve"
	"github.com/ferryhq/ferry/sizecap"
)

// APIVersion and Kind identify a lock; DefaultFile is its usual name.
const (
	APIVersion  = "ferry.dev/v1alpha1"
	Kind        = "Lock"
	DefaultFile = "ferry.lock"
)

// Lock is the content of ferry.lock.
type Lock struct {
	APIVersion string `yaml:"apiVersion" json:"apiVersion"`
	Kind       string `yaml:"kind" json:"kind"`
	// Serial orders the locks written at one path, under the lock's
	// signature (TUF's version number, its rule against rollback): a
	// lock written over one with other content takes the next serial
	// (see Advance), and a destination that holds a lock refuses one
	// with a lower serial (CheckFresh). Absent (0) in the first lock
	// written at a path and in locks written before ferry kept it.
	Serial int64 `yaml:"serial,omitempty" json:"serial,omitempty"`
	// Inputs is the digest of the normalised inputs the lock was made from.
	Inputs string `yaml:"inputs" json:"inputs"`
	// Input is the input file the lock was made from (ferry.yaml,
	// porter.yaml or crossplane.yaml), relative to the lock's directory;
	// empty when the roots were given on the command line.
	Input string `yaml:"input,omitempty" json:"input,omitempty"`
	// Roots are the sources of the root packages, in the order given.
	Roots    []string  `yaml:"roots,omitempty" json:"roots,omitempty"`
	Packages []Package `yaml:"packages" json:"packages"`
	// Sections holds the top-level sections formats own (`mixins:` of
	// Porter mixins), each read and written by its format alone through
	// Section and SetSection; the lock keeps them as they are.
	Sections format.Sections `yaml:",inline" json:"-"`
}

// Package is one locked package.
type Package struct {
	Source  string `yaml:"source" json:"source"`
	Ref     string `yaml:"ref,omitempty" json:"ref,omitempty"`
	Kind    string `yaml:"kind,omitempty" json:"kind,omitempty"`
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	// Tags are the other tags requested for the package's digest, besides
	// Version, sorted (two roots app:1.0.0 and app:1.0, or a chart's
	// images nginx:1.25 and nginx:1.25.3, of one digest): each is
	// mirrored, verified and installed as Version is. Absent in locks
	// written before ferry kept them.
	Tags      []string `yaml:"tags,omitempty" json:"tags,omitempty"`
	Digest    string   `yaml:"digest,omitempty" json:"digest,omitempty"`
	MediaType string   `yaml:"mediaType,omitempty" json:"mediaType,omitempty"`
	Size      int64    `yaml:"size,omitempty" json:"size,omitempty"`
	Mirror    string   `yaml:"mirror,omitempty" json:"mirror,omitempty"`
	// Attributes are what a package's format records beside the fields
	// every package has (an xpkg's `crossplane:` version constraint).
	Attributes   map[string]string `yaml:",inline" json:"attributes,omitempty"`
	Dependencies []Dependency      `yaml:"dependencies,omitempty" json:"dependencies,omitempty"`
	Images       []Image           `yaml:"images,omitempty" json:"images,omitempty"`
	// Signatures are the signatures, attestations and SBOMs attached to
	// the manifests of the package's graph that the lock carries, each
	// with the trust rule that verified it, if any. Mirrors, archives and
	// imports carry exactly these; verify and install check them.
	Signatures Signatures `yaml:"signatures,omitempty" json:"signatures,omitempty"`
	Replaces   []string   `yaml:"replaces,omitempty" json:"replaces,omitempty"`
	ReplacedBy string     `yaml:"replacedBy,omitempty" json:"replacedBy,omitempty"`
}

// Dependency is one locked dependency edge.
type Dependency struct {
	Name       string `yaml:"name" json:"name"`
	Ref        string `yaml:"ref,omitempty" json:"ref,omitempty"`
	Constraint string `yaml:"constraint,omitempty" json:"constraint,omitempty"`
	// Resolved is "SOURCE@DIGEST" of the package satisfying the edge.
	Resolved string `yaml:"resolved" json:"resolved"`
	// After names siblings installed first (Porter v2 output wiring).
	After []string `yaml:"after,omitempty" json:"after,omitempty"`
	// Role says what the edge is for when it is not a dependency to
	// install: "interface" for the bundle defining a Porter dependency's
	// interface (PEP003), which is mirrored but never installed.
	Role string `yaml:"role,omitempty" json:"role,omitempty"`
	// Use is the ferry.yaml `use` key that chose the target, if any.
	Use string `yaml:"use,omitempty" json:"use,omitempty"`
}

// Signatures is a package's list of attached artifacts. A nil list (a lock
// written before ferry recorded them) is left out of the lock and means
// "not recorded": copies then carry whatever they find. An empty list is
// written as `signatures: []` and means "recorded, none".
type Signatures []Signature

// IsZero reports whether s is nil, so that YAML's omitempty keeps an empty,
// recorded list.
func (s Signatures) IsZero() bool { return s == nil }

// Signature is one signature, attestation or SBOM attached to a manifest
// of a package's graph: as a cosign tag (SUBJECT as sha256-HEX.sig, .att
// or .sbom) or as an OCI referrer of the subject.
type Signature struct {
	// Subject is the digest of the manifest it is attached to.
	Subject string `yaml:"subject" json:"subject"`
	// Kind is "sig", "att" or "sbom" for cosign's tags, or "referrer".
	Kind string `yaml:"kind" json:"kind"`
	// Digest, MediaType and Size describe the artifact's manifest.
	Digest    string `yaml:"digest" json:"digest"`
	MediaType string `yaml:"mediaType,omitempty" json:"mediaType,omitempty"`
	Size      int64  `yaml:"size,omitempty" json:"size,omitempty"`
	// ArtifactType is a referrer's artifact type (a Sigstore bundle, an
	// SBOM format).
	ArtifactType string `yaml:"artifactType,omitempty" json:"artifactType,omitempty"`
	// Rule is the ferry.yaml trust rule (its match prefix, or "--verify-key")
	// that verified the signature; empty when it is carried unverified.
	Rule string `yaml:"rule,omitempty" json:"rule,omitempty"`
}

// Image is an image a package carries, with its original reference.
type Image struct {
	Name      string `yaml:"name" json:"name"`
	Ref       string `yaml:"ref" json:"ref"`
	Digest    string `yaml:"digest" json:"digest"`
	MediaType string `yaml:"mediaType,omitempty" json:"mediaType,omitempty"`
	Size      int64  `yaml:"size,omitempty" json:"size,omitempty"`
}

// sections and attributes hold the keys formats registered: sections
// with their checks. They are made by the first registration (a map
// literal here would need an initialiser, run at every start).
var (
	sectionsMu sync.RWMutex
	sections   map[string]func(*yaml.Node) error
	attributes map[string]bool
)

// RegisterAttribute declares a package field a format records beside the
// fields every package has (Crossplane's `crossplane:`). A package field
// no format registered is an error when a lock is parsed.
func RegisterAttribute(key string) {
	sectionsMu.Lock()
	defer sectionsMu.Unlock()
	if attributes == nil {
		attributes = map[string]bool{}
	}
	attributes[key] = true
}

// RegisterSection declares a top-level lock key a format owns (`mixins`),
// with the check Parse runs on it (nil: none). A format registers its
// sections when its package is initialised; a key no format registered
// is an error when a lock is parsed, so a misspelt key is never kept.
func RegisterSection(key string, check func(*yaml.Node) error) {
	sectionsMu.Lock()
	defer sectionsMu.Unlock()
	if sections == nil {
		sections = map[string]func(*yaml.Node) error{}
	}
	sections[key] = check
}

// checkSections checks every section of l against its format.
func (l *Lock) checkSections() error {
	sectionsMu.RLock()
	defer sectionsMu.RUnlock()
	keys := make([]string, 0, len(l.Sections))
	for k := range l.Sections {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, p := range l.Packages {
		for k := range p.Attributes {
			if !attributes[k] {
				return fmt.Errorf("package %s: unknown key %q", p.Source, k)
			}
		}
	}
	for _, k := range keys {
		check, ok := sections[k]
		if !ok {
			return fmt.Errorf("unknown key %q", k)
		}
		if check != nil {
			n := l.Sections[k]
			if err := check(&n); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	return nil
}

// MarshalJSON writes the lock as JSON (`ferry lock -o json`) with the
// formats' sections as top-level members after the others, as the YAML
// has them.
func (l Lock) MarshalJSON() ([]byte, error) {
	type plain Lock
	b, err := json.Marshal(plain(l))
	if err != nil || len(l.Sections) == 0 {
		return b, err
	}
	keys := make([]string, 0, len(l.Sections))
	for k := range l.Sections {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1]) // without the closing brace
	for _, k := range keys {
		var v any
		n := l.Sections[k]
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("lock section %s: %w", k, err)
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("lock section %s: %w", k, err)
		}
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// Section decodes the top-level section key into v. It reports false,
// leaving v alone, when the lock has no such section.
func (l *Lock) Section(key string, v any) (bool, error) {
	ok, err := l.Sections.Decode(key, v)
	if err != nil {
		return true, fmt.Errorf("lock section %s: %w", key, err)
	}
	return ok, nil
}

// SetSection sets the top-level section key to v; a nil v, or an empty
// slice or map, removes it.
func (l *Lock) SetSection(key string, v any) error {
	if err := l.Sections.Set(key, v); err != nil {
		return fmt.Errorf("lock section %s: %w", key, err)
	}
	return nil
}

// FromGraph builds a lock from a resolved graph and the inputs digest.
func FromGraph(g *resolve.Graph, inputs string) *Lock {
	l := &Lock{APIVersion: APIVersion, Kind: Kind, Inputs: inputs, Roots: g.Roots}
	for _, s := range g.Sources() {
		p := g.Packages[s]
		lp := Package{
			Source:    p.Source,
			Ref:       p.Ref,
			Kind:      p.Kind,
			Version:   p.Version,
			Tags:      p.Tags,
			Digest:    p.Descriptor.Digest.String(),
			MediaType: p.Descriptor.MediaType,
			Size:      p.Descriptor.Size,
			Replaces:  p.Replaces,
		}
		if p.Meta != nil {
			lp.Attributes = p.Meta.Attributes
			for _, im := range p.Meta.Images {
				lp.Images = append(lp.Images, Image{
					Name: im.Name, Ref: im.Ref, Digest: im.Descriptor.Digest.String(),
					MediaType: im.Descriptor.MediaType, Size: im.Descriptor.Size,
				})
			}
		}
		for _, e := range p.Dependencies {
			lp.Dependencies = append(lp.Dependencies, Dependency{
				Name: e.Name, Ref: e.Ref, Constraint: e.Constraint, Resolved: g.Resolved(e), After: e.After, Role: e.Role, Use: e.Use,
			})
		}
		l.Packages = append(l.Packages, lp)
	}
	for old, nw := range g.Replaced {
		l.Packages = append(l.Packages, Package{Source: old, ReplacedBy: nw})
	}
	l.sort()
	return l
}

func (l *Lock) sort() {
	sort.SliceStable(l.Packages, func(i, j int) bool {
		a, b := &l.Packages[i], &l.Packages[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Version != b.Version {
			return versionLess(a.Version, b.Version)
		}
		return a.Digest < b.Digest
	})
	for i := range l.Packages {
		l.Packages[i].Tags = sortedTags(l.Packages[i].Version, l.Packages[i].Tags)
		sigs := l.Packages[i].Signatures
		sort.SliceStable(sigs, func(i, j int) bool {
			a, b := sigs[i], sigs[j]
			if a.Subject != b.Subject {
				return a.Subject < b.Subject
			}
			if a.Kind != b.Kind {
				return a.Kind < b.Kind
			}
			return a.Digest < b.Digest
		})
	}
}

// sortedTags returns tags sorted, each once, without version; nil when
// none is left, so that a lock without extra tags has no `tags:` key.
func sortedTags(version string, tags []string) []string {
	var out []string
	for _, t := range tags {
		if t != "" && t != version && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// AllTags returns every tag of the locked package: Version first, then
// Tags. It is empty for a package locked by digest alone.
func (p *Package) AllTags() []string {
	var out []string
	if p.Version != "" {
		out = append(out, p.Version)
	}
	for _, t := range p.Tags {
		if t != "" && t != p.Version && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// versionLess orders two tags of one repository: semver order when both
// parse, else by string.
func versionLess(a, b string) bool {
	va, ea := semver.NewVersion(strings.ReplaceAll(a, "_", "+"))
	vb, eb := semver.NewVersion(strings.ReplaceAll(b, "_", "+"))
	if ea == nil && eb == nil && !va.Equal(vb) {
		return va.LessThan(vb)
	}
	return a < b
}

// MaxFileSize caps the size of a lock file Read accepts; it is checked
// before the file is parsed, so a huge file cannot take the memory.
var MaxFileSize int64 = 64 << 20

// Read reads and validates a lock file. A missing, malformed, incomplete
// or oversized lock exits with code 2.
func Read(path string) (*Lock, error) {
	data, err := sizecap.ReadFile(path, MaxFileSize)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errkind.Markf(errkind.BadInput, "lock %s not found: run ferry lock first", path)
		}
		if sizecap.IsTooLarge(err) {
			return nil, errkind.Markf(errkind.BadInput, "lock %w", err)
		}
		return nil, errkind.Markf(errkind.BadInput, "reading lock: %w", err)
	}
	l, err := Parse(data)
	if err != nil {
		return nil, errkind.Markf(errkind.BadInput, "%s: %w", path, err)
	}
	return l, nil
}

// Parse parses and validates lock content.
func Parse(data []byte) (*Lock, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var l Lock
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("not a valid lock: %w", err)
	}
	if l.APIVersion != APIVersion || l.Kind != Kind {
		return nil, fmt.Errorf("want apiVersion %s and kind %s, got %q and %q", APIVersion, Kind, l.APIVersion, l.Kind)
	}
	if err := l.checkSections(); err != nil {
		return nil, err
	}
	return &l, l.Validate()
}

// Validate checks that every resolved package has a well-formed digest.
func (l *Lock) Validate() error {
	seen := map[string]bool{}
	replaced := map[string]bool{}
	for _, p := range l.Packages {
		if p.Source == "" {
			return errors.New("a package has no source")
		}
		if p.ReplacedBy != "" {
			if replaced[p.Source] {
				return fmt.Errorf("package %s is replaced twice", p.Source)
			}
			replaced[p.Source] = true
			continue
		}
		key := p.Source + "@" + p.Digest
		if seen[key] {
			return fmt.Errorf("package %s@%s is locked twice", p.Source, p.Digest)
		}
		seen[key] = true
		if _, err := digest.Parse(p.Digest); err != nil {
			return fmt.Errorf("package %s: digest %q: %w", p.Source, p.Digest, err)
		}
		if len(p.Tags) > 0 && p.Version == "" {
			return fmt.Errorf("package %s: tags %s without a version", p.Source, strings.Join(p.Tags, ", "))
		}
		for _, t := range p.Tags {
			if t == "" || t == p.Version {
				return fmt.Errorf("package %s: tags: %q repeats the version or is empty", p.Source, t)
			}
		}
		for _, im := range p.Images {
			if _, err := digest.Parse(im.Digest); err != nil {
				return fmt.Errorf("package %s: image %s: digest %q: %w", p.Source, im.Name, im.Digest, err)
			}
		}
		for _, d := range p.Dependencies {
			src, dg, ok := strings.Cut(d.Resolved, "@")
			if _, err := digest.Parse(dg); !ok || src == "" || err != nil {
				return fmt.Errorf("package %s: dependency %s: resolved %q is not SOURCE@DIGEST", p.Source, d.Name, d.Resolved)
			}
		}
	}
	if err := l.checkCredentials(); err != nil {
		return err
	}
	return l.checkClosure()
}

// checkCredentials refuses a lock holding credentials in a reference
// (user:pass@host/repo, https://user:pass@host): a lock is shared and
// committed, and what it holds ends up in messages. The error shows the
// reference redacted.
func (l *Lock) checkCredentials() error {
	check := func(what, s string) error {
		if r := redact.String(s); r != s {
			return fmt.Errorf("%s %q holds credentials, which a lock must not: use ferry login or a docker config.json", what, r)
		}
		return nil
	}
	for _, r := range l.Roots {
		if err := check("root", r); err != nil {
			return err
		}
	}
	for _, p := range l.Packages {
		errs := []error{check("package source", p.Source), check("package ref", p.Ref), check("package mirror", p.Mirror), check("package replacedBy", p.ReplacedBy)}
		for _, d := range p.Dependencies {
			errs = append(errs, check("dependency ref", d.Ref), check("dependency resolved", d.Resolved))
		}
		for _, im := range p.Images {
			errs = append(errs, check("image ref", im.Ref))
		}
		for _, r := range p.Replaces {
			errs = append(errs, check("package replaces", r))
		}
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
	}
	// Formats' sections (mixin feeds and binary URLs): every scalar.
	var walk func(key string, n *yaml.Node) error
	walk = func(key string, n *yaml.Node) error {
		if n.Kind == yaml.ScalarNode {
			return check(key, n.Value)
		}
		for _, c := range n.Content {
			if err := walk(key, c); err != nil {
				return err
			}
		}
		return nil
	}
	for k, n := range l.Sections {
		if err := walk(k, &n); err != nil {
			return err
		}
	}
	return nil
}

// checkClosure checks that the lock is whole: every root, every
// dependency edge and every replacement names a package the lock holds.
// A lock cut short, or one whose digests were edited, fails here before
// anything mirrors or installs from it.
func (l *Lock) checkClosure() error {
	resolved := map[string]bool{} // SOURCE@DIGEST
	sources := map[string]bool{}
	replacedBy := map[string]string{}
	for _, p := range l.Packages {
		if p.ReplacedBy != "" {
			replacedBy[p.Source] = p.ReplacedBy
			continue
		}
		resolved[p.Source+"@"+p.Digest] = true
		sources[p.Source] = true
	}
	// has reports whether source (at d, when d is set) is in the lock,
	// itself or through the chain of packages replacing it.
	has := func(source, d string) bool {
		for range len(replacedBy) + 1 {
			if (d == "" && sources[source]) || (d != "" && resolved[source+"@"+d]) {
				return true
			}
			nw, ok := replacedBy[source]
			if !ok {
				return false
			}
			source = nw
		}
		return false // a cycle of replacements
	}
	const hint = "the lock is incomplete or was edited: run ferry lock again"
	for _, p := range l.Packages {
		if p.ReplacedBy != "" && !has(p.ReplacedBy, "") {
			return fmt.Errorf("package %s is replaced by %s, which is not in the lock: %s", p.Source, p.ReplacedBy, hint)
		}
	}
	for _, r := range l.Roots {
		src, d, _ := strings.Cut(r, "@")
		if !has(src, d) {
			return fmt.Errorf("root %s is not in the lock: %s", r, hint)
		}
	}
	for _, p := range l.Packages {
		for _, dep := range p.Dependencies {
			src, d, _ := strings.Cut(dep.Resolved, "@")
			if !has(src, d) {
				return fmt.Errorf("package %s: dependency %s: %s is not in the lock: %s", p.Source, dep.Name, dep.Resolved, hint)
			}
		}
	}
	return nil
}

// Marshal returns the lock's canonical YAML.
func (l *Lock) Marshal() ([]byte, error) {
	l.sort()
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write writes the lock to path atomically: a temporary file in the same
// directory, synced, then renamed. It leaves an identical file untouched.
//
// A lock already at path sets the serial first (Advance): the written
// lock's serial is above the old one's unless the content is the same.
func (l *Lock) Write(path string) error {
	old, oldErr := os.ReadFile(path)
	if oldErr == nil {
		l.Advance(old)
	}
	data, err := l.Marshal()
	if err != nil {
		return err
	}
	if oldErr == nil && bytes.Equal(old, data) {
		return nil
	}
	return WriteFileAtomic(path, data, 0o644)
}

// WriteFileAtomic writes data to path through a temporary file and rename.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Package returns the locked package for source, or nil.
func (l *Lock) Package(source string) *Package {
	for i := range l.Packages {
		if l.Packages[i].Source == source {
			return &l.Packages[i]
		}
	}
	return nil
}

// Resolved returns the packages that were resolved (not replaced).
func (l *Lock) Resolved() []*Package {
	var out []*Package
	for i := range l.Packages {
		if l.Packages[i].ReplacedBy == "" {
			out = append(out, &l.Packages[i])
		}
	}
	return out
}

// Locked returns the locked versions of each source, for keeping them on
// the next resolve.
func (l *Lock) Locked() map[string][]resolve.Locked {
	out := map[string][]resolve.Locked{}
	for _, p := range l.Resolved() {
		// Every tag of the digest is a version to keep: a request by an
		// extra tag keeps the locked digest as one by Version does.
		for _, t := range p.AllTags() {
			out[p.Source] = append(out[p.Source], resolve.Locked{Version: t, Digest: digest.Digest(p.Digest), Ref: p.Ref})
		}
		if p.Version == "" {
			out[p.Source] = append(out[p.Source], resolve.Locked{Digest: digest.Digest(p.Digest), Ref: p.Ref})
		}
	}
	return out
}

// PackageAt returns the locked package of source at digest d, or nil.
func (l *Lock) PackageAt(source, d string) *Package {
	for i := range l.Packages {
		if l.Packages[i].Source == source && l.Packages[i].Digest == d {
			return &l.Packages[i]
		}
	}
	return nil
}

// versions counts the resolved packages of each source.
func (l *Lock) versions() map[string]int {
	n := map[string]int{}
	for _, p := range l.Resolved() {
		n[p.Source]++
	}
	return n
}

// Descriptor returns the package's root manifest descriptor.
func (p *Package) Descriptor() ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: p.MediaType, Digest: digest.Digest(p.Digest), Size: p.Size}
}

// Graph rebuilds the resolved graph from the lock alone, for plans and
// explanations that must not touch a registry.
func (l *Lock) Graph() *resolve.Graph {
	g := &resolve.Graph{Roots: l.Roots, Packages: map[string]*resolve.Package{}, Replaced: map[string]string{}}
	versions := l.versions()
	for _, p := range l.Packages {
		if p.ReplacedBy != "" {
			g.Replaced[p.Source] = p.ReplacedBy
			continue
		}
		rp := &resolve.Package{
			ID: resolve.PackageID(p.Source, p.Digest, versions[p.Source]), Source: p.Source, Ref: p.Ref, Kind: p.Kind, Version: p.Version, Tags: p.Tags,
			Descriptor: p.Descriptor(), Replaces: p.Replaces,
			Meta: &format.Metadata{Kind: p.Kind, Attributes: p.Attributes},
		}
		for _, d := range p.Dependencies {
			target, dg, _ := strings.Cut(d.Resolved, "@")
			target = resolve.PackageID(target, dg, versions[target])
			rp.Dependencies = append(rp.Dependencies, resolve.Edge{Name: d.Name, Ref: d.Ref, Constraint: d.Constraint, Target: target, After: d.After, Role: d.Role, Use: d.Use})
		}
		for _, im := range p.Images {
			rp.Meta.Images = append(rp.Meta.Images, format.Image{Name: im.Name, Ref: im.Ref, Descriptor: ocispec.Descriptor{
				MediaType: im.MediaType, Digest: digest.Digest(im.Digest), Size: im.Size,
			}})
		}
		g.Packages[rp.ID] = rp
	}
	return g
}
