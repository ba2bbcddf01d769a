package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/manifest"
)

// Platforms. By default an image index is locked, mirrored and verified
// whole, by its own digest, as the source serves it: every platform, and
// every signature made for the index, stays valid. A request with a
// platform (Root.Platform, an `images:` entry's `platforms: [P]`) locks
// instead the index's manifest for that platform: the lock records its
// digest and the platform (AttributePlatform), and the mirror holds it
// under the tag, so a pull by the tag from the mirror gets that platform
// alone, and a cosign signature made for the index does not verify it.
// The resolver says so in a warning each time it reads the index.

// AttributePlatform is the lock attribute recording the platform a
// package was chosen for (format.Metadata.Attributes).
const AttributePlatform = "platform"

// indexBytes returns raw when desc is an image index or a Docker manifest
// list, for choosing a platform later.
func indexBytes(desc ocispec.Descriptor, raw []byte) []byte {
	if manifest.IsIndex(desc.MediaType) {
		return raw
	}
	return nil
}

// platformOf returns the platform the requests ask for, if any.
func platformOf(reqs []requirement) string {
	for _, r := range reqs {
		if r.platform != "" {
			return r.platform
		}
	}
	return ""
}

// ParsePlatform reads "os/arch[/variant]", as docker --platform and
// containerd's platforms.Parse write a platform.
func ParsePlatform(s string) (ocispec.Platform, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return ocispec.Platform{}, fmt.Errorf("platform %q: want OS/ARCH or OS/ARCH/VARIANT", s)
	}
	p := ocispec.Platform{OS: parts[0], Architecture: parts[1]}
	if len(parts) == 3 {
		p.Variant = parts[2]
	}
	return p, nil
}

// platformMatches reports whether have is the platform want names: the
// same OS and architecture and, when want names one, the same variant;
// arm64 without a variant is arm64/v8 (containerd/platforms'
// Normalize).
func platformMatches(want ocispec.Platform, have *ocispec.Platform) bool {
	if have == nil || have.OS != want.OS || have.Architecture != want.Architecture {
		return false
	}
	if want.Variant == "" {
		return true
	}
	v := have.Variant
	if v == "" && have.Architecture == "arm64" {
		v = "v8"
	}
	return v == want.Variant
}

// forPlatform returns the entry to lock for a request with a platform:
// e itself when it is no index (a single manifest is kept whole), else
// the index's manifest for the platform, read, with the platform recorded
// and a warning of what that does to digests and signatures.
func (rs *roundState) forPlatform(ctx context.Context, source string, c choice, e *fetchEntry, platform string) (*fetchEntry, choice, error) {
	want, err := ParsePlatform(platform)
	if err != nil {
		return nil, c, badInput(err)
	}
	if e.meta.Kind != format.KindArtifact {
		// A package of a format (a bundle, a Crossplane package) is
		// copied whole: its format reads and installs it so.
		return nil, c, badInput(fmt.Errorf("%s is a %s: a platform is chosen for images alone", refString(source, c.object()), e.meta.Kind))
	}
	entry, warning := e, ""
	if e.index != nil {
		var idx ocispec.Index
		if err := json.Unmarshal(e.index, &idx); err != nil {
			return nil, c, fmt.Errorf("reading the index of %s: %w", refString(source, c.object()), err)
		}
		var found *ocispec.Descriptor
		var have []string
		for i, m := range idx.Manifests {
			if m.Platform == nil {
				continue
			}
			have = append(have, platformString(m.Platform))
			if found == nil && platformMatches(want, m.Platform) {
				found = &idx.Manifests[i]
			}
		}
		if found == nil {
			return nil, c, fmt.Errorf("%s has no manifest for platform %s (platforms: %s)", refString(source, c.object()), platform, strings.Join(have, " "))
		}
		child, err := rs.r.fetch(ctx, source, choice{digest: found.Digest})
		if err != nil {
			return nil, c, err
		}
		entry = child
		warning = fmt.Sprintf("only %s is kept: the lock and the mirror hold its manifest %s, not the index %s the source serves, so a pull by tag from the mirror gets %s alone, and a cosign signature made for the index does not verify it", platform, found.Digest, e.desc.Digest, platform)
		c.digest = found.Digest
	}
	meta := *entry.meta
	meta.Attributes = maps.Clone(meta.Attributes)
	if meta.Attributes == nil {
		meta.Attributes = map[string]string{}
	}
	meta.Attributes[AttributePlatform] = platform
	if warning != "" {
		meta.Warnings = append(append([]string(nil), meta.Warnings...), warning)
	}
	return &fetchEntry{desc: entry.desc, meta: &meta, rules: entry.rules}, c, nil
}

func platformString(p *ocispec.Platform) string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}
