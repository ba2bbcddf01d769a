package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	chart "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2"
	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/loader"
	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/lock"
)

// HandOffDir is the install directory's folder of chart copies that name
// the mirror: helm/NAME-VERSION/, a chart directory whose Chart.yaml
// dependencies' `repository:` and Chart.lock point at the mirror, so that
// `helm dependency build` and `helm install` read nothing but the mirror.
const HandOffDir = "helm"

// errNoHandOff is wrapped by the errors that leave a chart without a copy
// naming the mirror (a dependency the lock did not resolve to a chart, a
// mirror repository helm cannot name): the install goes on, and
// helm/NAME-VERSION.txt says why instead.
var errNoHandOff = errors.New("no copy naming the mirror")

// maxHandOffFiles caps the files of one chart archive the copy writes.
const maxHandOffFiles = 10000

// installedChart is a chart in the install: its name and version (from its
// config), and the mirror repository it was installed from.
type installedChart struct {
	name, version, mirrorRepo string
}

// writeHandOff writes helm/NAME-VERSION/: the chart archive data
// unpacked, with
//
//   - every Chart.yaml dependency that ferry resolved (one not vendored in
//     charts/) given `repository: oci://MIRROR_PREFIX`, where
//     MIRROR_PREFIX/NAME is the mirror repository of the chart the lock
//     resolved it to;
//   - every vendored dependency given `repository: ""` (helm's "in the
//     charts directory"), and vendored archives charts/X.tgz unpacked into
//     charts/NAME/, the shape `helm dependency build` checks a
//     repository-less dependency in (helm's pkg/downloader/manager.go
//     downloadAll loads charts/NAME as a directory; safeMoveDeps would
//     delete a vendored archive the lock does not list);
//   - a Chart.lock listing, in Chart.yaml's order, each dependency at the
//     version the lock resolved (vendored ones as written), as helm's
//     internal/resolver/resolver.go Resolve writes it, whose digest is
//     helm's HashReq of Chart.yaml's dependencies and the locked ones,
//     computed on both as helm reads them back from the files
//     (pkg/chart/v2/loader, sigs.k8s.io/yaml), the check
//     pkg/downloader/manager.go Build makes before it downloads.
//
// Only the repositories and Chart.lock change; Chart.yaml keeps every
// other key and each dependency's version range as written. A chart of
// apiVersion v1 (dependencies in requirements.yaml) is copied unchanged.
//
// Two charts of one name and version (from two sources) would share a
// folder: taken holds the folders written, and the second gets its
// digest's first 12 hex digits appended.
func writeHandOff(dir string, p *lock.Package, data []byte, charts map[string]installedChart, taken map[string]bool) error {
	ch, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("reading the archive: %w", err)
	}
	files, err := untarChart(data)
	if err != nil {
		return err
	}
	base := HandOffDir + "/" + path.Base(ch.Name()) + "-" + path.Base(ch.Metadata.Version)
	if taken[base] {
		hex := strings.TrimPrefix(p.Digest, "sha256:")
		if len(hex) > 12 {
			hex = hex[:12]
		}
		base += "-" + hex
	}
	taken[base] = true
	if ch.Metadata.APIVersion == chart.APIVersionV2 && len(ch.Metadata.Dependencies) > 0 {
		if err := rewriteDependencies(p, ch, files, charts); errors.Is(err, errNoHandOff) {
			note := fmt.Sprintf("ferry wrote no copy of chart %s %s naming the mirror: %v\nUse charts/ instead, whose dependencies name their sources.\n", ch.Name(), ch.Metadata.Version, err)
			return install.WriteFile(dir, base+".txt", []byte(note), 0o644)
		} else if err != nil {
			return err
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := install.WriteFile(dir, base+"/"+n, files[n], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// rewriteDependencies points ch's Chart.yaml (in files) at the mirror and
// writes its Chart.lock there.
func rewriteDependencies(p *lock.Package, ch *chart.Chart, files map[string][]byte, charts map[string]installedChart) error {
	vendored := map[string]bool{}
	for _, sub := range ch.Dependencies() {
		vendored[sub.Name()] = true
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(files["Chart.yaml"], &doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return fmt.Errorf("Chart.yaml: not a mapping (%v): %w", err, errNoHandOff)
	}
	deps := mapValue(doc.Content[0], "dependencies")
	if deps == nil || deps.Kind != yaml.SequenceNode {
		return fmt.Errorf("Chart.yaml: dependencies is not a list: %w", errNoHandOff)
	}
	used := map[int]bool{}
	var locked []*chart.Dependency
	for i, n := range deps.Content {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("Chart.yaml: dependencies[%d] is not a mapping: %w", i, errNoHandOff)
		}
		name, version := scalar(mapValue(n, "name")), scalar(mapValue(n, "version"))
		if vendored[name] {
			setMapValue(n, "repository", "")
			if version != "" {
				locked = append(locked, &chart.Dependency{Name: name, Version: version})
			}
			continue
		}
		cv, err := resolvedChart(p, name, version, used, charts)
		if err != nil {
			return fmt.Errorf("dependency %q: %w", name, err)
		}
		if path.Base(cv.mirrorRepo) != name {
			return fmt.Errorf("dependency %q: mirrored to %s, whose last path element is not the chart's name, which helm appends to an OCI repository: %w", name, cv.mirrorRepo, errNoHandOff)
		}
		repo := "oci://" + path.Dir(cv.mirrorRepo)
		setMapValue(n, "repository", repo)
		locked = append(locked, &chart.Dependency{Name: name, Repository: repo, Version: cv.version})
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("Chart.yaml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("Chart.yaml: %w", err)
	}
	files["Chart.yaml"] = buf.Bytes()
	delete(files, "requirements.lock")
	lockData, err := chartLock(buf.Bytes(), locked)
	if err != nil {
		return err
	}
	files["Chart.lock"] = lockData
	return nil
}

// chartLock returns Chart.lock for the given Chart.yaml and locked
// dependencies, as helm's pkg/downloader/manager.go writeLock writes it
// (sigs.k8s.io/yaml of chart.Lock). Its digest is hashReq of both lists
// read back from their YAML as helm's loader reads them, so Build's check
// holds. `generated` is the zero time: the copy depends on the lock alone.
func chartLock(chartYAML []byte, locked []*chart.Dependency) ([]byte, error) {
	var md chart.Metadata
	if err := sigsyaml.Unmarshal(chartYAML, &md); err != nil {
		return nil, fmt.Errorf("Chart.yaml: %w", err)
	}
	lk := chart.Lock{Generated: time.Time{}.UTC(), Dependencies: locked}
	data, err := sigsyaml.Marshal(&lk)
	if err != nil {
		return nil, fmt.Errorf("Chart.lock: %w", err)
	}
	var back chart.Lock
	if err := sigsyaml.Unmarshal(data, &back); err != nil {
		return nil, fmt.Errorf("Chart.lock: %w", err)
	}
	if lk.Digest, err = hashReq(md.Dependencies, back.Dependencies); err != nil {
		return nil, fmt.Errorf("Chart.lock: %w", err)
	}
	if data, err = sigsyaml.Marshal(&lk); err != nil {
		return nil, fmt.Errorf("Chart.lock: %w", err)
	}
	return data, nil
}

// resolvedChart finds the chart the lock resolved p's dependency name
// (with version range version) to: among p's dependency edges of that
// name to a chart, the first not yet used whose version satisfies the
// range (an exact version, a range, or a pinned digest), then any.
func resolvedChart(p *lock.Package, name, version string, used map[int]bool, charts map[string]installedChart) (installedChart, error) {
	c, _ := semver.NewConstraint(version)
	fallback := -1
	for i, d := range p.Dependencies {
		if d.Name != name || d.Role != "" {
			continue
		}
		cv, ok := charts[d.Resolved]
		if !ok {
			continue
		}
		v, err := semver.NewVersion(cv.version)
		if c != nil && err == nil && !c.Check(v) {
			continue
		}
		if !used[i] {
			used[i] = true
			return cv, nil
		}
		if fallback < 0 {
			fallback = i
		}
	}
	if fallback >= 0 {
		return charts[p.Dependencies[fallback].Resolved], nil
	}
	return installedChart{}, fmt.Errorf("the lock resolves it to no installed chart of version %q: %w", version, errNoHandOff)
}

// untarChart reads a chart archive's regular files, their paths without
// the archive's top folder, and unpacks each vendored archive
// charts/X.tgz into charts/NAME/ (NAME its own top folder).
func untarChart(data []byte) (map[string][]byte, error) {
	files := map[string][]byte{}
	if err := untarInto(data, "", files, 0); err != nil {
		return nil, err
	}
	return files, nil
}

func untarInto(data []byte, prefix string, files map[string][]byte, depth int) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("chart archive: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("chart archive: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		_, rel, ok := strings.Cut(strings.TrimPrefix(h.Name, "./"), "/")
		if !ok || rel == "" {
			continue
		}
		if len(files) >= maxHandOffFiles {
			return fmt.Errorf("chart archive: more than %d files", maxHandOffFiles)
		}
		b, err := io.ReadAll(io.LimitReader(tr, MaxChartSize+1))
		if err != nil {
			return fmt.Errorf("chart archive: %s: %w", h.Name, err)
		}
		if int64(len(b)) > MaxChartSize {
			return fmt.Errorf("chart archive: %s is larger than %d bytes", h.Name, MaxChartSize)
		}
		dirName, file := path.Split(rel)
		if depth == 0 && dirName == "charts/" && strings.HasSuffix(file, ".tgz") {
			top, err := archiveTop(b)
			if err != nil {
				return fmt.Errorf("chart archive: %s: %w", rel, err)
			}
			if err := untarInto(b, prefix+"charts/"+top+"/", files, depth+1); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			continue
		}
		files[prefix+rel] = b
	}
}

// archiveTop returns the top folder of a chart archive's first entry.
func archiveTop(data []byte) (string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return "", err
	}
	h, err := tar.NewReader(zr).Next()
	if err != nil {
		return "", err
	}
	top, _, _ := strings.Cut(strings.TrimPrefix(h.Name, "./"), "/")
	if top == "" || top == "." || top == ".." {
		return "", fmt.Errorf("no top folder")
	}
	return top, nil
}

// mapValue returns the value of key in mapping m, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setMapValue sets key in mapping m to the string value, adding it when
// absent.
func setMapValue(m *yaml.Node, key, value string) {
	if v := mapValue(m, key); v != nil {
		*v = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
		return
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
}

// scalar returns a scalar node's value, "" for nil or another kind.
func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// handOffCharts maps "SOURCE@DIGEST" of every chart of plan to its name,
// version and mirror repository, read from the install's layout.
func handOffCharts(plan *install.Plan, read func(install.Step) (string, string, error)) (map[string]installedChart, error) {
	out := map[string]installedChart{}
	for _, st := range plan.Steps {
		if st.Kind != format.KindHelmChart {
			continue
		}
		name, version, err := read(st)
		if err != nil {
			return nil, fmt.Errorf("chart %s@%s: %w", st.Source, st.Digest, err)
		}
		repo, _, _ := strings.Cut(st.Mirror, "@")
		out[st.Source+"@"+st.Digest] = installedChart{name: name, version: version, mirrorRepo: repo}
	}
	return out, nil
}
