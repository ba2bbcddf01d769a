package mirrorset

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/resolve"
)

// SectionOwner is a format that owns top-level ferry.yaml keys (`mixins`
// and `platforms` for Porter mixins, `porter`, `crossplane`).
type SectionOwner interface {
	format.Format
	// Sections lists the keys the format owns.
	Sections() []string
	// CheckSections validates the format's keys of m, for errors at load
	// time that name the key.
	CheckSections(m *MirrorSet) error
}

// RootOwner is a format whose ferry.yaml section names roots of its own
// (Helm's `charts:`), beside `packages:`.
type RootOwner interface {
	format.Format
	// SectionRoots returns the roots m's sections of the format name.
	SectionRoots(m *MirrorSet) ([]Package, error)
}

// RefOwner is a format whose references are written in a form of its own
// (Helm's oci:// charts): a `packages:` entry or a command-line ROOT
// written so is chosen by the format's version policy, as the roots of
// its own section are (Helm's tag rule for `--version '^3'`).
type RefOwner interface {
	format.Format
	// OwnsRef reports whether ref, as the user wrote it, is one of the
	// format's.
	OwnsRef(ref string) bool
}

// AllRoots returns the roots to resolve: m's packages and the roots the
// formats' sections name. A package that names no format is the first
// RefOwner's that owns its reference.
func (m *MirrorSet) AllRoots(formats []format.Format) ([]resolve.Root, error) {
	all := &MirrorSet{Packages: append([]Package(nil), m.Packages...)}
	for i, p := range all.Packages {
		if p.Format != "" {
			continue
		}
		for _, f := range formats {
			if o, ok := f.(RefOwner); ok && o.OwnsRef(p.Ref) {
				all.Packages[i].Format = f.Name()
				break
			}
		}
	}
	for _, f := range formats {
		o, ok := f.(RootOwner)
		if !ok {
			continue
		}
		pkgs, err := o.SectionRoots(m)
		if err != nil {
			return nil, errkind.Markf(errkind.BadInput, "%w", err)
		}
		all.Packages = append(all.Packages, pkgs...)
	}
	return all.Roots(), nil
}

// RootSectionOwner is a SectionOwner some of whose keys list what to lock
// without being read through SectionRoots (the `mixins` to lock): a
// ferry.yaml beside a ROOT given on the command line does not add them.
type RootSectionOwner interface {
	format.Format
	// RootSections lists those keys.
	RootSections() []string
}

// InputReader is a format that accepts local files as ROOT (porter.yaml,
// crossplane.yaml).
type InputReader interface {
	format.Format
	// ReadInput returns the MirrorSet the file at path describes, or
	// false when the file is not one of the format's (by its name, else by
	// its content). settings carries the format's sections given by flags
	// or a ferry.yaml (crossplane's defaultRegistry), and may be empty.
	ReadInput(path string, data []byte, settings *MirrorSet) (*MirrorSet, bool, error)
}

// CheckSections checks that every top-level key of m is owned by one of
// formats, and lets each owner validate its keys.
func (m *MirrorSet) CheckSections(formats []format.Format) error {
	owned := map[string]bool{}
	var known []string
	for _, f := range formats {
		o, ok := f.(SectionOwner)
		if !ok {
			continue
		}
		for _, k := range o.Sections() {
			owned[k] = true
			known = append(known, k)
		}
	}
	var unknown []string
	for k := range m.Sections {
		if !owned[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		sort.Strings(known)
		return fmt.Errorf("unknown key %s: a ferry.yaml has apiVersion, kind, packages, replace, use, mirror, mirrors, trust, lock and %s", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	for _, f := range formats {
		if o, ok := f.(SectionOwner); ok {
			if err := o.CheckSections(m); err != nil {
				return err
			}
		}
	}
	return nil
}
