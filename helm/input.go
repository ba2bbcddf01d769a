package helm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	chart "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/mirrorset"
)

// ReadInput reads a local chart given as ROOT, the CI case of a chart
// being built: a Chart.yaml, a chart directory or a packaged .tgz. It is
// the `charts: [{path: PATH}]` entry of a ferry.yaml: the chart itself is
// not published, so it is not a root; its dependencies (as `helm
// dependency build` would fetch them: from Chart.lock when it is in sync,
// see lockedDependencies) are, and so are those of the charts its file://
// dependencies point to, and the images the chart deploys once they are
// in place (Expand). The Helm settings of settings (repository aliases,
// exclude) apply.
func (f Format) ReadInput(path string, data []byte, settings *mirrorset.MirrorSet) (*mirrorset.MirrorSet, bool, error) {
	if _, ok := chartInput(path, data); !ok {
		return nil, false, nil
	}
	m := &mirrorset.MirrorSet{APIVersion: mirrorset.APIVersion, Kind: mirrorset.Kind}
	if settings != nil {
		for _, k := range f.Sections() {
			if n, ok := settings.Sections[k]; ok && k != KeyCharts {
				if m.Sections == nil {
					m.Sections = format.Sections{}
				}
				m.Sections[k] = n
			}
		}
	}
	entry := ChartRoot{Path: path}
	// The ferry.yaml for this ROOT may give its values and set values in
	// a `charts:` entry of the same path.
	if s, err := settingsOf(settings); err == nil {
		for _, c := range s.Charts {
			if c.Path != "" && samePath(c.Path, path) {
				entry.Values, entry.Set = c.Values, c.Set
			}
		}
	}
	if err := m.SetSection(KeyCharts, []ChartRoot{entry}); err != nil {
		return nil, true, err
	}
	cf, err := f.Configure(m)
	if err != nil {
		return nil, true, err
	}
	// Read it now, so that a chart that does not load is bad input here.
	if _, err := cf.(Format).SectionRoots(m); err != nil {
		return nil, true, err
	}
	return m, true, nil
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

// localRoots adds to out the roots of a local chart ch (in dir, or ""
// for a .tgz): its dependencies, and those of the charts its file://
// dependencies point to. chain lists the charts that led here.
func (f Format) localRoots(ch *chart.Chart, dir string, chain []string, out *[]mirrorset.Package) error {
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
		*out = append(*out, mirrorset.Package{Ref: d.Ref, Version: d.Constraint, Format: "helm"})
	}
	vendored := map[string]bool{}
	for _, sub := range ch.Dependencies() {
		vendored[sub.Name()] = true
	}
	for _, d := range ch.Metadata.Dependencies {
		if d == nil || vendored[d.Name] || !strings.HasPrefix(d.Repository, "file://") {
			continue
		}
		sub, subDir, err := loadFileDependency(ch, dir, d, chain)
		if err != nil {
			return err
		}
		if err := f.localRoots(sub, subDir, chain, out); err != nil {
			return err
		}
	}
	return nil
}

// lockedDependencies returns the dependencies `helm dependency build`
// fetches for ch: those of Chart.lock, at their locked versions, when a
// Chart.lock is present and in sync with Chart.yaml, else Chart.yaml's
// (an `helm dependency update`), or Chart.yaml's when every one is
// vendored in charts/ (allVendored). A Chart.lock out of sync is an error
// with Helm's own message (pkg/downloader/manager.go Build); in sync
// means its digest equals Helm's hash of Chart.yaml's dependencies and
// the locked ones (internal/resolver/resolver.go HashReq), taken as
// Build and Update take it: after resolveRepoNames has replaced each
// "@NAME" or "alias:NAME" repository by the URL Helm's repositories.yaml
// gives NAME (ferry.yaml's aliases stand in for a name it lacks), every
// other repository (oci://, https://, file://) as Chart.yaml writes it.
func (f Format) lockedDependencies(ch *chart.Chart) ([]*chart.Dependency, error) {
	if ch.Lock == nil || allVendored(ch) {
		return ch.Metadata.Dependencies, nil
	}
	req := make([]*chart.Dependency, 0, len(ch.Metadata.Dependencies))
	for _, d := range ch.Metadata.Dependencies {
		c := *d
		if name, ok := aliasName(c.Repository); ok {
			u, found := f.Settings.helmRepository(name)
			if !found {
				if u, found = f.Settings.Repositories[name]; !found {
					// helm's resolveRepoNames: "no repository definition".
					return nil, fmt.Errorf("dependency %q: %w", c.Name, f.Settings.aliasError(c.Repository, name))
				}
			}
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

// allVendored reports whether every Chart.yaml dependency of ch is in its
// charts/ (as `helm dependency update` leaves it): `helm template` and
// `helm install` then render what is vendored without reading Chart.lock
// (helm's pkg/action/install.go CheckDependencies looks for each
// dependency among the loaded subcharts alone), and `helm dependency
// build` is not needed.
func allVendored(ch *chart.Chart) bool {
	vendored := map[string]bool{}
	for _, sub := range ch.Dependencies() {
		vendored[sub.Name()] = true
	}
	for _, d := range ch.Metadata.Dependencies {
		if d != nil && !vendored[d.Name] {
			return false
		}
	}
	return true
}

// hashReq is helm's internal/resolver/resolver.go HashReq: the sha256 of
// the JSON of the requested and the locked dependencies, hex-encoded as
// helm.sh/helm/v4/pkg/provenance/sign.go Digest writes it (one sha256,
// written out here; provenance.go uses that package for .prov files).
func hashReq(req, locked []*chart.Dependency) (string, error) {
	data, err := json.Marshal([2][]*chart.Dependency{req, locked})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// samePath reports whether a and b name one file or directory (a chart
// directory and its Chart.yaml count as one).
func samePath(a, b string) bool {
	abs := func(p string) string {
		if d := localDir(p); d != "" {
			p = d
		}
		if x, err := filepath.Abs(p); err == nil {
			return x
		}
		return filepath.Clean(p)
	}
	return abs(a) == abs(b)
}
