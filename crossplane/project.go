package crossplane

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ProjectGroup is the API group of an Upbound project file (upbound.yaml,
// kind Project), the source form of a Configuration that `up project
// build` turns into a package.
const ProjectGroup = "meta.dev.upbound.io"

// ProjectFileName is the project file's name (`up project build -f`'s
// default).
const ProjectFileName = "upbound.yaml"

// projectVersions are the meta.dev.upbound.io versions ferry reads:
// v1alpha1 (upbound/up pkg/apis/project/v1alpha1/project_types.go) and
// v2alpha1, which upbound/platform-ref-aws and its siblings use today and
// which keeps v1alpha1's spec.dependsOn and spec.crossplane (it adds
// apiDependencies, schemas `up` generates code from, not packages).
var projectVersions = []string{"v1alpha1", "v2alpha1"}

// rawProject is the part of an Upbound Project that becomes package
// metadata.
type rawProject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec *struct {
		Repository string `yaml:"repository"`
		Crossplane *struct {
			Version string `yaml:"version"`
		} `yaml:"crossplane"`
		DependsOn []rawDependency `yaml:"dependsOn"`
	} `yaml:"spec"`
}

// isProject reports whether data is an Upbound project file.
func isProject(data []byte) bool {
	var head struct {
		APIVersion string `yaml:"apiVersion"`
	}
	return yaml.Unmarshal(data, &head) == nil && strings.HasPrefix(head.APIVersion, ProjectGroup+"/")
}

// ProjectMeta returns the Configuration meta object `up project build`
// writes for an Upbound project file: its name, spec.crossplane and
// spec.dependsOn unchanged (upbound/up cmd/up/project/build/build.go Run:
// `cfg := &metav1.Configuration{... Spec: {MetaSpec: {Crossplane:
// project.Spec.Crossplane, DependsOn: project.Spec.DependsOn}}}`), after
// the project's own checks (pkg/apis/project/v1alpha1/validate.go: a
// name, a spec, a repository). Functions the project embeds (its
// functions/ folder) are built and pushed by `up project build` and `up
// project push` beside the package and added to its dependencies then;
// upbound.yaml does not name them, so a lock of the project does not hold
// them: lock the pushed package (`up project build && up project push`,
// then `ferry lock REPOSITORY:TAG`) to include them.
func ProjectMeta(data []byte) (*Meta, error) {
	var p rawProject
	if err := yaml.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, ProjectFileName, err)
	}
	group, version, _ := strings.Cut(p.APIVersion, "/")
	switch {
	case group != ProjectGroup || p.Kind != "Project":
		return nil, fmt.Errorf("%w: %s is %s %q, not a %s Project", ErrNoMeta, ProjectFileName, p.Kind, p.APIVersion, ProjectGroup)
	case !slices.Contains(projectVersions, version):
		return nil, fmt.Errorf("%w %q in %s: ferry reads %s/v1alpha1 and v2alpha1 projects; build the package with `up project build`, push it with `up project push`, and lock the pushed package", ErrUnknownAPIVersion, p.APIVersion, ProjectFileName, ProjectGroup)
	case p.Metadata.Name == "":
		return nil, fmt.Errorf("%w: Project in %s has no metadata.name", ErrNoMeta, ProjectFileName)
	case p.Spec == nil:
		return nil, fmt.Errorf("%w: Project %q in %s has no spec", ErrNoMeta, p.Metadata.Name, ProjectFileName)
	case p.Spec.Repository == "":
		return nil, fmt.Errorf("%w: Project %q in %s has no spec.repository", ErrNoMeta, p.Metadata.Name, ProjectFileName)
	}
	raw := rawMeta{APIVersion: MetaGroup + "/v1", Kind: KindConfiguration}
	raw.Metadata.Name = p.Metadata.Name
	raw.Spec.DependsOn = p.Spec.DependsOn
	if p.Spec.Crossplane != nil {
		raw.Spec.Crossplane = &struct {
			Version string `yaml:"version"`
		}{Version: p.Spec.Crossplane.Version}
	}
	m, err := raw.toMeta()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ProjectFileName, err)
	}
	return m, nil
}
