package mixin

import (
	"fmt"
	"sort"
	"strings"

	"github.com/opencontainers/go-digest"
)

// Locked is one mixin entry of ferry.lock (`mixins[]`): the feed it came
// from, the constraint it was chosen by, the version chosen, the mirrored
// artifact and every binary by digest.
type Locked struct {
	// Name is the mixin name, for example "exec".
	Name string `yaml:"name" json:"name"`
	// Feed is the Atom feed URL the version was resolved from.
	Feed string `yaml:"feed" json:"feed"`
	// Constraint is the version constraint as declared, if any.
	Constraint string `yaml:"constraint,omitempty" json:"constraint,omitempty"`
	// Version is the chosen version, for example "v1.2.3".
	Version string `yaml:"version" json:"version"`
	// Mirror is "REPO@sha256:…" of the mirrored OCI artifact, once mirrored.
	Mirror string `yaml:"mirror,omitempty" json:"mirror,omitempty"`
	// Binaries maps a binary's file name (NAME-OS-ARCH[.exe]) to its digest,
	// size and download URL.
	Binaries map[string]Binary `yaml:"binaries" json:"binaries"`
}

// Binary is one locked mixin binary.
type Binary struct {
	// Digest is "sha256:HEX" of the binary.
	Digest string `yaml:"digest" json:"digest"`
	// Size is the binary's length in bytes.
	Size int64 `yaml:"size" json:"size"`
	// URL is where the binary was downloaded from.
	URL string `yaml:"url" json:"url"`
}

// Keys returns the binary file names of l, sorted.
func (l *Locked) Keys() []string {
	keys := make([]string, 0, len(l.Binaries))
	for k := range l.Binaries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Validate checks that l's name and binary file names are safe to use as
// path components and that every binary has a well-formed sha256 digest.
func (l *Locked) Validate() error {
	if l == nil {
		return fmt.Errorf("mixin: no lock entry")
	}
	if err := CheckName(l.Name); err != nil {
		return fmt.Errorf("mixin %q: %w", l.Name, err)
	}
	if l.Version == "" {
		return fmt.Errorf("mixin %s: lock entry has no version", l.Name)
	}
	if len(l.Binaries) == 0 {
		return fmt.Errorf("mixin %s %s: lock entry has no binaries", l.Name, l.Version)
	}
	for _, k := range l.Keys() {
		if _, _, err := ParseBinaryName(l.Name, k); err != nil {
			return fmt.Errorf("mixin %s %s: %w", l.Name, l.Version, err)
		}
		b := l.Binaries[k]
		d, err := digest.Parse(b.Digest)
		if err != nil || d.Algorithm() != digest.SHA256 {
			return fmt.Errorf("mixin %s %s: binary %s: invalid digest %q", l.Name, l.Version, k, b.Digest)
		}
		if b.Size < 0 {
			return fmt.Errorf("mixin %s %s: binary %s: negative size %d", l.Name, l.Version, k, b.Size)
		}
	}
	return nil
}

// BinaryName returns the published file name of mixin name for goos/goarch:
// NAME-OS-ARCH, with ".exe" appended for windows.
func BinaryName(name, goos, goarch string) string {
	n := name + "-" + goos + "-" + goarch
	if goos == "windows" {
		n += ".exe"
	}
	return n
}

// ParseBinaryName splits a published file name NAME-OS-ARCH[.exe] of mixin
// name into its OS and architecture. It fails for a file of another mixin,
// a malformed name, or a name that is not a safe path component.
func ParseBinaryName(name, file string) (goos, goarch string, err error) {
	if err := CheckName(file); err != nil {
		return "", "", fmt.Errorf("binary file name %q: %w", file, err)
	}
	rest, ok := strings.CutPrefix(file, name+"-")
	if !ok {
		return "", "", fmt.Errorf("binary file name %q does not start with %q", file, name+"-")
	}
	exe := strings.HasSuffix(rest, ".exe")
	rest = strings.TrimSuffix(rest, ".exe")
	goos, goarch, ok = strings.Cut(rest, "-")
	if !ok || goos == "" || goarch == "" || strings.Contains(goarch, "-") || !isWord(goos) || !isWord(goarch) {
		return "", "", fmt.Errorf("binary file name %q is not %s-OS-ARCH[.exe]", file, name)
	}
	if exe != (goos == "windows") {
		return "", "", fmt.Errorf("binary file name %q: only windows binaries end in .exe", file)
	}
	return goos, goarch, nil
}

// splitBinaryName splits NAME-OS-ARCH[.exe] without knowing NAME: the last
// two dash-separated parts are the OS and the architecture.
func splitBinaryName(file string) (name, goos, goarch string, ok bool) {
	base := strings.TrimSuffix(file, ".exe")
	i := strings.LastIndexByte(base, '-')
	if i <= 0 {
		return "", "", "", false
	}
	j := strings.LastIndexByte(base[:i], '-')
	if j <= 0 {
		return "", "", "", false
	}
	name = base[:j]
	if _, _, err := ParseBinaryName(name, file); err != nil || CheckName(name) != nil {
		return "", "", "", false
	}
	return name, base[j+1 : i], base[i+1:], true
}

func isWord(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return s != ""
}

// CheckName reports whether s may be used as a single path component below
// a directory ferry writes to: a mixin name or a binary file name. It
// refuses empty names, "." and "..", path separators, NUL, colons (drive
// letters and alternate streams on Windows) and control characters.
func CheckName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty name")
	case s == "." || s == "..":
		return fmt.Errorf("name %q would escape its directory", s)
	case len(s) > 255:
		return fmt.Errorf("name %.20q… is longer than 255 bytes", s)
	}
	for _, r := range s {
		switch {
		case r == '/' || r == '\\':
			return fmt.Errorf("name %q contains a path separator", s)
		case r == ':':
			return fmt.Errorf("name %q contains a colon", s)
		case r < 0x20 || r == 0x7f:
			return fmt.Errorf("name %q contains a control character", s)
		}
	}
	return nil
}
