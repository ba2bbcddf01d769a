package kudo

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/mirrorset"
)

// ReadInput reads a local package given as ROOT: an operator.yaml, a
// package folder or a package .tgz. The package itself is not published,
// so it is not a root; the operators its KudoOperator tasks install (a
// folder dependency read in turn, relative to the package naming it) and
// the images its templates deploy are. The MirrorSet names it as its
// one `operators:` entry too, for RecordLock.
func (f Format) ReadInput(path string, data []byte, settings *mirrorset.MirrorSet) (*mirrorset.MirrorSet, bool, error) {
	if !isInput(path, data) {
		return nil, false, nil
	}
	cf, err := f.Configure(settings)
	if err != nil {
		return nil, true, err
	}
	f = cf.(Format)
	m := &mirrorset.MirrorSet{APIVersion: mirrorset.APIVersion, Kind: mirrorset.Kind}
	op, err := f.localRootsData(path, data, m)
	if err != nil {
		return nil, true, err
	}
	if len(m.Packages) == 0 && !op.hasFolders() {
		return nil, true, errNothing(op)
	}
	if settings != nil {
		for _, k := range f.Sections() {
			if n, ok := settings.Sections[k]; ok && k != KeyOperators {
				if m.Sections == nil {
					m.Sections = format.Sections{}
				}
				m.Sections[k] = n
			}
		}
	}
	// The package is also the one operators: entry, so that RecordLock
	// finds it and records its tasks' instance names and parameter files,
	// as it does for a folder ferry.yaml names. Its roots stay in
	// packages: (SectionRoots names them again, and Resolve takes two
	// alike roots as one), so that the lock's inputs digest changes when
	// the package's dependencies do.
	if err := m.SetSection(KeyOperators, []OperatorRoot{{Package: folderRef(path)}}); err != nil {
		return nil, true, err
	}
	return m, true, nil
}

// isInput reports whether path (with data; nil for a folder) is a KUDO
// package: a folder with operator.yaml, an operator.yaml of KUDO's
// apiVersion (or none, with an operatorVersion), or a gzip tarball with
// operator.yaml at its root.
func isInput(path string, data []byte) bool {
	if data == nil {
		st, err := os.Stat(filepath.Join(path, OperatorFileName))
		return err == nil && !st.IsDir()
	}
	base := strings.ToLower(filepath.Base(path))
	switch {
	case base == OperatorFileName:
		var head struct {
			APIVersion      string `yaml:"apiVersion"`
			OperatorVersion string `yaml:"operatorVersion"`
		}
		if yaml.Unmarshal(data, &head) != nil {
			// Malformed: still KUDO's by its name, so that the
			// error is the package's.
			return true
		}
		return head.APIVersion == APIVersion || (head.APIVersion == "" && head.OperatorVersion != "")
	case strings.HasSuffix(base, ".tgz") || strings.HasSuffix(base, ".tar.gz"):
		if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
			return false
		}
		files, err := untar(data)
		if err != nil {
			return false
		}
		_, ok := files[OperatorFileName]
		return ok
	}
	return false
}

// localRoots reads the local package at path (a folder, an operator.yaml
// or a .tgz) and adds its roots to m; its errors begin with path.
func (f Format) localRoots(path string, m *mirrorset.MirrorSet) (*Operator, error) {
	var data []byte
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.IsDir() {
		if data, err = readCapped(path); err != nil {
			return nil, err
		}
		if len(data) > MaxPackageSize {
			return nil, fmt.Errorf("%s: more than %d bytes", path, MaxPackageSize)
		}
	}
	op, err := f.localRootsData(path, data, m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return op, nil
}

func (f Format) localRootsData(path string, data []byte, m *mirrorset.MirrorSet) (*Operator, error) {
	var p *Package
	var err error
	switch {
	case data == nil:
		p, err = LoadDir(path)
	case strings.EqualFold(filepath.Base(path), OperatorFileName):
		p, err = LoadDir(filepath.Dir(path))
	default:
		if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
			return nil, fmt.Errorf("%w: not a package folder, operator.yaml or .tgz", ErrMalformed)
		}
		p, err = LoadArchive(data)
	}
	if err != nil {
		// Not prefixed with path: localRoots and ReadInput's caller
		// (mirrorset.LoadFile) name it.
		return nil, err
	}
	op, err := f.walk(p, f.Settings.defaultRepository(), nil)
	if err != nil {
		return nil, err
	}
	if err := op.checkImages(op.Name); err != nil {
		return nil, err
	}
	for _, d := range op.dependencies() {
		m.Packages = append(m.Packages, mirrorset.Package{Ref: d.Ref, Version: d.Constraint, Format: "kudo"})
	}
	for _, d := range op.imageDeps() {
		m.Packages = append(m.Packages, mirrorset.Package{Ref: d.Ref, Format: "kudo", Kind: format.KindImage})
	}
	return op, nil
}

// hasFolders reports whether a task of o installs a folder dependency:
// KEP-29's development case (a tree of local package folders), which
// installs operators even when it deploys no image and names no
// published package, so that the lock holds only its kudo.local.
func (o *Operator) hasFolders() bool {
	for _, t := range o.Tasks {
		if t.Local != nil {
			return true
		}
	}
	return false
}

// errNothing is the error for a local package that names nothing to lock.
func errNothing(op *Operator) error {
	return fmt.Errorf("operator %s installs no other operator and deploys no image: nothing to resolve", op.Name)
}
