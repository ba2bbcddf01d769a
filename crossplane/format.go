package crossplane

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/resolve"
)

// KeyCrossplane is ferry.yaml's `crossplane:` section.
const KeyCrossplane = "crossplane"

// InstallDir is the install directory's folder of Crossplane manifests.
const InstallDir = "crossplane"

// AttributeCrossplane is the lock attribute of a package holding its
// spec.crossplane.version constraint.
const AttributeCrossplane = "crossplane"

// Register declares what the format adds to the pipeline's packages
// (package formats' one initialiser calls it: an initialiser here would
// read in one more page of machine code at every start of every
// command). Calling it again changes nothing.
// For Crossplane: the lock field crossplane.
func Register() { lock.RegisterAttribute(AttributeCrossplane) }

// attributes returns what the lock records of m beside every package's
// fields.
func (m *Meta) attributes() map[string]string {
	if m.Crossplane == "" {
		return nil
	}
	return map[string]string{AttributeCrossplane: m.Crossplane}
}

// Settings are ferry.yaml's `crossplane:` section.
type Settings struct {
	// DefaultRegistry qualifies a local crossplane.yaml's dependencies
	// written without a registry; empty: the registry its
	// spec.crossplane.version selects (RegistriesFor), else
	// DefaultRegistry.
	DefaultRegistry string `yaml:"defaultRegistry,omitempty"`
	// PackagePullSecrets name the Secrets holding the mirror's
	// credentials, written into every installed package and the
	// ImageConfig.
	PackagePullSecrets []string `yaml:"packagePullSecrets,omitempty"`
}

// Format is the Crossplane package format: its registry reader, its
// resolution rules (partially qualified references relative to the parent,
// one version of a package per closure), crossplane.yaml as ROOT, and the
// manifests `ferry install` writes.
type Format struct {
	Reader
	// Settings are ferry.yaml's `crossplane:` section (or flags).
	Settings Settings
}

var (
	_ resolve.Rules          = Format{}
	_ mirrorset.InputReader  = Format{}
	_ mirrorset.SectionOwner = Format{}
	_ install.Writer         = Format{}
)

// Name returns "crossplane".
func (Format) Name() string { return "crossplane" }

// Kinds lists the package kinds the format reads.
func (Format) Kinds() []string {
	return []string{format.KindCrossplaneConfiguration, format.KindCrossplaneProvider, format.KindCrossplaneFunction}
}

// Policy is Crossplane's: a cluster holds one version of a package, so
// every edge to a repository shares one version, the highest satisfying
// every constraint (internal/controller/pkg/resolver picks the highest
// valid version of a dependency), and a closure holding two versions of
// one package is a conflict (the package manager's Lock object records one
// version of each package: internal/controller/pkg/resolver).
func (Format) Policy() resolve.Policy { return resolve.Policy{Name: "highest", OneVersion: true} }

// Sections lists the ferry.yaml keys the format owns.
func (Format) Sections() []string { return []string{KeyCrossplane} }

// CheckSections validates ferry.yaml's `crossplane:` section.
func (Format) CheckSections(m *mirrorset.MirrorSet) error {
	_, err := settingsOf(m)
	return err
}

func settingsOf(m *mirrorset.MirrorSet) (Settings, error) {
	var s Settings
	if m == nil {
		return s, nil
	}
	if _, err := m.Section(KeyCrossplane, &s); err != nil {
		return s, err
	}
	if s.DefaultRegistry != "" && strings.ContainsAny(s.DefaultRegistry, "/@ ") {
		return s, fmt.Errorf("%s.defaultRegistry %q: name a registry host, such as %s", KeyCrossplane, s.DefaultRegistry, DefaultRegistry)
	}
	if _, err := pullSecretRefs(s.PackagePullSecrets); err != nil {
		return s, fmt.Errorf("%s.packagePullSecrets: %w", KeyCrossplane, err)
	}
	return s, nil
}

// Configure returns the format with ferry.yaml's `crossplane:` settings.
func (f Format) Configure(m *mirrorset.MirrorSet) (format.Format, error) {
	s, err := settingsOf(m)
	if err != nil {
		return nil, err
	}
	f.Settings = s
	return f, nil
}

// ReadInput reads a local crossplane.yaml given as ROOT (by its name, or
// by a meta.pkg.crossplane.io apiVersion), or an Upbound project file
// (upbound.yaml, or a meta.dev.upbound.io apiVersion) as the Configuration
// `up project build` makes of it (ProjectMeta): its dependencies are the
// roots, qualified with the default registry of settings' `crossplane:`
// section.
func (f Format) ReadInput(path string, data []byte, settings *mirrorset.MirrorSet) (*mirrorset.MirrorSet, bool, error) {
	if !isCrossplaneYAML(path, data) {
		return nil, false, nil
	}
	s, err := settingsOf(settings)
	if err != nil {
		return nil, true, err
	}
	if s.DefaultRegistry == "" {
		s.DefaultRegistry = f.Settings.DefaultRegistry
	}
	read := ReadRoots
	if isUpboundProject(path, data) {
		read = ReadProjectRoots
	}
	roots, err := read(data, s.DefaultRegistry)
	if errors.Is(err, ErrNoDependencies) {
		return nil, true, fmt.Errorf("%w: nothing to resolve", err)
	}
	if err != nil {
		return nil, true, err
	}
	m := &mirrorset.MirrorSet{APIVersion: mirrorset.APIVersion, Kind: mirrorset.Kind}
	for _, r := range roots {
		m.Packages = append(m.Packages, mirrorset.Package{Ref: r.Ref, Version: r.Constraint})
	}
	if settings != nil {
		if n, ok := settings.Sections[KeyCrossplane]; ok {
			m.Sections = format.Sections{KeyCrossplane: n}
		}
	}
	return m, true, nil
}

func isCrossplaneYAML(path string, data []byte) bool {
	switch strings.ToLower(filepath.Base(path)) {
	case "crossplane.yaml", "crossplane.yml", ProjectFileName:
		return true
	}
	if isProject(data) {
		return true
	}
	var head struct {
		APIVersion string `yaml:"apiVersion"`
	}
	return yaml.Unmarshal(data, &head) == nil && strings.HasPrefix(head.APIVersion, MetaGroup+"/")
}

// isUpboundProject reports whether the ROOT at path is an Upbound project
// file: named upbound.yaml, or of apiVersion meta.dev.upbound.io/….
func isUpboundProject(path string, data []byte) bool {
	return strings.EqualFold(filepath.Base(path), ProjectFileName) || isProject(data)
}

// WriteInstall writes crossplane/: an ImageConfig rewriting each source
// prefix to the mirror, and one package manifest per Crossplane package in
// plan order, named as Crossplane names it, pinned by digest with
// dependency resolution off, with the configured pull secrets.
func (f Format) WriteInstall(dir string, _ *lock.Lock, plan *install.Plan) error {
	kinds := f.Kinds()
	var pkgs []InstallPackage
	for _, st := range plan.Steps {
		if !slices.Contains(kinds, st.Kind) {
			continue
		}
		mirror, _, _ := strings.Cut(st.Mirror, "@")
		pkgs = append(pkgs, InstallPackage{
			Kind: st.Kind, Name: filepath.Base(st.Source), Source: st.Source, Mirror: mirror, Digest: st.Digest,
		})
	}
	if len(pkgs) == 0 {
		return nil
	}
	files, err := RenderInstallWith(pkgs, nil, RenderOptions{PullSecrets: f.Settings.PackagePullSecrets})
	if err != nil {
		return fmt.Errorf("rendering Crossplane manifests: %w", err)
	}
	for name, data := range files {
		if err := install.WriteFile(dir, InstallDir+"/"+name, data, 0o644); err != nil {
			return fmt.Errorf("writing Crossplane manifest: %w", err)
		}
	}
	return nil
}
