package mirrorset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/sizecap"
)

// LoadFile reads a local input file: a ferry.yaml, or a file one of
// formats accepts as ROOT (porter.yaml, crossplane.yaml, a chart, a KUDO
// package). settings carries format sections given by flags, and the
// --config file (Config); it may be nil.
//
// A file that is not a ferry.yaml takes every setting other than the roots
// from a ferry.yaml: settings.Config when set, else the one beside it (see
// ConfigBeside). Its keys are checked as any ferry.yaml's are.
//
// A directory is offered to the formats with no data (a Helm chart
// directory); one no format reads is an error.
func LoadFile(path string, formats []format.Format, settings *MirrorSet) (*MirrorSet, error) {
	data, dir, err := readPath(path)
	if err != nil {
		return Load(path, formats) // reports the error with ferry.yaml's wording
	}
	if !dir && isMirrorSet(path, data) {
		return Load(path, formats)
	}
	cfgPath := ""
	if settings != nil {
		cfgPath = settings.Config
	}
	if cfgPath == "" {
		cfgPath = ConfigBeside(path)
	}
	var cfg *MirrorSet
	if cfgPath != "" {
		if cfg, err = load(cfgPath, formats, true); err != nil {
			return nil, err
		}
	}
	m, ok, err := readInput(path, data, dir, formats, readerSettings(cfg, settings))
	if err != nil {
		return nil, errkind.Markf(errkind.BadInput, "%s: %w", path, err)
	}
	if !ok {
		if dir {
			return nil, errkind.Markf(errkind.BadInput, "%s is a directory that no format reads as input (a Helm chart directory holds Chart.yaml)", path)
		}
		return Load(path, formats)
	}
	if cfg != nil {
		m.applyConfig(cfg, formats)
	}
	if err := m.Validate(); err != nil {
		return nil, errkind.Markf(errkind.BadInput, "%s: %w", path, err)
	}
	if err := m.CheckSections(formats); err != nil {
		return nil, errkind.Markf(errkind.BadInput, "%s: %w", path, err)
	}
	return m, nil
}

// LoadSettings reads a ferry.yaml for its settings alone (--config
// beside a lock): it may name no root. Its keys are checked as any
// ferry.yaml's are.
func LoadSettings(path string, formats []format.Format) (*MirrorSet, error) {
	return load(path, formats, true)
}

// ConfigBeside returns the ferry.yaml whose settings apply to the local
// ROOT at path, or "" when there is none: for a file, ferry.yaml in its
// directory; for a directory (a chart or KUDO package folder), ferry.yaml
// in it, else beside it in its parent.
func ConfigBeside(path string) string {
	var dirs []string
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		dirs = []string{path, filepath.Dir(filepath.Clean(path))}
	} else {
		dirs = []string{filepath.Dir(path)}
	}
	for _, d := range dirs {
		p := filepath.Join(d, DefaultFile)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// readPath reads a local input: its data, or dir for a directory.
func readPath(path string) (data []byte, dir bool, err error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, true, nil
	}
	data, err = sizecap.ReadFile(path, MaxFileSize)
	return data, false, err
}

// readInput offers a local input to the formats that read inputs: the one
// path a command-line ROOT and a ferry.yaml `packages: [{path}]` entry are
// read by. ok is false when no format reads it.
func readInput(path string, data []byte, dir bool, formats []format.Format, settings *MirrorSet) (*MirrorSet, bool, error) {
	if dir {
		data = nil
	}
	for _, f := range formats {
		r, ok := f.(InputReader)
		if !ok {
			continue
		}
		m, ok, err := r.ReadInput(path, data, settings)
		if err != nil {
			return nil, true, err
		}
		if ok {
			return m, true, nil
		}
	}
	return nil, false, nil
}

// readerSettings returns the settings an input reader is given: cfg's
// sections (a ferry.yaml's; cfg may be nil) under the flags' (flags may be
// nil).
func readerSettings(cfg, flags *MirrorSet) *MirrorSet {
	out := &MirrorSet{}
	if cfg != nil {
		out.Sections.Merge(cfg.Sections)
	}
	if flags != nil {
		out.Sections.Merge(flags.Sections)
	}
	return out
}

// applyConfig sets on m, the MirrorSet a command-line ROOT describes,
// every setting of cfg, the ferry.yaml for it, other than the roots: its
// packages are not m's, nor the keys formats list as roots
// (RootSectionOwner: `mixins`, `charts`, `operators`), which the format
// reading the ROOT may consult for settings (a local chart's values in
// cfg's `charts: [{path, values}]`). A section m has already (the
// `mixins` of a porter.yaml) is m's.
func (m *MirrorSet) applyConfig(cfg *MirrorSet, formats []format.Format) {
	m.Replace = append(m.Replace, cfg.Replace...)
	for k, u := range cfg.Use {
		if m.Use == nil {
			m.Use = map[string]Use{}
		}
		if _, ok := m.Use[k]; !ok {
			m.Use[k] = u
		}
	}
	if m.Mirror.To == "" {
		m.Mirror = cfg.Mirror
	}
	if m.Mirrors == nil {
		m.Mirrors = cfg.Mirrors
	}
	if m.Trust == nil {
		m.Trust = cfg.Trust
	}
	if !m.Lock.RequireSigned {
		m.Lock = cfg.Lock
	}
	roots := map[string]bool{}
	for _, f := range formats {
		if o, ok := f.(RootSectionOwner); ok {
			for _, k := range o.RootSections() {
				roots[k] = true
			}
		}
	}
	for k, n := range cfg.Sections {
		if roots[k] {
			continue
		}
		if _, ok := m.Sections[k]; ok {
			continue
		}
		if m.Sections == nil {
			m.Sections = format.Sections{}
		}
		m.Sections[k] = n
	}
}

// expandPaths replaces every `packages:` entry with a path by the roots
// of the local input there, read as a command-line ROOT is (readInput),
// with m's sections as settings. The sections the input adds (the
// `mixins` of a porter.yaml) join m's: a list is appended to, any other
// section m lacks is set.
func (m *MirrorSet) expandPaths(formats []format.Format) error {
	var out []Package
	expanded := false
	for i, p := range m.Packages {
		if p.Path == "" {
			out = append(out, p)
			continue
		}
		expanded = true
		data, dir, err := readPath(p.Path)
		if err != nil {
			return fmt.Errorf("packages[%d]: %w", i, err)
		}
		if !dir && isMirrorSet(p.Path, data) {
			return fmt.Errorf("packages[%d]: %s is a ferry.yaml: a path names a local package (porter.yaml, crossplane.yaml, a chart, a KUDO package)", i, p.Path)
		}
		in, ok, err := readInput(p.Path, data, dir, formats, readerSettings(m, nil))
		if err != nil {
			return fmt.Errorf("packages[%d]: %s: %w", i, p.Path, err)
		}
		if !ok {
			return fmt.Errorf("packages[%d]: %s is no local package a format reads (porter.yaml, crossplane.yaml, a chart, a KUDO package)", i, p.Path)
		}
		out = append(out, in.Packages...)
		for k, n := range in.Sections {
			have, ok := m.Sections[k]
			switch {
			case !ok:
				if m.Sections == nil {
					m.Sections = format.Sections{}
				}
				m.Sections[k] = n
			case have.Kind == yaml.SequenceNode && n.Kind == yaml.SequenceNode && !sameNode(have, n):
				merged := have
				merged.Content = append(append([]*yaml.Node(nil), have.Content...), n.Content...)
				m.Sections[k] = merged
			}
		}
	}
	if !expanded {
		return nil
	}
	m.Packages = out
	if err := m.Validate(); err != nil {
		return err
	}
	return m.CheckSections(formats)
}

// sameNode reports whether two YAML nodes encode the same value.
func sameNode(a, b yaml.Node) bool {
	x, err1 := yaml.Marshal(&a)
	y, err2 := yaml.Marshal(&b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// isMirrorSet reports whether a file is a ferry.yaml: by its name, else by
// `kind: MirrorSet` in it.
func isMirrorSet(path string, data []byte) bool {
	switch strings.ToLower(filepath.Base(path)) {
	case DefaultFile, "ferry.yml":
		return true
	}
	var head struct {
		Kind string `yaml:"kind"`
	}
	return yaml.Unmarshal(data, &head) == nil && head.Kind == Kind
}

// configFor returns the ferry.yaml whose settings apply to command-line
// references: settings.Config when set, else ferry.yaml in the working
// directory when there is one; nil for none.
func configFor(formats []format.Format, settings *MirrorSet) (*MirrorSet, error) {
	path := ""
	if settings != nil {
		path = settings.Config
	}
	if path == "" {
		if st, err := os.Stat(DefaultFile); err != nil || st.IsDir() {
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, errkind.Markf(errkind.BadInput, "%s: %w", DefaultFile, err)
			}
			return nil, nil
		}
		path = DefaultFile
	}
	return load(path, formats, true)
}
