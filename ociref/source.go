package ociref

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/internal/lazyregexp"
)

// OCIScheme is Helm's scheme for a chart in an OCI registry
// ("oci://ghcr.io/acme/charts/web", helm.sh/helm/v4/pkg/registry
// constants.go OCIScheme). A reference written with it names the same
// repository as one written without it.
const OCIScheme = "oci://"

// IsURLSource reports whether s names a package in a repository that is
// not an OCI registry, written as an http:// or https:// URL: a chart in a
// classic Helm repository is "https://charts.example.com/stable/nginx",
// the repository URL followed by the chart's name. Such a source is opened
// by the format that owns it (format.Origin), never as a registry. A
// format may prefix the scheme with its own name ("kudo+https://…") when
// its repositories are not Helm's.
func IsURLSource(s string) bool {
	return strings.Contains(s, "://") && urlScheme.MatchString(s)
}

// urlScheme matches the start of a URL source: http:// or https://,
// optionally prefixed "FORMAT+".
var urlScheme = lazyregexp.New(`^([a-z][a-z0-9-]*\+)?https?://`)

// urlPath is what a URL source's path may hold: Helm chart names are
// lowercase letters, digits and dashes (helm's lint rule; "_" and "." are
// still found in repositories), and repositories may sit below a path.
var urlPath = lazyregexp.New(`^[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*$`)

// parseURLSource parses SCHEME://HOST[:PORT]/PATH[:TAG][@DIGEST]: Registry
// is "SCHEME://HOST[:PORT]", Repository the path. A tag is the part after
// the last ':' of the last path element.
func parseURLSource(s string) (Reference, error) {
	var r Reference
	rest := s
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		d, err := digest.Parse(rest[i+1:])
		if err != nil {
			return Reference{}, fmt.Errorf("reference %q: %w", s, err)
		}
		r.Digest, rest = d, rest[:i]
	}
	u, err := url.Parse(rest)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return Reference{}, fmt.Errorf("reference %q: write a repository URL as SCHEME://HOST/PATH/NAME[:VERSION]", redactUserinfo(s))
	}
	path := strings.TrimPrefix(u.Path, "/")
	if i := strings.LastIndex(path, ":"); i > strings.LastIndex(path, "/") {
		r.Tag, path = path[i+1:], path[:i]
		if !tagPattern.MatchString(r.Tag) {
			return Reference{}, fmt.Errorf("reference %q: %q is not a valid tag", s, r.Tag)
		}
	}
	if !urlPath.MatchString(path) {
		return Reference{}, fmt.Errorf("reference %q: no chart name after the repository URL; write it as SCHEME://HOST/PATH/NAME[:VERSION]", s)
	}
	r.Registry, r.Repository = u.Scheme+"://"+u.Host, path
	return r, nil
}

// tagPattern is distribution/reference's tag grammar.
var tagPattern = lazyregexp.New(`^[\w][\w.-]{0,127}$`)
