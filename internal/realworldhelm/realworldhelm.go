// Package realworldhelm is the test oracle for the real charts vendored in
// testdata/realworld/helm: it lays a chart out as `helm dependency build`
// leaves it (every dependency's archive in charts/, chosen from the
// vendored archives by Helm's rule: the highest version satisfying the
// range) and lists the images `helm template` prints for it, found the
// way a user finds them in its output (every `image:` line), independently
// of ferry's own rendering and extraction.
package realworldhelm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	commonchart "helm.sh/helm/v4/pkg/chart/common"
	commonutil "helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
)

// Archive is one vendored chart, as its maintainers publish it.
type Archive struct {
	// Name and Version are the chart's, from its Chart.yaml.
	Name, Version string
	// File is the vendored source archive's path.
	File string
	// Data is the chart as `helm package` writes it from the source:
	// loaded with Helm's loader from the source folder (which applies
	// .helmignore: grafana's leaves out templates/tests/) and saved with
	// chartutil.Save.
	Data []byte
	// Chart is the packaged chart as Helm's loader reads it.
	Chart *chart.Chart
}

// Load reads every vendored chart source (*.tgz, a `git archive` of the
// chart's folder) in dir and packages it as `helm package` does.
func Load(dir string) ([]Archive, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.tgz"))
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "realworldhelm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	var out []Archive
	for i, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		data, err := packageSource(src, filepath.Join(work, fmt.Sprint(i)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		ch, err := loader.LoadArchive(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, Archive{Name: ch.Name(), Version: ch.Metadata.Version, File: f, Data: data, Chart: ch})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, nil
}

// packageSource is `helm package` of the chart whose source folder the
// archive src holds (extracted under dir): pkg/action/package.go loads
// the folder with loader.LoadDir and writes it with chartutil.Save.
func packageSource(src []byte, dir string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := extract(src, dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || !entries[0].IsDir() {
		return nil, fmt.Errorf("want one chart folder in the archive")
	}
	ch, err := loader.LoadDir(filepath.Join(dir, entries[0].Name()))
	if err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	p, err := chartutil.Save(ch, out)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// Pick returns the archive of chart name with the highest version
// satisfying constraint, as helm's internal/resolver/resolver.go picks a
// dependency's version.
func Pick(archives []Archive, name, constraint string) (Archive, error) {
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return Archive{}, err
	}
	var best Archive
	var bestV *semver.Version
	for _, a := range archives {
		if a.Name != name {
			continue
		}
		v, err := semver.NewVersion(a.Version)
		if err != nil || !c.Check(v) {
			continue
		}
		if bestV == nil || v.GreaterThan(bestV) {
			best, bestV = a, v
		}
	}
	if bestV == nil {
		return Archive{}, fmt.Errorf("no vendored chart %s satisfies %q", name, constraint)
	}
	return best, nil
}

// Layout extracts the chart a into dir/NAME and puts each dependency its
// Chart.yaml declares and charts/ lacks into charts/ as an archive, each
// laid out the same way first (a published chart carries its own
// dependencies in charts/, which `helm package` after `helm dependency
// build` puts there). It returns the chart's directory.
func Layout(archives []Archive, a Archive, dir string) (string, error) {
	root := filepath.Join(dir, a.Name)
	if err := extract(a.Data, dir); err != nil {
		return "", err
	}
	have := map[string]bool{}
	for _, sub := range a.Chart.Dependencies() {
		have[sub.Name()] = true
	}
	for _, d := range a.Chart.Metadata.Dependencies {
		if have[d.Name] {
			continue
		}
		dep, err := Pick(archives, d.Name, d.Version)
		if err != nil {
			return "", fmt.Errorf("%s: %w", a.Name, err)
		}
		work, err := os.MkdirTemp(dir, "dep-")
		if err != nil {
			return "", err
		}
		subDir, err := Layout(archives, dep, work)
		if err != nil {
			return "", err
		}
		sub, err := loader.LoadDir(subDir)
		if err != nil {
			return "", err
		}
		if _, err := chartutil.Save(sub, filepath.Join(root, "charts")); err != nil {
			return "", err
		}
	}
	return root, nil
}

// extract unpacks a chart archive under dir.
func extract(data []byte, dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		if strings.HasPrefix(name, "..") || path.IsAbs(name) {
			return fmt.Errorf("archive entry %s escapes", h.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				return err
			}
		}
	}
}

// imageLine is an `image:` field as `helm template`'s output writes it,
// quoted or not.
var imageLine = regexp.MustCompile(`(?m)^[\s-]*image:\s*["']?([^"'\s{}]+)["']?\s*$`)

// TemplateImages renders the chart in dir as `helm template` does (helm's
// pkg/action/install.go client-only: dependencies processed, values
// coalesced for release "release-name" in namespace "default", the
// default capabilities, the engine's render, NOTES.txt and partials
// dropped) with vals, and returns every `image:` value of the output,
// sorted and without duplicates.
func TemplateImages(dir string, vals map[string]any) ([]string, error) {
	ch, err := loader.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return nil, err
	}
	top, err := commonutil.ToRenderValuesWithSchemaValidation(ch, vals, commonchart.ReleaseOptions{
		Name: "release-name", Namespace: "default", Revision: 1, IsInstall: true,
	}, commonchart.DefaultCapabilities.Copy(), false)
	if err != nil {
		return nil, err
	}
	files, err := engine.Engine{}.Render(ch, top)
	if err != nil {
		return nil, err
	}
	var out []string
	for name, content := range files {
		if strings.HasSuffix(name, "NOTES.txt") || strings.HasPrefix(path.Base(name), "_") {
			continue
		}
		for _, m := range imageLine.FindAllStringSubmatch(content, -1) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
