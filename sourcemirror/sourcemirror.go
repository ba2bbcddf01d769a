// Package sourcemirror reads packages from mirrors of their sources while
// every name stays the source's: ferry.yaml's `mirrors:` and
// `--mirror-source HOST=LOCATION` map a registry host, a host/path prefix
// or a chart (or KUDO) repository URL to one or more locations serving the
// same content, tried in order, with the source itself last, or never
// (offline).
//
// The rules are those of the two mirror configurations container runtimes
// read:
//
//   - containers/image docs/containers-registries.conf.5.md and
//     pkg/sysregistriesv2/system_registries_v2.go: a `[[registry]]` entry
//     matches a reference by its `prefix` (the longest matching prefix
//     wins, FindRegistry), its `[[registry.mirror]]` locations are tried in
//     the order written and the primary location last
//     (PullSourcesFromReference), and a mirror location replaces the
//     matched prefix ("docker.io/library/nginx" on mirror
//     "registry.internal/dockerhub" is read at
//     "registry.internal/dockerhub/library/nginx");
//   - containerd docs/hosts.md: the `[host."…"]` entries of a namespace's
//     hosts.toml are tried in order before its `server`, and a host URL with
//     a path and `override_path = true` ("https://registry.internal/v2/dockerhub")
//     serves docker.io's "library/nginx" as "dockerhub/library/nginx".
//
// The redirection is one place every reader goes through: Registries opens
// a source (format.Open asks it, see format.SourceOpener) as a Repository
// that reads from each location in turn. Resolution, the lock, the mirror
// layout and everything installed keep the source's names; where a package
// was read is recorded (Table.ReadFrom) for reports.
package sourcemirror

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/ferryhq/ferry/internal/lazyregexp"
	"github.com/ferryhq/ferry/ociref"
)

// Entry maps one source prefix to the locations serving its content.
type Entry struct {
	// Prefix is a registry host ("docker.io"), a host/path prefix
	// ("quay.io/prometheus") or a repository URL
	// ("https://prometheus-community.github.io/helm-charts").
	Prefix string
	// Locations are tried in order. A location equal to Prefix is the
	// source itself, at that place in the order.
	Locations []string
}

// Table is a run's set of source mirrors. It is safe for concurrent use.
type Table struct {
	entries []Entry // normalised, longest prefix first
	offline bool

	mu       sync.Mutex
	readFrom map[string]string // SOURCE@DIGEST -> where it was read
	down     map[string]error  // location hosts that could not be reached
}

// New checks entries and returns their Table. offline drops the sources
// themselves: a source with no mirror cannot be read at all.
func New(entries []Entry, offline bool) (*Table, error) {
	t := &Table{offline: offline, readFrom: map[string]string{}, down: map[string]error{}}
	seen := map[string]bool{}
	for _, e := range entries {
		prefix, isURL, err := normalise(e.Prefix)
		if err != nil {
			return nil, fmt.Errorf("mirrors: %q: %w", e.Prefix, err)
		}
		if seen[prefix] {
			return nil, fmt.Errorf("mirrors: %q is given twice", e.Prefix)
		}
		seen[prefix] = true
		if len(e.Locations) == 0 {
			return nil, fmt.Errorf("mirrors: %q: no location", e.Prefix)
		}
		n := Entry{Prefix: prefix}
		for _, l := range e.Locations {
			loc, locURL, err := normalise(l)
			if err != nil {
				return nil, fmt.Errorf("mirrors: %q: location %q: %w", e.Prefix, l, err)
			}
			if locURL != isURL {
				if isURL {
					return nil, fmt.Errorf("mirrors: %q: location %q: a repository URL is mirrored by another http(s):// URL", e.Prefix, l)
				}
				return nil, fmt.Errorf("mirrors: %q: location %q: a registry is mirrored by another registry HOST[/PATH], without a scheme", e.Prefix, l)
			}
			n.Locations = append(n.Locations, loc)
		}
		t.entries = append(t.entries, n)
	}
	sort.SliceStable(t.entries, func(i, j int) bool { return len(t.entries[i].Prefix) > len(t.entries[j].Prefix) })
	return t, nil
}

// Empty reports whether t changes nothing: no mirror and not offline.
func (t *Table) Empty() bool { return t == nil || (len(t.entries) == 0 && !t.offline) }

// Offline reports whether sources are never read themselves.
func (t *Table) Offline() bool { return t != nil && t.offline }

// Entries returns t's entries, normalised, longest prefix first.
func (t *Table) Entries() []Entry {
	if t == nil {
		return nil
	}
	return append([]Entry(nil), t.entries...)
}

// normalise returns a prefix or location in the form sources are written:
// "oci://" dropped, no trailing "/", Docker Hub's other names as
// "docker.io"; isURL for an http(s):// URL.
func normalise(s string) (string, bool, error) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "/")
	if s == "" {
		return "", false, errors.New("empty")
	}
	if lower := strings.ToLower(s); strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return "", false, errors.New("want an http(s)://HOST[/PATH] URL without credentials, query or fragment")
		}
		return s, true, nil
	}
	s = strings.TrimPrefix(s, ociref.OCIScheme)
	if strings.Contains(s, "://") {
		return "", false, errors.New("want a registry HOST[/PATH] or an http(s):// repository URL")
	}
	host, path, _ := strings.Cut(s, "/")
	if !ociref.IsRegistry(host) {
		return "", false, fmt.Errorf("%q is no registry host (one with a '.' or ':', or localhost)", host)
	}
	switch host {
	case "index.docker.io", "registry-1.docker.io":
		host = ociref.DockerHub
	}
	if path == "" {
		return host, false, nil
	}
	// A prefix of repository paths (distribution/reference's path
	// components), not a reference: "docker.io/bitnami" is one.
	if strings.ContainsAny(path, ":@") {
		return "", false, errors.New("name a registry or repository prefix, without tag or digest")
	}
	for _, c := range strings.Split(path, "/") {
		if !pathComponent.MatchString(c) {
			return "", false, fmt.Errorf("%q is not a repository path component", c)
		}
	}
	return host + "/" + path, false, nil
}

// pathComponent is a repository path component, as
// github.com/distribution/reference's regexp.go pathComponent writes it.
var pathComponent = lazyregexp.New(`^[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*$`)

// Locations returns where source (a package source as the lock records
// it: HOST/PATH, or a repository URL REPO/NAME, possibly behind a
// format's scheme prefix such as "kudo+") is read from, in order: the
// mirrors of the longest matching prefix, then the source itself, unless
// the entry lists it at another place, or t is offline. Empty: nowhere
// (offline and no mirror).
func (t *Table) Locations(source string) []string {
	if t == nil {
		return []string{source}
	}
	scheme, rest := splitScheme(source)
	// Docker Hub's other names match its entries, as normalise writes
	// them; the source keeps its own name.
	for _, alias := range []string{"index.docker.io/", "registry-1.docker.io/"} {
		if r, ok := strings.CutPrefix(rest, alias); ok {
			rest = ociref.DockerHub + "/" + r
		}
	}
	var out []string
	self := false
	for _, e := range t.entries {
		suffix, ok := strings.CutPrefix(rest, e.Prefix)
		if !ok || (suffix != "" && suffix[0] != '/') {
			continue
		}
		for _, l := range e.Locations {
			if l == e.Prefix {
				self = true
				if t.offline {
					continue
				}
			}
			out = append(out, scheme+l+suffix)
		}
		break
	}
	if !self && !t.offline {
		out = append(out, source)
	}
	return out
}

// splitScheme splits a format's scheme prefix ("kudo+") off a URL
// source.
func splitScheme(source string) (string, string) {
	if i := strings.Index(source, "+"); i > 0 && !strings.Contains(source[:i], "/") {
		rest := source[i+1:]
		if lower := strings.ToLower(rest); strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
			return source[:i+1], rest
		}
	}
	return "", source
}

// ReadFrom returns where the package source@digest was read, when that
// is not the source itself; "" otherwise.
func (t *Table) ReadFrom(source, digest string) string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.readFrom[source+"@"+digest]
}

// record notes that location served source@digest.
func (t *Table) record(source, digest, location string) {
	if location == source {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.readFrom[source+"@"+digest]; !ok {
		t.readFrom[source+"@"+digest] = location
	}
}

// isDown returns the error that marked location's host unreachable.
func (t *Table) isDown(location string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.down[hostOf(location)]
}

// markDown notes that location's host could not be reached at all, so
// that the run does not wait on it again (containers/image keeps trying
// the next source of the list; here a dead mirror costs its retries once).
func (t *Table) markDown(location string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.down[hostOf(location)]; !ok {
		t.down[hostOf(location)] = err
	}
}

// hostOf returns the host a location is read from.
func hostOf(location string) string {
	_, rest := splitScheme(location)
	if u, err := url.Parse(rest); err == nil && u.Host != "" {
		return u.Host
	}
	host, _, _ := strings.Cut(rest, "/")
	return host
}

// unreachable reports whether err says a location could not be reached
// at all (refused, DNS, a network error), not that it answered.
func unreachable(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dns) || errors.As(err, &op)
}
