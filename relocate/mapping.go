// Package relocate copies a locked closure into a mirror registry with
// oras-go: whole graphs by digest, tags, and cosign signatures, skipping
// what the mirror has and mounting blobs it already holds in another
// repository.
package relocate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/ociref"
)

// Mapping places source repositories in a mirror: "SRCHOST/PATH" maps to
// "HOST/PREFIX/PATH".
//
// A source that is not a registry repository (a URL, see
// ociref.IsURLSource) lands where the format that owns it places it
// (format.Origin's MirrorPath: a chart from a classic Helm repository at
// HOST/PREFIX/charts/NAME); WithFormats sets that up.
type Mapping struct {
	Host   string
	Prefix string
	// Place returns the repository path below HOST/PREFIX for a source
	// that is not a registry repository, or false.
	Place func(source string) (string, bool) `json:"-"`
	// Flatten joins the path below HOST/PREFIX into one path component,
	// its "/" separators replaced by "-": SRCHOST/a/b/c maps to
	// HOST/PREFIX/a-b-c. It is for registries that take NAMESPACE/NAME
	// only (Quay, Docker Hub), with a PREFIX of one component (the
	// namespace). The mirror records each package's repository in the
	// lock, so verify, install and node configuration follow it. Two
	// sources that flatten alike (a/b-c, a-b/c) are refused by Check.
	Flatten bool `json:"flatten,omitempty"`
}

// CheckFlatten refuses a flattening mapping whose repositories would still
// have more than two path components (a PREFIX of more than one).
func (m Mapping) CheckFlatten() error {
	if m.Flatten && strings.Contains(m.Prefix, "/") {
		return errkind.Markf(errkind.BadInput, "mirror %s: flattened repository paths go below a prefix of one path component (a namespace), not %q", m, m.Prefix)
	}
	return nil
}

// Join returns the mirror repository for path, a repository path below
// HOST/PREFIX, flattened when m.Flatten is set.
func (m Mapping) Join(path string) string {
	if m.Flatten {
		path = strings.ReplaceAll(path, "/", "-")
	}
	return m.String() + "/" + path
}

// WithFormats returns m placing non-registry sources as the formats that
// own them say.
func (m Mapping) WithFormats(formats []format.Format) Mapping {
	if len(formats) == 0 {
		return m
	}
	m.Place = func(source string) (string, bool) {
		o, ok := format.OriginOf(formats, source)
		if !ok {
			return "", false
		}
		return o.MirrorPath(source), true
	}
	return m
}

// ParseMapping parses a --to or --mirror value: HOST[/PREFIX].
func ParseMapping(to string) (Mapping, error) {
	to = strings.TrimSuffix(strings.TrimSpace(to), "/")
	if to == "" {
		return Mapping{}, errkind.Markf(errkind.BadInput, "no mirror given: want HOST[/PREFIX]")
	}
	if host, _, _ := strings.Cut(to, "/"); strings.Contains(host, "@") {
		// Never quote to: it holds a password.
		return Mapping{}, errkind.Markf(errkind.BadInput, "mirror: registry references must not contain credentials (user:password@host); use ferry login or a docker config.json instead")
	}
	if strings.Contains(to, "://") {
		return Mapping{}, errkind.Markf(errkind.BadInput, "mirror %q: write HOST[/PREFIX] without a URL scheme", to)
	}
	host, prefix, _ := strings.Cut(to, "/")
	if !ociref.IsRegistry(host) {
		return Mapping{}, errkind.Markf(errkind.BadInput, "mirror %q: %q is not a registry host (it needs a '.' or ':' or to be localhost)", to, host)
	}
	if i := strings.IndexAny(prefix, ":@"); i >= 0 {
		return Mapping{}, errkind.Markf(errkind.BadInput, "mirror %q: a mirror is HOST[/PREFIX], where repositories land, not a reference with a tag or digest (%q)", to, prefix[i:])
	}
	// The prefix must be the start of a valid repository path: it is
	// checked with a repository under it, a name never shown to the user.
	if _, err := ociref.Parse(to + "/x"); err != nil {
		return Mapping{}, errkind.Markf(errkind.BadInput, "mirror %q: %q is not a valid repository prefix (lowercase letters, digits and the separators . _ - between path components /)", to, prefix)
	}
	return Mapping{Host: host, Prefix: prefix}, nil
}

// String returns HOST[/PREFIX].
func (m Mapping) String() string {
	if m.Prefix == "" {
		return m.Host
	}
	return m.Host + "/" + m.Prefix
}

// Repo returns the mirror repository for a source repository.
func (m Mapping) Repo(source string) string {
	if ociref.IsURLSource(source) {
		if m.Place != nil {
			if path, ok := m.Place(source); ok {
				return m.Join(path)
			}
		}
		_, source, _ = strings.Cut(source, "://")
	}
	_, path, _ := strings.Cut(source, "/")
	return m.Join(path)
}

// Check fails, naming them, when two sources would land on one mirror
// repository.
func (m Mapping) Check(sources []string) error {
	by := map[string][]string{}
	for _, s := range sources {
		by[m.Repo(s)] = append(by[m.Repo(s)], s)
	}
	var clashes []string
	for dst, srcs := range by {
		if len(srcs) > 1 {
			sort.Strings(srcs)
			clashes = append(clashes, fmt.Sprintf("%s <- %s", dst, strings.Join(srcs, ", ")))
		}
	}
	if len(clashes) == 0 {
		return nil
	}
	sort.Strings(clashes)
	return errkind.Markf(errkind.BadInput, "mirror layout %s maps several sources to one repository, nothing was copied:\n  %s", m, strings.Join(clashes, "\n  "))
}

// checkDestination checks, before anything is copied, that opts.To maps
// the sources of pkgs (packages of l) to distinct repositories and suits
// l's formats. One source may be locked at several versions (Porter's and
// Helm's unshared dependencies): it is one repository. Under
// opts.AllowBrokenReferences, the references the layout breaks are
// returned instead of refused.
func checkDestination(l *lock.Lock, pkgs []*lock.Package, opts Options) ([]BrokenEdge, error) {
	seen := make(map[string]bool, len(pkgs))
	var sources []string
	for _, p := range pkgs {
		if !seen[p.Source] {
			seen[p.Source] = true
			sources = append(sources, p.Source)
		}
	}
	if err := opts.To.Check(sources); err != nil {
		return nil, err
	}
	if opts.AllowBrokenReferences {
		return opts.To.BrokenEdges(l, opts.Formats), nil
	}
	return nil, opts.To.CheckLayout(l, opts.Formats)
}
