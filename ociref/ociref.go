// Package ociref parses OCI references and qualifies the partial references
// that package formats allow, relative to the package that declares them.
package ociref

import (
	"errors"
	"fmt"
	"strings"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/internal/forked/reference"
	"github.com/ferryhq/ferry/internal/lazyregexp"
)

// Reference is a fully qualified OCI reference. Either Tag, Digest, both or
// neither may be set.
type Reference struct {
	// Registry is the host, with port if any: "ghcr.io", "127.0.0.1:5000".
	Registry string
	// Repository is the path inside the registry: "acme/app".
	Repository string
	// Tag is the tag, if any.
	Tag string
	// Digest is the digest, if any.
	Digest digest.Digest
}

// Parse parses a fully qualified reference: HOST/PATH[:TAG][@DIGEST].
// A reference without a registry host is an error, and so is one carrying
// credentials (user:pass@host/...).
//
// Helm's "oci://" scheme is accepted and dropped. An http:// or https://
// URL is a source outside any registry (see IsURLSource): Registry is then
// "SCHEME://HOST" and Repository the URL's path.
func Parse(s string) (Reference, error) {
	s = strings.TrimPrefix(s, OCIScheme)
	if err := checkUserinfo(s); err != nil {
		return Reference{}, err
	}
	if IsURLSource(s) {
		return parseURLSource(s)
	}
	if !strings.Contains(s, "/") || !IsRegistry(s[:strings.Index(s, "/")]) {
		return Reference{}, fmt.Errorf("reference %q: no registry host; write it as HOST/REPOSITORY[:TAG]", s)
	}
	named, err := reference.ParseNamed(s)
	if err != nil {
		return Reference{}, fmt.Errorf("reference %q: %w", s, err)
	}
	r := Reference{Registry: reference.Domain(named), Repository: reference.Path(named)}
	if host := s[:strings.Index(s, "/")]; r.Registry != host {
		// distribution/reference reads a first component that is not a
		// valid domain ("my_registry.io") as part of the path, leaving
		// no domain at all.
		return Reference{}, fmt.Errorf("reference %q: %q is not a valid registry host", s, host)
	}
	if t, ok := named.(reference.Tagged); ok {
		r.Tag = t.Tag()
	}
	if d, ok := named.(reference.Digested); ok {
		r.Digest = d.Digest()
	}
	return r, nil
}

func checkUserinfo(s string) error {
	if userinfoAt(s) >= 0 {
		return fmt.Errorf("reference %q: credentials in references are not accepted; use ferry login or a docker config.json", redactUserinfo(s))
	}
	if strings.Contains(s, "://") && !IsURLSource(s) {
		return fmt.Errorf("reference %q: write a registry reference without a URL scheme", s)
	}
	return nil
}

// digestSuffix matches what may follow a digest's '@': ALGORITHM:ENCODED.
var digestSuffix = lazyregexp.New(`^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$`)

// userinfoAt returns the index of the '@' ending credentials in s, or -1.
// Only the last '@' may introduce a digest: when ALGORITHM:ENCODED follows
// it, after a '/' ("host/repo@sha256:…") or with an encoded part too long
// for a port ("name@sha256:…", not "user:pw@localhost:5000"). Any other '@'
// ends userinfo, even when the password holds a '/' or the reference starts
// with a URL scheme.
func userinfoAt(s string) int {
	last := strings.LastIndex(s, "@")
	if last < 0 {
		return -1
	}
	suffix := s[last+1:]
	_, encoded, _ := strings.Cut(suffix, ":")
	if digestSuffix.MatchString(suffix) && (strings.Contains(s[:last], "/") || len(encoded) >= 32) {
		return strings.LastIndex(s[:last], "@")
	}
	return last
}

func redactUserinfo(s string) string {
	if at := userinfoAt(s); at >= 0 {
		return "REDACTED" + s[at:]
	}
	return s
}

// IsRegistry reports whether the first component of a reference names a
// registry: it contains '.' or ':' or is "localhost".
func IsRegistry(component string) bool {
	return strings.ContainsAny(component, ".:") || component == "localhost"
}

// Repo returns "REGISTRY/REPOSITORY", the repository without tag or digest.
func (r Reference) Repo() string { return r.Registry + "/" + r.Repository }

// String returns the reference in its canonical form.
func (r Reference) String() string {
	s := r.Repo()
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest.String()
	}
	return s
}

// Object returns what a registry resolves for this reference: the digest if
// set, else the tag.
func (r Reference) Object() string {
	if r.Digest != "" {
		return r.Digest.String()
	}
	return r.Tag
}

// WithTag returns r with the tag replaced and the digest cleared.
func (r Reference) WithTag(tag string) Reference {
	r.Tag, r.Digest = tag, ""
	return r
}

// WithDigest returns r pinned to d, keeping the tag for readability.
func (r Reference) WithDigest(d digest.Digest) Reference {
	r.Digest = d
	return r
}

// ErrEmpty is returned for an empty reference.
var ErrEmpty = errors.New("empty reference")

// Qualify completes a dependency reference declared by the package at parent.
// A reference without a registry takes the parent's registry; one with
// neither registry nor organisation takes the parent's registry and
// repository path up to its last '/'.
//
//	parent pkg.acme.co/internal/configuration-example
//	provider-b                    -> pkg.acme.co/internal/provider-b
//	crossplane-contrib/provider-a -> pkg.acme.co/crossplane-contrib/provider-a
func Qualify(dep string, parent Reference) (Reference, error) {
	dep = strings.TrimSpace(dep)
	if dep == "" {
		return Reference{}, ErrEmpty
	}
	if err := checkUserinfo(dep); err != nil {
		return Reference{}, err
	}
	dep = strings.TrimPrefix(dep, OCIScheme)
	first, _, hasSlash := strings.Cut(dep, "/")
	switch {
	case IsURLSource(dep), hasSlash && IsRegistry(first):
		return Parse(dep)
	case hasSlash:
		return Parse(parent.Registry + "/" + dep)
	default:
		dir := ""
		if i := strings.LastIndex(parent.Repository, "/"); i >= 0 {
			dir = parent.Repository[:i+1]
		}
		return Parse(parent.Registry + "/" + dir + dep)
	}
}

// IsPartial reports whether dep, as declared, lacks a registry.
func IsPartial(dep string) bool {
	dep = strings.TrimPrefix(dep, OCIScheme)
	if IsURLSource(dep) {
		return false
	}
	first, _, hasSlash := strings.Cut(dep, "/")
	return !hasSlash || !IsRegistry(first)
}
