package helm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/provenance"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/sizecap"
)

// ReadInput reads a local chart given as ROOT, the CI case of a chart
// being built: a Chart.yaml, a chart directory or a packaged .tgz. The
// chart itself is not published, so it is not a root; its dependencies
// (as `helm dependency build` would fetch them: from Chart.lock when it
// is in sync, see lockedDependencies) and the images it deploys are,
// and so are those of the charts its file:// dependencies point to.
func (f Format) ReadInput(path string, data []byte, settings *mirrorset.MirrorSet) (*mirrorset.MirrorSet, bool, error) {
	dir, ok := chartInput(path, data)
	if !ok {
		return nil, false, nil
	}
	cf, err := f.Configure(settings)
	if err != nil {
		return nil, true, err
	}
	f = cf.(Format)
	var ch *chart.Chart
	if dir != "" {
		ch, err = loader.LoadDir(dir)
	} else {
		ch, err = loader.LoadArchive(bytes.NewReader(data))
	}
	if err != nil {
		return nil, true, fmt.Errorf("%w: %w", errNotChart, err)
	}
	m := &mirrorset.MirrorSet{APIVersion: mirrorset.APIVersion, Kind: mirrorset.Kind}
	if err := f.localRoots(ch, dir, nil, m); err != nil {
		return nil, true, err
	}
	if len(m.Packages) == 0 {
		return nil, true, fmt.Errorf("chart %s has no dependency to fetch and deploys no image: nothing to resolve", ch.Name())
	}
	if settings != nil {
		for _, k := range f.Sections() {
			if n, ok := settings.Sections[k]; ok {
				if m.Sections == nil {
					m.Sections = format.Sections{}
				}
				m.Sections[k] = n
			}
		}
	}
	return m, true, nil
}

// readLocal reads the local chart at path (a directory, Chart.yaml or a
// .tgz) as ReadInput reads a chart given as ROOT, with settings' sections.
func (f Format) readLocal(path string, settings *mirrorset.MirrorSet) (*mirrorset.MirrorSet, error) {
	var data []byte
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if data, err = sizecap.ReadFile(path, mirrorset.MaxFileSize); err != nil {
			return nil, err
		}
	}
	m, ok, err := f.ReadInput(path, data, settings)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("not a chart: want a chart directory, its Chart.yaml or a packaged .tgz")
	}
	return m, nil
}

// chartInput reports whether path (with its data; nil for a directory)
// is a local chart, and returns the chart's directory, or "" for a .tgz.
func chartInput(path string, data []byte) (string, bool) {
	if data == nil {
		if st, err := os.Stat(filepath.Join(path, "Chart.yaml")); err == nil && !st.IsDir() {
			return path, true
		}
		return "", false
	}
	base := strings.ToLower(filepath.Base(path))
	if base == "chart.yaml" || base == "chart.yml" {
		return filepath.Dir(path), true
	}
	if strings.HasSuffix(base, ".tgz") || strings.HasSuffix(base, ".tar.gz") {
		return "", len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b
	}
	return "", false
}

// localRoots adds to m the roots of a local chart ch (in dir, or "" for
// a .tgz): its dependencies and its images, and those of the charts its
// file:// dependencies point to. chain lists the charts that led here.
func (f Format) localRoots(ch *chart.Chart, dir string, chain []string, m *mirrorset.MirrorSet) error {
	chain = append(chain, ch.Name())
	if len(chain) > 32 {
		return fmt.Errorf("%s: file:// dependencies nest too deep", strings.Join(chain, " -> "))
	}
	deps, err := f.lockedDependencies(ch)
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(chain, " -> "), err)
	}
	meta, err := f.dependencies(ch, deps, dir != "")
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(chain, " -> "), err)
	}
	for _, d := range meta {
		m.Packages = append(m.Packages, mirrorset.Package{Ref: d.Ref, Version: d.Constraint, Format: "helm"})
	}
	images, err := f.images(ch)
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(chain, " -> "), err)
	}
	for _, d := range images {
		m.Packages = append(m.Packages, mirrorset.Package{Ref: d.Ref, Format: "helm", Kind: format.KindImage})
	}
	vendored := map[string]bool{}
	for _, sub := range ch.Dependencies() {
		vendored[sub.Name()] = true
	}
	for _, d := range ch.Metadata.Dependencies {
		if d == nil || vendored[d.Name] || !strings.HasPrefix(d.Repository, "file://") {
			continue
		}
		if dir == "" {
			return fmt.Errorf("%s: dependency %q is at %s and is not in charts/ of the packaged chart", strings.Join(chain, " -> "), d.Name, d.Repository)
		}
		// helm's internal/resolver GetLocalPath: relative to the chart.
		p := strings.TrimPrefix(d.Repository, "file://")
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		sub, err := loader.LoadDir(p)
		if err != nil {
			return fmt.Errorf("%s: dependency %q at %s: %w", strings.Join(chain, " -> "), d.Name, d.Repository, err)
		}
		if c, err := semver.NewConstraint(d.Version); err == nil {
			if v, err := semver.NewVersion(sub.Metadata.Version); err == nil && !c.Check(v) {
				return fmt.Errorf("%s: dependency %q at %s is version %s, which does not satisfy %q", strings.Join(chain, " -> "), d.Name, d.Repository, sub.Metadata.Version, d.Version)
			}
		}
		if err := f.localRoots(sub, p, chain, m); err != nil {
			return err
		}
	}
	return nil
}

// lockedDependencies returns the dependencies `helm dependency build`
// fetches for ch: those of Chart.lock, at their locked versions, when a
// Chart.lock is present and in sync with Chart.yaml, else Chart.yaml's
// (an `helm dependency update`). A Chart.lock out of sync is an error
// with Helm's own message (pkg/downloader/manager.go Build); in sync
// means its digest equals Helm's hash of Chart.yaml's dependencies, with
// repository aliases resolved, and the locked ones
// (internal/resolver/resolver.go HashReq).
func (f Format) lockedDependencies(ch *chart.Chart) ([]*chart.Dependency, error) {
	if ch.Lock == nil {
		return ch.Metadata.Dependencies, nil
	}
	req := make([]*chart.Dependency, 0, len(ch.Metadata.Dependencies))
	for _, d := range ch.Metadata.Dependencies {
		c := *d
		if u, err := f.Settings.repositoryURL(c.Repository); err == nil {
			c.Repository = u
		}
		req = append(req, &c)
	}
	sum, err := hashReq(req, ch.Lock.Dependencies)
	if err != nil || sum != ch.Lock.Digest {
		return nil, fmt.Errorf("the lock file (Chart.lock) is out of sync with the dependencies file (Chart.yaml); update it with 'helm dependency update'")
	}
	return ch.Lock.Dependencies, nil
}

// hashReq is helm's internal/resolver/resolver.go HashReq: the sha256 of
// the JSON of the requested and the locked dependencies.
func hashReq(req, locked []*chart.Dependency) (string, error) {
	data, err := json.Marshal([2][]*chart.Dependency{req, locked})
	if err != nil {
		return "", err
	}
	s, err := provenance.Digest(bytes.NewBuffer(data))
	return "sha256:" + s, err
}
