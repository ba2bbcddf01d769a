package ociref

import (
	"fmt"
	"strings"

	"github.com/ferryhq/ferry/internal/forked/reference"
)

// DockerHub is the registry a reference without one names, the Docker way.
const DockerHub = "docker.io"

// ParseNormalized parses a reference that may lack a registry, the way the
// format's own tool does. With defaultRegistry "docker.io" (or empty) it is
// Docker's normalisation, distribution/reference.ParseNormalizedNamed,
// which Porter uses for every bundle reference: "getporter/mysql:v0.1.3" is
// "docker.io/getporter/mysql:v0.1.3" and "alpine" is
// "docker.io/library/alpine". With another default registry the reference
// takes that registry and no "library/" (go-containerregistry's
// name.WithDefaultRegistry, which Crossplane uses). A reference that names
// a registry is kept as written; one with credentials in it is an error.
func ParseNormalized(s, defaultRegistry string) (Reference, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), OCIScheme)
	if s == "" {
		return Reference{}, ErrEmpty
	}
	if err := checkUserinfo(s); err != nil {
		return Reference{}, err
	}
	if IsURLSource(s) {
		return Parse(s)
	}
	docker := defaultRegistry == "" || defaultRegistry == DockerHub || defaultRegistry == "index.docker.io"
	first, _, hasSlash := strings.Cut(s, "/")
	if hasSlash && IsRegistry(first) && !(docker && (first == DockerHub || first == "index.docker.io")) {
		return Parse(s)
	}
	if docker {
		named, err := reference.ParseNormalizedNamed(s)
		if err != nil {
			return Reference{}, fmt.Errorf("reference %q: %w", s, err)
		}
		return Parse(named.String())
	}
	return Parse(defaultRegistry + "/" + s)
}
