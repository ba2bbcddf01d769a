// Package mixin is the Porter mixin format (Format): it resolves Porter
// mixins from Atom feeds, downloads and locks their binaries by digest
// (ferry.lock's `mixins` section), mirrors each mixin version as one OCI
// artifact, carries them through archives, verifies them in a mirror,
// installs them into a PORTER_HOME from the mirror (Porter's flat layout
// and the versioned cache of Porter's "Mixin Versioning" proposal,
// getporter/proposals pep/002-mixin-versioning.md), writes the proposal's
// porter.lock.yaml, and answers Porter's mirror protocol
// (/mixins/atom.xml) from what a registry stores.
package mixin

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/errkind"
)

// DefaultFeedURL is Porter's official mixin feed.
const DefaultFeedURL = "https://cdn.porter.sh/mixins/atom.xml"

// maxFeedSize bounds how much of a feed is read (a variable so tests can
// lower it).
var maxFeedSize int64 = 64 << 20

// Feed is a parsed Porter mixin feed.
type Feed struct {
	// URL is where the feed was loaded from.
	URL string
	// Updated is the feed's own <updated> time, zero when absent.
	Updated time.Time
	// Mixins lists the feed-level <category term> values.
	Mixins []string
	// Warnings describes entries and links that were skipped, as Porter
	// skips them.
	Warnings []string

	index map[string]map[string]*Version
	// dropped counts the warnings past maxWarnings.
	dropped int
	// allowPlain reports whether plain HTTP may be used to reach a
	// non-loopback host; nil means loopback only.
	allowPlain func(host string) bool
}

// Version is one version of one mixin in a feed.
type Version struct {
	// Mixin is the mixin name (the entry's first <category term>).
	Mixin string
	// Version is the entry's <content>, for example "v1.2.3" or "canary".
	Version string
	// Updated is the entry's <updated> time.
	Updated time.Time
	// Files are the entry's download links, in feed order.
	Files []File
}

// File is one downloadable binary of a mixin version.
type File struct {
	// Name is the file name, NAME-OS-ARCH[.exe].
	Name string
	// OS and Arch are parsed from Name.
	OS, Arch string
	// URL is the absolute download URL.
	URL string
}

// File returns the file of v for goos/goarch.
func (v Version) File(goos, goarch string) (File, bool) {
	for _, f := range v.Files {
		if f.OS == goos && f.Arch == goarch {
			return f, true
		}
	}
	return File{}, false
}

type atomCategory struct {
	Term string `xml:"term,attr"`
}

type atomLink struct {
	Rel  string `xml:"rel,attr"`
	Href string `xml:"href,attr"`
}

type atomEntry struct {
	ID         string         `xml:"id"`
	Updated    string         `xml:"updated"`
	Categories []atomCategory `xml:"category"`
	Content    string         `xml:"content"`
	Links      []atomLink     `xml:"link"`
}

// ParseFeed parses an Atom mixin feed the way Porter does. Per <entry>, the
// mixin name is the first <category term>, the version is <content>, the
// files are the <link rel="download" href> values (relative ones are resolved
// against source), and <updated> is RFC 3339. Entries without a name,
// version or valid <updated> are skipped with a warning, as are links whose
// file name is not NAME-OS-ARCH[.exe]. For a duplicate version of one mixin
// the entry with the newer <updated> wins. A document that is not an Atom
// feed is an error.
//
// At most maxFeedSize bytes are read, and entries are decoded one at a
// time, so what a feed costs in memory is what it indexes, not what it
// skips: a feed of endless bad entries keeps maxWarnings warnings.
func ParseFeed(r io.Reader, source string) (*Feed, error) {
	dec := xml.NewDecoder(io.LimitReader(r, maxFeedSize))
	base, _ := url.Parse(source)
	f := &Feed{URL: source, index: map[string]map[string]*Version{}}
	if err := f.decode(dec, base); err != nil {
		return nil, fmt.Errorf("mixin feed %s: not an Atom feed: %w", source, err)
	}
	if f.dropped > 0 {
		f.Warnings = append(f.Warnings, fmt.Sprintf("%d more warnings not shown", f.dropped))
	}
	return f, nil
}

// decode reads the <feed> document from dec: its <updated> and
// <category> children, and each <entry> as it comes. It accepts what
// encoding/xml's Decode into a struct of those fields does: the first
// element must be named feed (in any namespace); a repeated <updated>
// counts the last time.
func (f *Feed) decode(dec *xml.Decoder, base *url.URL) error {
	var root xml.StartElement
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if se, ok := tok.(xml.StartElement); ok {
			root = se
			break
		}
	}
	if root.Name.Local != "feed" {
		return fmt.Errorf("expected element type <feed> but have <%s>", root.Name.Local)
	}
	entries := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return nil // </feed>: the decoder checks it matches
		case xml.StartElement:
			switch t.Name.Local {
			case "updated":
				var s string
				if err := dec.DecodeElement(&s, &t); err != nil {
					return err
				}
				if u, err := time.Parse(time.RFC3339, strings.TrimSpace(s)); err == nil {
					f.Updated = u
				} else {
					f.Updated = time.Time{}
				}
			case "category":
				var c atomCategory
				if err := dec.DecodeElement(&c, &t); err != nil {
					return err
				}
				f.Mixins = append(f.Mixins, c.Term)
			case "entry":
				var e atomEntry
				if err := dec.DecodeElement(&e, &t); err != nil {
					return err
				}
				entries++
				f.addEntry(entries, &e, base)
			default:
				if err := dec.Skip(); err != nil {
					return err
				}
			}
		}
	}
}

// addEntry indexes the n-th <entry> of the feed, or warns why it is
// skipped.
func (f *Feed) addEntry(n int, e *atomEntry, base *url.URL) {
	id := strings.TrimSpace(e.ID)
	if id == "" {
		id = fmt.Sprintf("#%d", n)
	}
	if len(e.Categories) == 0 || strings.TrimSpace(e.Categories[0].Term) == "" {
		f.warnf("skipping entry %s: no category (mixin name)", id)
		return
	}
	v := &Version{Mixin: strings.TrimSpace(e.Categories[0].Term), Version: strings.TrimSpace(e.Content)}
	if v.Version == "" {
		f.warnf("skipping entry %s: empty content (version)", id)
		return
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(e.Updated))
	if err != nil {
		f.warnf("skipping entry %s: updated %q is not RFC 3339", id, e.Updated)
		return
	}
	v.Updated = t
	for _, l := range e.Links {
		if l.Rel != "download" {
			continue
		}
		if hasUserinfo(l.Href) {
			// Never copied into the lock, a warning or an error.
			f.warnf("skipping a link of entry %s: credentials in download URLs are not accepted", id)
			continue
		}
		u, err := url.Parse(strings.TrimSpace(l.Href))
		if err != nil || l.Href == "" {
			f.warnf("skipping link %q of entry %s: invalid href", l.Href, id)
			continue
		}
		if base != nil {
			u = base.ResolveReference(u)
		}
		if u.User != nil {
			// A relative link takes the credentials of a source that has
			// them (LoadFeed refuses such a source; ParseFeed's callers
			// may not).
			f.warnf("skipping a link of entry %s: credentials in download URLs are not accepted", id)
			continue
		}
		name := path.Base(u.Path)
		goos, goarch, err := ParseBinaryName(v.Mixin, name)
		if err != nil {
			f.warnf("skipping link %q of entry %s: %v", l.Href, id, err)
			continue
		}
		v.Files = append(v.Files, File{Name: name, OS: goos, Arch: goarch, URL: u.String()})
	}
	versions := f.index[v.Mixin]
	if versions == nil {
		versions = map[string]*Version{}
		f.index[v.Mixin] = versions
	}
	if old, ok := versions[v.Version]; !ok || v.Updated.After(old.Updated) {
		versions[v.Version] = v
	}
}

// maxWarnings bounds the warnings a feed keeps; the rest are counted.
const maxWarnings = 100

func (f *Feed) warnf(format string, args ...any) {
	if len(f.Warnings) >= maxWarnings {
		f.dropped++
		return
	}
	f.Warnings = append(f.Warnings, fmt.Sprintf(format, args...))
}

// Names returns the names of the mixins that have at least one version in
// the feed, sorted.
func (f *Feed) Names() []string {
	names := make([]string, 0, len(f.index))
	for n := range f.index {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Versions returns every version of mixin name in the feed: semver versions
// from lowest to highest, then the others (such as "canary") by name.
func (f *Feed) Versions(name string) []Version {
	m := f.index[name]
	out := make([]Version, 0, len(m))
	for _, v := range m {
		out = append(out, *v)
	}
	sortVersions(out)
	return out
}

// Lookup returns the version of mixin name whose <content> is exactly
// version.
func (f *Feed) Lookup(name, version string) (Version, bool) {
	v, ok := f.index[name][version]
	if !ok {
		return Version{}, false
	}
	return *v, true
}

// LoadFeed reads and parses the feed at rawURL: https://, http:// (only for
// loopback hosts or hosts allowPlainHTTP accepts; allowPlainHTTP may be nil)
// or file://. The same rule applies later to the feed's download links.
func LoadFeed(ctx context.Context, hc *http.Client, rawURL string, allowPlainHTTP func(host string) bool) (*Feed, error) {
	if hasUserinfo(rawURL) {
		// Neither quoted nor parsed: a parse error would echo the password.
		return nil, errkind.Mark(errkind.BadInput, errors.New("mixin feed: credentials in feed URLs (user:password@host) are not accepted"))
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errkind.Mark(errkind.BadInput, fmt.Errorf("mixin feed %q: %w", rawURL, err))
	}
	var body io.ReadCloser
	switch u.Scheme {
	case "file":
		body, err = os.Open(localPath(u))
		if err != nil {
			return nil, fmt.Errorf("mixin feed %s: %w", rawURL, err)
		}
	case "http", "https":
		body, _, err = get(ctx, hc, u, allowPlainHTTP)
		if err != nil {
			return nil, fmt.Errorf("mixin feed: %w", err)
		}
	default:
		return nil, errkind.Mark(errkind.BadInput, fmt.Errorf("mixin feed %q: unsupported scheme %q (want https, http or file)", rawURL, u.Scheme))
	}
	defer body.Close()
	f, err := ParseFeed(body, rawURL)
	if err != nil {
		return nil, err
	}
	f.allowPlain = allowPlainHTTP
	return f, nil
}

// hasUserinfo reports whether a URL's authority holds a user name or
// password (scheme://USERINFO@host/...).
func hasUserinfo(rawURL string) bool {
	_, rest, ok := strings.Cut(strings.TrimSpace(rawURL), "://")
	if !ok {
		return false
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return strings.Contains(rest, "@")
}

// localPath returns the local path of a file:// URL.
func localPath(u *url.URL) string {
	if u.Opaque != "" {
		return u.Opaque
	}
	return u.Path
}

// checkScheme refuses plain HTTP to a host that is neither loopback nor
// allowed.
func checkScheme(u *url.URL, allowPlain func(host string) bool) error {
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if client.IsLoopback(u.Host) || (allowPlain != nil && (allowPlain(u.Host) || allowPlain(u.Hostname()))) {
			return nil
		}
		return errkind.Mark(errkind.BadInput, fmt.Errorf("%s: %w", u, &client.PlainHTTPError{Host: u.Host}))
	default:
		return errkind.Mark(errkind.BadInput, fmt.Errorf("%s: unsupported scheme %q", u, u.Scheme))
	}
}

// get issues a GET for u and returns the body of a 200 answer and its
// Content-Length (-1 when the server sends none).
func get(ctx context.Context, hc *http.Client, u *url.URL, allowPlain func(host string) bool) (io.ReadCloser, int64, error) {
	if err := checkScheme(u, allowPlain); err != nil {
		return nil, 0, err
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %w", u, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, 0, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return resp.Body, resp.ContentLength, nil
}
