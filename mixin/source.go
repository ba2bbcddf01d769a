package mixin

import (
	"fmt"
	"net/url"
	"path"
	"strings"
)

// BaseURL returns the location l's binaries are downloaded from, in the
// sense of the `url` of Porter's "Mixin Versioning" proposal
// (getporter/proposals pep/002-mixin-versioning.md, "Porter Lockfile":
// the URL where the binaries are available): the URL every binary of l
// lives under as URL/VERSION/FILE, Porter's `porter mixins install --url`
// layout, with a trailing slash. When the binaries do not share such a
// base, it is the directory of the feed.
func (l *Locked) BaseURL() string {
	base := ""
	for _, k := range l.Keys() {
		u, err := url.Parse(l.Binaries[k].URL)
		if err != nil {
			base = ""
			break
		}
		suffix := "/" + l.Version + "/" + k
		p, ok := strings.CutSuffix(u.Path, suffix)
		if !ok {
			base = ""
			break
		}
		u.Path, u.RawPath, u.RawQuery, u.Fragment = p+"/", "", "", ""
		if base != "" && base != u.String() {
			base = ""
			break
		}
		base = u.String()
	}
	if base != "" {
		return base
	}
	u, err := url.Parse(l.Feed)
	if err != nil {
		return l.Feed
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = path.Dir(u.Path)+"/", "", "", ""
	u.Path = strings.ReplaceAll(u.Path, "//", "/")
	return u.String()
}

// SourceDir returns the SOURCE directory of l in the proposal's versioned
// mixin cache (PORTER_HOME/mixins/SOURCE/NAME/VERSION; the proposal: "May
// be nested directories, e.g. cdn.porter.sh/mixins/exec"): l.BaseURL()
// without its scheme, as path elements — the host (a port joined by "_",
// since a colon is not a portable file name character; "file" for a
// file:// URL), then every path segment. Porter's feed gives
// ["cdn.porter.sh", "mixins"]. Each element is a safe path component
// (CheckName), else it is an error.
func SourceDir(l *Locked) ([]string, error) {
	raw := l.BaseURL()
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("mixin %s %s: source %q: %w", l.Name, l.Version, raw, err)
	}
	host := strings.ReplaceAll(u.Host, ":", "_")
	if host == "" {
		host = u.Scheme
	}
	out := []string{host}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if seg != "" {
			out = append(out, strings.ReplaceAll(seg, ":", "_"))
		}
	}
	for _, e := range out {
		if err := CheckName(e); err != nil {
			return nil, fmt.Errorf("mixin %s %s: source %q: %w", l.Name, l.Version, raw, err)
		}
	}
	return out, nil
}

// VersionDir returns l's directory in the versioned mixin cache, relative
// to PORTER_HOME, as path elements: mixins/SOURCE/NAME/VERSION.
func VersionDir(l *Locked) ([]string, error) {
	src, err := SourceDir(l)
	if err != nil {
		return nil, err
	}
	for _, e := range []string{l.Name, l.Version} {
		if err := CheckName(e); err != nil {
			return nil, fmt.Errorf("mixin %s %s: %w", l.Name, l.Version, err)
		}
	}
	out := append([]string{"mixins"}, src...)
	return append(out, l.Name, l.Version), nil
}
