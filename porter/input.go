package porter

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/sizecap"
)

// ReadInput reads a porter.yaml given as ROOT: every bundle in
// `dependencies.requires[]` is a root (its reference normalised the Docker
// way, constrained by its version), and every `mixins:` entry a mixin to
// lock (ferry.yaml's `mixins` section). The bundle itself is not published
// yet, so it is not a root. A dependency's `bundle.interface.reference`
// (PEP003) is a root too, right after the dependency. A dependency that
// declares only an interface cannot be a root and is an error. A file is a porter.yaml by its name,
// else by its content: no apiVersion, a name, and mixins, schemaVersion or
// dependencies.
//
// The roots are Porter's: its version strategy chooses their versions as
// it chooses any dependency's (under exact, its default, the tag in the
// reference; pkg/cnab/extended_bundle.go ResolveVersion).
func (Reader) ReadInput(path string, data []byte, _ *mirrorset.MirrorSet) (*mirrorset.MirrorSet, bool, error) {
	if !isPorterYAML(path, data) {
		return nil, false, nil
	}
	pm, err := ParsePorterYAML(bytes.TrimPrefix(data, []byte("\ufeff")))
	if err != nil {
		return nil, true, err
	}
	m := &mirrorset.MirrorSet{APIVersion: mirrorset.APIVersion, Kind: mirrorset.Kind}
	var ifaces []rootInterface
	for _, d := range pm.Dependencies {
		if d.Ref == "" {
			iface := ""
			if d.InterfaceRef != "" {
				iface = " (" + d.InterfaceRef + ")"
			}
			return nil, true, fmt.Errorf("dependency %q declares only an interface%s: name the bundle to mirror in a ferry.yaml (packages[] and use)", d.Name, iface)
		}
		ref, err := ociref.ParseNormalized(d.Ref, "")
		if err != nil {
			return nil, true, fmt.Errorf("dependency %q: %w", d.Name, err)
		}
		// Porter's config adapter allows prereleases when the version is
		// itself a prerelease version (pkg/cnab/config-adapter/adapter.go
		// generateDependencies: AllowPrereleases = v.Prerelease() != "").
		pre := false
		if v, err := semver.NewVersion(d.Constraint); err == nil && v.Prerelease() != "" {
			pre = true
		}
		m.Packages = append(m.Packages, mirrorset.Package{Ref: ref.String(), Version: d.Constraint, Format: Reader{}.Name(), Prereleases: pre})
		if len(d.InterfaceDocument) > 0 {
			ifaces = append(ifaces, rootInterface{Name: d.Name, Ref: ref.String(), Document: string(d.InterfaceDocument)})
		}
		if d.InterfaceRef != "" {
			// The bundle defining the dependency's interface (PEP003
			// `bundle.interface.reference`) is part of the closure, as
			// for a dependency of a published bundle (resolve's
			// interface edge): taken as written, without the
			// dependency's version range.
			iref, err := ociref.ParseNormalized(d.InterfaceRef, "")
			if err != nil {
				return nil, true, fmt.Errorf("dependency %q: bundle.interface.reference: %w", d.Name, err)
			}
			m.Packages = append(m.Packages, mirrorset.Package{Ref: iref.String(), Format: Reader{}.Name()})
		}
	}
	var entries []mixin.Entry
	for _, mx := range pm.Mixins {
		entries = append(entries, mixin.Entry{Name: mx.Name, Version: mx.Constraint, Feed: mx.Feed})
	}
	if len(entries) > 0 {
		if err := m.SetSection(mixin.KeyMixins, entries); err != nil {
			return nil, true, err
		}
	}
	if len(m.Packages) == 0 && len(entries) == 0 {
		return nil, true, fmt.Errorf("no packages or mixins to resolve: the porter.yaml declares no dependencies and no mixins")
	}
	if err := readPorterLock(m, path, pm.Name); err != nil {
		return nil, true, err
	}
	if len(ifaces) > 0 {
		var n yaml.Node
		if err := n.Encode(ifaces); err != nil {
			return nil, true, err
		}
		setBeside(m, keyRootInterfaces, n)
	}
	return m, true, nil
}

// keyRootInterfaces is the MirrorSet.Beside key of the interface documents
// a porter.yaml ROOT's dependencies declare (rootInterface), for
// CheckGraph.
const keyRootInterfaces = "porterInterfaces"

// rootInterface is a porter.yaml dependency's interface document (in
// either of PEP003's forms), checked against the bundle the root
// resolves to: ferry locks that bundle for the porter.yaml, so it checks
// it as it checks a `use:` substitute.
type rootInterface struct {
	Name     string `yaml:"name"`
	Ref      string `yaml:"ref"`
	Document string `yaml:"document"`
}

// setBeside sets key in m.Beside.
func setBeside(m *mirrorset.MirrorSet, key string, n yaml.Node) {
	if m.Beside == nil {
		m.Beside = format.Sections{}
	}
	m.Beside[key] = n
}

// readPorterLock reads the porter.lock.yaml beside the porter.yaml at
// path, when there is one, into m.Beside (mixin.KeyPorterLock): the
// Mixin Versioning proposal's lockfile (getporter/proposals
// pep/002-mixin-versioning.md, "Porter Lockfile": Porter installs the
// mixin versions it locks, and checks their digests). ferry then keeps
// the versions it locks and requires the binaries it downloads to have
// its digests (mixin.Format.Lock). It is not an input of the lock, as a
// previous ferry.lock is not.
func readPorterLock(m *mirrorset.MirrorSet, path, bundle string) error {
	lockPath := filepath.Join(filepath.Dir(path), mixin.PorterLockFile)
	data, err := sizecap.ReadFile(lockPath, mirrorset.MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errkind.Mark(errkind.BadInput, err)
	}
	pl, err := mixin.ParsePorterLock(data)
	if err != nil {
		return errkind.Mark(errkind.BadInput, fmt.Errorf("%s: %w", lockPath, err))
	}
	var n yaml.Node
	if err := n.Encode(mixin.PorterLockInput{Path: lockPath, Bundle: bundle, Lock: *pl}); err != nil {
		return fmt.Errorf("%s: %w", lockPath, err)
	}
	setBeside(m, mixin.KeyPorterLock, n)
	return nil
}

// isPorterYAML tells a porter.yaml by its name, else by its content.
func isPorterYAML(path string, data []byte) bool {
	switch strings.ToLower(filepath.Base(path)) {
	case "porter.yaml", "porter.yml":
		return true
	}
	var head map[string]any
	if yaml.Unmarshal(data, &head) != nil {
		return false
	}
	if _, ok := head["apiVersion"]; ok {
		return false
	}
	_, hasName := head["name"]
	_, hasMixins := head["mixins"]
	_, hasSchema := head["schemaVersion"]
	_, hasDeps := head["dependencies"]
	return hasName && (hasMixins || hasSchema || hasDeps)
}
