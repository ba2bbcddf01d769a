// Package images is ferry.yaml's `images:` section: plain container
// images to lock, mirror, verify and install, named one by one, as tag
// selections (exact tags and digests, semver ranges, regular expressions
// to include and exclude, the newest N), or read from files (a plain
// list, one reference a line, as Zarf and Hauler accept; a folder of
// Kubernetes manifests, every image of every workload, as `zarf dev
// find-images` finds them). Every entry becomes roots of kind image;
// selections are resolved at lock time into exact tags (resolve's
// TagSelection), which the lock records by digest.
package images

import (
	"bufio"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/lazyregexp"
	"github.com/ferryhq/ferry/kubeimages"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/resolve"
	"github.com/ferryhq/ferry/sizecap"
)

// Register declares what the format adds to the pipeline's packages
// (package formats' one initialiser calls it: an initialiser here would
// read in one more page of machine code at every start of every
// command). Calling it again changes nothing.
// For images: the lock field platforms.
func Register() { lock.RegisterAttribute(resolve.AttributePlatform) }

// Key is the ferry.yaml key the format owns.
const Key = "images"

// MaxListSize caps an image list file (`list:`) and each manifest file
// (`manifests:`) read.
var MaxListSize int64 = 64 << 20

// Entry is one item of `images:`: exactly one of Ref, List and Manifests.
type Entry struct {
	// Ref is an image: a repository, with a tag or digest unless the
	// entry selects tags; untagged and without selection it means
	// `latest`, as docker reads it.
	Ref string `yaml:"ref,omitempty"`
	// Tags are exact tags, digests ("sha256:…") and semver ranges
	// (">=1.26 <2", "1.x", "~1.25"): every exact tag and digest is
	// locked, and every tag that satisfies a range.
	Tags []string `yaml:"tags,omitempty"`
	// Match are regular expressions (Go RE2) a selected tag must match
	// one of; a string or a list.
	Match Patterns `yaml:"match,omitempty"`
	// Exclude are regular expressions no selected tag matches; a string
	// or a list.
	Exclude Patterns `yaml:"exclude,omitempty"`
	// Newest keeps the newest N tags the ranges and expressions selected
	// (exact tags and digests are always kept).
	Newest int `yaml:"newest,omitempty"`
	// Platforms, when set (one platform, "linux/amd64"), locks each
	// image's manifest for that platform instead of its index (see
	// resolve.Root.Platform); without it the index is copied whole.
	Platforms []string `yaml:"platforms,omitempty"`
	// List is a file of image references, one a line; blank lines and
	// lines starting with # are skipped, and so is what follows " #".
	List string `yaml:"list,omitempty"`
	// Manifests is a folder of Kubernetes manifests (*.yaml, *.yml,
	// *.json, searched recursively): every image its objects deploy.
	Manifests string `yaml:"manifests,omitempty"`
}

// entryKeys are the keys of an entry.
var entryKeys = []string{"exclude", "list", "manifests", "match", "newest", "platforms", "ref", "tags"}

// UnmarshalYAML reads an entry, refusing a key it does not know
// (Node.Decode does not inherit the decoder's KnownFields).
func (e *Entry) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; !slices.Contains(entryKeys, k.Value) {
				return fmt.Errorf("line %d: unknown key %q in an entry of images (known keys: %s)", k.Line, k.Value, strings.Join(entryKeys, ", "))
			}
		}
	}
	type plain Entry
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*e = Entry(p)
	return nil
}

// Patterns is one regular expression or a list of them.
type Patterns []string

// UnmarshalYAML reads a string or a list of strings.
func (p *Patterns) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*p = Patterns{n.Value}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*p = list
	return nil
}

// Format is the `images:` section owner.
type Format struct{}

var (
	_ mirrorset.SectionOwner     = Format{}
	_ mirrorset.RootOwner        = Format{}
	_ mirrorset.RootSectionOwner = Format{}
)

// Name returns "images".
func (Format) Name() string { return "images" }

// Sections lists the ferry.yaml key the format owns: `images`.
func (Format) Sections() []string { return []string{Key} }

// RootSections lists the key that names roots: `images`. A ferry.yaml
// read for the settings of a ROOT given on the command line does not add
// its images.
func (Format) RootSections() []string { return []string{Key} }

// CheckSections validates `images:` without reading the files it names.
func (Format) CheckSections(m *mirrorset.MirrorSet) error {
	_, err := entriesOf(m)
	return err
}

// SectionRoots returns the roots `images:` names, reading its lists and
// manifest folders (paths relative to the working directory).
func (Format) SectionRoots(m *mirrorset.MirrorSet) ([]mirrorset.Package, error) {
	entries, err := entriesOf(m)
	if err != nil {
		return nil, err
	}
	var out []mirrorset.Package
	for i, e := range entries {
		where := fmt.Sprintf("%s[%d]", Key, i)
		pkgs, err := e.roots()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		out = append(out, pkgs...)
	}
	return out, nil
}

// entriesOf decodes and checks `images:`.
func entriesOf(m *mirrorset.MirrorSet) ([]Entry, error) {
	var entries []Entry
	if m == nil {
		return nil, nil
	}
	if _, err := m.Section(Key, &entries); err != nil {
		return nil, err
	}
	for i, e := range entries {
		if err := e.check(); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", Key, i, err)
		}
	}
	return entries, nil
}

// selects reports whether the entry selects tags.
func (e Entry) selects() bool {
	return len(e.Tags) > 0 || len(e.Match) > 0 || len(e.Exclude) > 0 || e.Newest != 0
}

func (e Entry) check() error {
	n := 0
	for _, s := range []string{e.Ref, e.List, e.Manifests} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("give one of ref, list (a file of references) or manifests (a folder of Kubernetes manifests)")
	}
	switch {
	case len(e.Platforms) > 1:
		return fmt.Errorf("platforms: name one platform: keeping several would mean writing an index the source never served (not supported yet); without platforms the index is copied whole")
	case len(e.Platforms) == 1:
		if _, err := resolve.ParsePlatform(e.Platforms[0]); err != nil {
			return fmt.Errorf("platforms: %w", err)
		}
	}
	if e.Ref == "" {
		if e.selects() {
			return fmt.Errorf("tags, match, exclude and newest select tags of a ref, not of a list or manifests entry")
		}
		return nil
	}
	ref, err := ociref.ParseNormalized(e.Ref, "")
	if err != nil {
		return err
	}
	if !e.selects() {
		return nil
	}
	if ref.Tag != "" || ref.Digest != "" {
		return fmt.Errorf("%s: name the repository without tag or digest when choosing tags with tags, match, exclude or newest", e.Ref)
	}
	if e.Newest < 0 {
		return fmt.Errorf("newest: %d is negative", e.Newest)
	}
	exact, sel, err := e.split()
	if err != nil {
		return err
	}
	if sel == nil && len(exact) == 0 {
		return fmt.Errorf("%s: no tag to lock", e.Ref)
	}
	if sel != nil {
		if err := sel.Check(); err != nil {
			return fmt.Errorf("%s: %w", e.Ref, err)
		}
	}
	return nil
}

// validTag is the OCI distribution spec's tag grammar.
var validTag = lazyregexp.New(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)

// wildcard matches a semver wildcard component ("1.x", "2.*", "x").
var wildcard = lazyregexp.New(`(^|\.)[xX*](\.|$)`)

// isRange reports whether an item of tags is a semver range rather than
// an exact tag: it holds an operator, a space, a comma or "||", or a
// wildcard component, or is not a valid tag.
func isRange(s string) bool {
	return strings.ContainsAny(s, "<>=~^*, |") || wildcard.MatchString(s) || !validTag.MatchString(s)
}

// split returns the entry's exact tags and digests (as ":TAG" or
// "@DIGEST" suffixes) and its selection (nil when it selects by exact
// tags alone).
func (e Entry) split() (exact []string, sel *resolve.TagSelection, err error) {
	var ranges []string
	for _, t := range e.Tags {
		t = strings.TrimSpace(t)
		switch {
		case strings.HasPrefix(t, "sha256:"):
			if _, err := ociref.Parse("localhost/x@" + t); err != nil {
				return nil, nil, fmt.Errorf("tags: %q is not a digest", t)
			}
			exact = append(exact, "@"+t)
		case t == "":
			return nil, nil, fmt.Errorf("tags: an empty tag")
		case isRange(t):
			ranges = append(ranges, t)
		default:
			exact = append(exact, ":"+t)
		}
	}
	if len(ranges) > 0 || len(e.Match) > 0 || len(e.Exclude) > 0 || e.Newest > 0 {
		sel = &resolve.TagSelection{Ranges: ranges, Match: e.Match, Exclude: e.Exclude, Newest: e.Newest}
	}
	return exact, sel, nil
}

// roots returns the entry's roots, for its platform when it names one.
func (e Entry) roots() ([]mirrorset.Package, error) {
	out, err := e.refRoots()
	if err != nil {
		return nil, err
	}
	if len(e.Platforms) == 1 {
		for i := range out {
			out[i].Platform = e.Platforms[0]
		}
	}
	return out, nil
}

// refRoots returns the entry's roots, whole.
func (e Entry) refRoots() ([]mirrorset.Package, error) {
	switch {
	case e.List != "":
		refs, err := readList(e.List)
		if err != nil {
			return nil, err
		}
		return imageRoots(refs), nil
	case e.Manifests != "":
		refs, err := readManifests(e.Manifests)
		if err != nil {
			return nil, err
		}
		return imageRoots(refs), nil
	}
	ref, err := ociref.ParseNormalized(e.Ref, "")
	if err != nil {
		return nil, err
	}
	if !e.selects() {
		return imageRoots([]string{ref.String()}), nil
	}
	exact, sel, err := e.split()
	if err != nil {
		return nil, err
	}
	var out []mirrorset.Package
	for _, x := range exact {
		out = append(out, mirrorset.Package{Ref: ref.Repo() + x, Kind: format.KindImage})
	}
	if sel != nil {
		out = append(out, mirrorset.Package{Ref: ref.Repo(), Kind: format.KindImage, Select: sel})
	}
	return out, nil
}

// imageRoots returns a root of kind image per reference.
func imageRoots(refs []string) []mirrorset.Package {
	out := make([]mirrorset.Package, 0, len(refs))
	for _, r := range refs {
		out = append(out, mirrorset.Package{Ref: r, Kind: format.KindImage})
	}
	return out
}

// ParseList reads an image list: one reference a line, normalised the
// Docker way; blank lines, lines starting with # and what follows " #"
// are skipped. A line that is not a reference is an error naming it.
func ParseList(name, content string) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(content))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ref, err := ociref.ParseNormalized(line, "")
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		out = append(out, ref.String())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

func readList(path string) ([]string, error) {
	data, err := sizecap.ReadFile(path, MaxListSize)
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	refs, err := ParseList(path, string(data))
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	if len(refs) == 0 {
		return nil, fmt.Errorf("list: %s names no image", path)
	}
	return refs, nil
}

// readManifests returns every image the objects of the manifest files
// under dir deploy (kubeimages), in file order, each once.
func readManifests(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("manifests: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		data, err := sizecap.ReadFile(f, MaxListSize)
		if err != nil {
			return nil, fmt.Errorf("manifests: %w", err)
		}
		imgs, _, err := kubeimages.FileImages(string(data), nil)
		if err != nil {
			return nil, fmt.Errorf("manifests: %s: %w", f, err)
		}
		for _, im := range imgs {
			ref, err := ociref.ParseNormalized(im, "")
			if err != nil {
				return nil, fmt.Errorf("manifests: %s: image %q: %w", f, im, err)
			}
			if !seen[ref.String()] {
				seen[ref.String()] = true
				out = append(out, ref.String())
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("manifests: no Kubernetes object under %s deploys an image", dir)
	}
	return out, nil
}
