package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	chart "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2"
	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/loader"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/ociref"
)

// MaxChartSize caps a chart archive (.tgz) read from a registry or a
// repository.
const MaxChartSize = 64 << 20

// Match reports whether a manifest is an OCI chart: its config has Helm's
// config media type (helm.sh/helm/v4/pkg/registry/client.go Pull checks
// the same).
func (Format) Match(desc ocispec.Descriptor, manifest []byte) bool {
	if !bytes.Contains(manifest, []byte(ConfigMediaType)) {
		return false
	}
	var m ocispec.Manifest
	return json.Unmarshal(manifest, &m) == nil && m.Config.MediaType == ConfigMediaType
}

// Read reads an OCI chart: its chart layer, loaded with Helm's loader.
// The dependencies are those of Chart.yaml not vendored in charts/, and
// the images those the rendered templates (vendored subcharts included)
// and the artifacthub.io/images annotation name.
func (f Format) Read(ctx context.Context, repo content.Fetcher, desc ocispec.Descriptor, manifest []byte) (*format.Metadata, error) {
	var m ocispec.Manifest
	if err := json.Unmarshal(manifest, &m); err != nil {
		return nil, fmt.Errorf("chart manifest: %w", err)
	}
	layer, ok := chartLayer(m)
	if !ok {
		return nil, fmt.Errorf("chart manifest %s has no layer of type %s", desc.Digest, ChartLayerMediaType)
	}
	data, err := fetchCapped(ctx, repo, layer, MaxChartSize)
	if err != nil {
		return nil, fmt.Errorf("chart layer %s: %w", layer.Digest, err)
	}
	ch, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("chart layer %s is not a chart: %w", layer.Digest, err)
	}
	meta, err := f.metadata(ch)
	if err != nil {
		return nil, err
	}
	meta.Attributes = map[string]string{AttributeChartDigest: layer.Digest.String()}
	return meta, nil
}

// AttributeChartDigest is the lock attribute holding a chart archive's
// sha256 (the chart layer): for a chart from a classic repository, the
// digest its index.yaml records, which the download was checked against.
const AttributeChartDigest = "chartDigest"

// chartLayer finds the chart's content layer (or its pre-3.8 media type).
func chartLayer(m ocispec.Manifest) (ocispec.Descriptor, bool) {
	for _, l := range m.Layers {
		if l.MediaType == ChartLayerMediaType || l.MediaType == LegacyChartLayerMediaType {
			return l, true
		}
	}
	return ocispec.Descriptor{}, false
}

// fetchCapped reads a blob whole, refusing one larger than max.
func fetchCapped(ctx context.Context, repo content.Fetcher, desc ocispec.Descriptor, max int64) ([]byte, error) {
	if desc.Size > max {
		return nil, fmt.Errorf("%d bytes is more than the %d a chart may have", desc.Size, max)
	}
	rc, err := repo.Fetch(ctx, desc)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := content.ReadAll(io.LimitReader(rc, desc.Size+1), desc)
	if err != nil {
		return nil, err
	}
	return data, nil
}

// metadata is what the resolver needs of a loaded chart: its
// dependencies not vendored in charts/. Its images are found once the
// closure is resolved (Expand, tree.go), with the chart's dependencies in
// place; the chart is kept in Data for it.
func (f Format) metadata(ch *chart.Chart) (*format.Metadata, error) {
	meta := &format.Metadata{
		Kind:            format.KindHelmChart,
		Name:            ch.Name(),
		Version:         ch.Metadata.Version,
		TaggedByVersion: true,
	}
	if err := checkChartMetadata(ch); err != nil {
		return nil, err
	}
	// A published chart that cannot be read is a failure (exit 1), as a
	// malformed bundle.json is.
	cd := &chartData{chart: ch}
	deps, err := f.dependencies(ch, ch.Metadata.Dependencies, false)
	if err != nil {
		return nil, err
	}
	for _, d := range deps {
		cd.deps = append(cd.deps, declaredDependency{dep: d.declared, ref: d.Ref, constraint: d.Constraint})
		meta.Dependencies = append(meta.Dependencies, d.Dependency)
	}
	meta.Data = cd
	return meta, nil
}

// chartDependency is a Chart.yaml dependency and the package it names.
type chartDependency struct {
	format.Dependency
	declared *chart.Dependency
}

// dependencies maps Chart.yaml's dependencies to the packages they name,
// leaving out those vendored in charts/ (part of the chart, as helm's
// pkg/action/install.go CheckDependencies finds them: a loaded
// subchart of the same name). alias, condition and tags never drop one:
// values may enable it at install. local reports a chart on disk, whose
// file:// dependencies the caller reads; a chart from a registry or a
// repository must carry them vendored.
func (f Format) dependencies(ch *chart.Chart, deps []*chart.Dependency, local bool) ([]chartDependency, error) {
	vendored := map[string]bool{}
	for _, sub := range ch.Dependencies() {
		vendored[sub.Name()] = true
	}
	var out []chartDependency
	for _, d := range deps {
		if d == nil || vendored[d.Name] {
			continue
		}
		switch {
		case d.Repository == "":
			return nil, fmt.Errorf("chart %s: dependency %q names no repository and is not in charts/ (run helm dependency build before packaging)", ch.Name(), d.Name)
		case strings.HasPrefix(d.Repository, "file://"):
			if local {
				continue
			}
			return nil, fmt.Errorf("chart %s: dependency %q is at %s and is not in charts/ (run helm dependency build before packaging)", ch.Name(), d.Name, d.Repository)
		}
		dep, err := f.dependency(ch.Name(), d)
		if err != nil {
			return nil, err
		}
		out = append(out, chartDependency{dep, d})
	}
	return out, nil
}

// dependency maps one Chart.yaml dependency with a repository to the
// package it names.
func (f Format) dependency(parent string, d *chart.Dependency) (format.Dependency, error) {
	if _, err := semver.NewConstraint(d.Version); err != nil {
		// helm's internal/resolver/resolver.go refuses the same.
		return format.Dependency{}, fmt.Errorf("chart %s: dependency %q has an invalid version/constraint format %q: %w", parent, d.Name, d.Version, err)
	}
	u, err := f.Settings.repositoryURL(d.Repository)
	if err != nil {
		return format.Dependency{}, fmt.Errorf("chart %s: dependency %q: %w", parent, d.Name, err)
	}
	if !strings.HasPrefix(u, ociref.OCIScheme) && !ociref.IsURLSource(u) {
		return format.Dependency{}, fmt.Errorf("chart %s: dependency %q: repository %q is not oci://, http(s)://, file:// or an @alias", parent, d.Name, d.Repository)
	}
	ref, err := joinRepo(u, d.Name)
	if err != nil {
		return format.Dependency{}, fmt.Errorf("chart %s: dependency %q: %w", parent, d.Name, err)
	}
	ref, constraint := pinVersion(ref, d.Version)
	return format.Dependency{Name: d.Name, Ref: ref, Constraint: constraint}, nil
}

// pinVersion turns a single version of an OCI chart into its tag ("+"
// written "_", Helm's tag rule in pkg/registry), as Helm pulls an
// explicit version without listing tags (helm's
// internal/resolver/resolver.go). A range, or any version of a chart in a
// classic repository (matched against index.yaml as a constraint), stays
// a constraint; "sha256:…" pins the digest.
func pinVersion(ref, version string) (string, string) {
	switch {
	case version == "":
		return ref, ""
	case strings.HasPrefix(version, "sha256:"):
		return ref + "@" + version, ""
	case ociref.IsURLSource(ref):
		return ref, version
	}
	if _, err := semver.NewVersion(version); err != nil {
		return ref, version
	}
	if r, err := ociref.Parse(ref); err == nil && r.Tag == "" && r.Digest == "" {
		return r.WithTag(strings.ReplaceAll(version, "+", "_")).String(), ""
	}
	return ref, version
}

// images renders ch (its dependencies in place) with vals and returns
// the images it deploys as dependencies of kind image, named by the
// template that names them, leaving out those ferry.yaml excludes. A
// reference without tag or digest is ":latest", as the container runtime
// pulls it.
func (f Format) images(ch *chart.Chart, vals map[string]any) ([]format.Dependency, []string, error) {
	uses, err := ImagesWith(ch, vals, f.Settings.ImagePaths)
	if err != nil {
		return nil, nil, fmt.Errorf("rendering chart %s: %w", ch.Name(), err)
	}
	seen := map[string]bool{}
	var out []format.Dependency
	var warnings []string
	for _, u := range uses {
		if u.RunTime {
			w := fmt.Sprintf("chart %s: image %s is deployed at run time by an operator (a flag in %s), not locked: add it to the closure as a root if the mirror must hold it", ch.Name(), u.Ref, u.Template)
			if !slices.Contains(warnings, w) {
				warnings = append(warnings, w)
			}
			continue
		}
		r, err := ociref.ParseNormalized(u.Ref, "")
		if err != nil {
			return nil, nil, fmt.Errorf("chart %s: %s deploys image %q: %w", u.Chart, u.Template, u.Ref, err)
		}
		if r.Tag == "" && r.Digest == "" {
			r.Tag = "latest"
		}
		if f.excluded(r) || seen[r.String()] {
			continue
		}
		seen[r.String()] = true
		out = append(out, format.Dependency{Name: u.Template, Ref: r.String(), Kind: format.KindImage})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out, warnings, nil
}

// excluded reports whether ferry.yaml's `exclude:` names r: its
// repository, or r itself.
func (f Format) excluded(r ociref.Reference) bool {
	for _, e := range f.Settings.Exclude {
		x, err := ociref.ParseNormalized(e, "")
		if err != nil || x.Repo() != r.Repo() {
			continue
		}
		if (x.Tag == "" || x.Tag == r.Tag) && (x.Digest == "" || x.Digest == r.Digest) {
			return true
		}
	}
	return false
}

// errNotChart is wrapped by errors for inputs that are not charts.
var errNotChart = errors.New("not a Helm chart")
