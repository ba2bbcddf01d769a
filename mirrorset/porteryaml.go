package mirrorset

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/crossplane"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/porter"
)

// Input file kinds FromArgs knows.
const (
	fileMirrorSet  = "ferry.yaml"
	filePorter     = "porter.yaml"
	fileCrossplane = "crossplane.yaml"
)

// fileKind tells which input format a local file holds: by its name
// (porter.yaml, porter.yml), else by its content (a document with
// `kind: MirrorSet` is a ferry.yaml; one without apiVersion that has a
// `name` and `mixins`, `schemaVersion` or `dependencies` is a porter.yaml).
// Anything else is read as a ferry.yaml, whose parser then says what is
// wrong with it.
func fileKind(path string, data []byte) string {
	switch strings.ToLower(filepath.Base(path)) {
	case "porter.yaml", "porter.yml":
		return filePorter
	case "crossplane.yaml", "crossplane.yml":
		return fileCrossplane
	case DefaultFile, "ferry.yml":
		return fileMirrorSet
	}
	var head map[string]any
	if yaml.Unmarshal(data, &head) != nil {
		return fileMirrorSet
	}
	if v, ok := head["apiVersion"].(string); ok {
		if strings.HasPrefix(v, crossplane.MetaGroup+"/") {
			return fileCrossplane
		}
		return fileMirrorSet
	}
	_, hasName := head["name"]
	_, hasMixins := head["mixins"]
	_, hasSchema := head["schemaVersion"]
	_, hasDeps := head["dependencies"]
	if hasName && (hasMixins || hasSchema || hasDeps) {
		return filePorter
	}
	return fileMirrorSet
}

// LoadFile reads a local input file of any kind FromArgs knows: ferry.yaml,
// porter.yaml or crossplane.yaml.
func LoadFile(path string) (*MirrorSet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Load(path) // reports the error with ferry.yaml's wording
	}
	switch fileKind(path, data) {
	case filePorter:
		m, err := FromPorterYAML(data)
		if err != nil {
			return nil, exitcode.BadInput("%s: %w", path, err)
		}
		return m, nil
	case fileCrossplane:
		m, err := FromCrossplaneYAML(data)
		if err != nil {
			return nil, exitcode.BadInput("%s: %w", path, err)
		}
		return m, nil
	default:
		return Load(path)
	}
}

// FromPorterYAML builds a MirrorSet from a porter.yaml: every bundle in
// `dependencies.requires[]` is a root package (bundle.reference, constrained
// by bundle.version), and every `mixins:` entry (`exec`, `exec@1.x`,
// `{helm3: {…}}`) is a mixin resolved from the default feed. The bundle
// itself is not published yet, so it is not a root. A dependency that
// declares only an interface cannot be a root and is an error.
func FromPorterYAML(data []byte) (*MirrorSet, error) {
	pm, err := porter.ParsePorterYAML(bytes.TrimPrefix(data, []byte("\ufeff")))
	if err != nil {
		return nil, err
	}
	m := &MirrorSet{APIVersion: APIVersion, Kind: Kind}
	for _, d := range pm.Dependencies {
		if d.Interface || d.Ref == "" {
			return nil, fmt.Errorf("dependency %q declares only an interface: name the bundle to mirror in a ferry.yaml (packages[] and use)", d.Name)
		}
		m.Packages = append(m.Packages, Package{Ref: d.Ref, Version: d.Constraint})
	}
	for _, mx := range pm.Mixins {
		m.Mixins = append(m.Mixins, Mixin{Name: mx.Name, Version: mx.Constraint})
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}
