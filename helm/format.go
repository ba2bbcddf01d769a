package helm

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/resolve"
)

// Format is the Helm chart format: OCI charts in registries, charts in
// classic HTTP repositories (presented to the pipeline as the OCI charts
// `helm push` writes, see RepoCache), local charts as ROOT, `charts:` in
// ferry.yaml, Helm's rules for dependencies and versions, the images the
// charts deploy, and the chart files `ferry install` writes.
type Format struct {
	// Settings are the format's ferry.yaml keys.
	Settings Settings
	// values are the values each chart (by name) is rendered with: the
	// `charts:` entries' values files and set values.
	values map[string]map[string]any
	// repos reads classic repositories; one per process, so that one run
	// reads each index.yaml once.
	repos *RepoCache
	// renders keeps what Expand rendered, by chart tree and settings
	// (renderCache): Resolve expands a closure again after the images it
	// added resolve, and the same trees render to the same images.
	renders *renderCache
}

// New returns the Helm format.
func New() Format { return Format{repos: NewRepoCache(), renders: &renderCache{}} }

var (
	_ format.Reader              = Format{}
	_ format.Origin              = Format{}
	_ resolve.Rules              = Format{}
	_ mirrorset.SectionOwner     = Format{}
	_ mirrorset.RootOwner        = Format{}
	_ mirrorset.InputReader      = Format{}
	_ mirrorset.RootSectionOwner = Format{}
)

// Name returns "helm".
func (Format) Name() string { return "helm" }

// Kinds lists the package kinds the format reads.
func (Format) Kinds() []string { return []string{format.KindHelmChart} }

// Sections lists the ferry.yaml keys the format owns.
func (Format) Sections() []string { return []string{KeyCharts, KeyHelm, KeyExclude} }

// RootSections lists the key that names roots: `charts`. A ferry.yaml
// read for the settings of a ROOT given on the command line does not add
// its charts as roots; ReadInput takes a local chart's values from its
// `charts: [{path, values, set}]` entry.
func (Format) RootSections() []string { return []string{KeyCharts} }

// CheckSections validates the format's ferry.yaml keys.
func (Format) CheckSections(m *mirrorset.MirrorSet) error {
	_, err := settingsOf(m)
	return err
}

// Configure returns the format with ferry.yaml's settings: the aliases,
// the excluded images, and each chart root's values.
func (f Format) Configure(m *mirrorset.MirrorSet) (format.Format, error) {
	s, err := settingsOf(m)
	if err != nil {
		return nil, err
	}
	f.Settings = s
	f.values = map[string]map[string]any{}
	for i, c := range s.Charts {
		if len(c.Values) == 0 && len(c.Set) == 0 {
			continue
		}
		vals, err := readValues(c)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", KeyCharts, i, err)
		}
		key := chartName(c)
		if c.Path != "" {
			key = localValuesKey(c.Path)
		}
		f.values[key] = vals
	}
	if f.repos == nil {
		f.repos = NewRepoCache()
	}
	if f.renders == nil {
		f.renders = &renderCache{}
	}
	return f, nil
}

// chartName is the name of the chart a `charts:` entry names: Name, or
// the last element of Ref's repository.
func chartName(c ChartRoot) string {
	if c.Name != "" {
		return c.Name
	}
	r, err := ociref.ParseNormalized(c.Ref, "")
	if err != nil {
		return c.Ref
	}
	return r.Repository[strings.LastIndex(r.Repository, "/")+1:]
}

// SectionRoots returns the chart roots of ferry.yaml's `charts:`. A
// version that is a single version (not a range) of an OCI chart is its
// tag, as Helm pulls it without listing tags
// (helm's internal/resolver/resolver.go: "Use an explicit version,
// otherwise search for tags").
func (f Format) SectionRoots(m *mirrorset.MirrorSet) ([]mirrorset.Package, error) {
	s, err := settingsOf(m)
	if err != nil {
		return nil, err
	}
	f.Settings = s
	out := make([]mirrorset.Package, 0, len(s.Charts))
	for i, c := range s.Charts {
		if c.Path != "" {
			ch, err := loadLocal(c.Path)
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w: %w", KeyCharts, i, errNotChart, err)
			}
			if err := f.localRoots(ch, localDir(c.Path), nil, &out); err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", KeyCharts, i, err)
			}
			continue
		}
		ref, err := s.chartRef(c)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", KeyCharts, i, err)
		}
		ref, constraint := pinVersion(ref, c.Version)
		out = append(out, mirrorset.Package{Ref: ref, Version: constraint, Format: "helm"})
	}
	return out, nil
}

// Qualify completes a reference a chart's dependency names: the format
// writes them fully qualified (REPO/NAME), and the images a chart deploys
// are normalised the Docker way, as the kubelet's container runtime reads
// them.
func (Format) Qualify(ref string, _ ociref.Reference) (ociref.Reference, error) {
	return ociref.ParseNormalized(ref, "")
}

// Policy is Helm's: each chart vendors its own copy of a dependency, so
// every dependency edge is resolved on its own (two charts may lock one
// chart at two versions), to the highest version satisfying the range
// (helm's internal/resolver/resolver.go takes the first match of the
// versions sorted newest first).
func (Format) Policy() resolve.Policy {
	return resolve.Policy{Name: "highest (Helm)", Unshared: true, Pick: pickVersion}
}

// pickVersion chooses among an OCI chart's tags as Helm does: only tags
// that are strict semantic versions once "_" is read as "+" count (helm's
// pkg/registry/client.go Tags: semver.StrictNewVersion, so "v1.2.3" is
// not a chart version), and the highest satisfying every range wins
// (Masterminds constraints, prereleases only for a range that names one).
func pickVersion(reqs []resolve.Request, tags []string) (string, error) {
	var cons []*semver.Constraints
	exact := ""
	for _, r := range reqs {
		switch {
		case r.Constraint != "":
			c, err := semver.NewConstraint(r.Constraint)
			if err != nil {
				return "", fmt.Errorf("%s: invalid version/constraint format %q: %w", r.From, r.Constraint, err)
			}
			cons = append(cons, c)
		case r.Tag != "":
			exact = r.Tag
		}
	}
	var best *semver.Version
	bestTag := ""
	for _, t := range tags {
		v, err := semver.StrictNewVersion(strings.ReplaceAll(t, "_", "+"))
		if err != nil || (exact != "" && t != exact) {
			continue
		}
		ok := true
		for _, c := range cons {
			if !c.Check(v) {
				ok = false
				break
			}
		}
		if ok && (best == nil || v.GreaterThan(best)) {
			best, bestTag = v, t
		}
	}
	if best == nil {
		var want []string
		for _, r := range reqs {
			if r.Constraint != "" {
				want = append(want, fmt.Sprintf("%s requires %q", r.From, r.Constraint))
			} else if r.Tag != "" {
				want = append(want, fmt.Sprintf("%s requires %s", r.From, r.Tag))
			}
		}
		return "", fmt.Errorf("no chart version satisfies %s; versions: %s", strings.Join(want, " and "), versionList(tags))
	}
	return bestTag, nil
}

// versionList lists the chart versions among tags, newest first, at
// most ten.
func versionList(tags []string) string {
	var vs []*semver.Version
	for _, t := range tags {
		if v, err := semver.StrictNewVersion(strings.ReplaceAll(t, "_", "+")); err == nil {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return "none"
	}
	sort.Sort(sort.Reverse(semver.Collection(vs)))
	var out []string
	for i, v := range vs {
		if i == 10 {
			out = append(out, fmt.Sprintf("and %d more", len(vs)-10))
			break
		}
		out = append(out, v.Original())
	}
	return strings.Join(out, ", ")
}

// OwnsRef reports whether ref, a `packages:` entry or a command-line
// ROOT, is a chart as Helm writes one: "oci://HOST/PATH" (helm's
// pkg/registry IsOCI), or REPOURL/NAME in a classic repository; its
// version is then chosen by Helm's tag rule (Policy), as for `charts:`.
func (f Format) OwnsRef(ref string) bool {
	return strings.HasPrefix(ref, ociref.OCIScheme) || f.Owns(ref)
}

// Owns reports whether source is a chart in a classic repository:
// REPOURL/NAME with an http:// or https:// URL.
func (Format) Owns(source string) bool {
	_, _, ok := SplitSource(source)
	return ok
}

// Open returns the chart source in its classic repository as a read-only
// repository of the OCI charts `helm push` would write for it.
func (f Format) Open(source string, hc *http.Client) (format.Repository, error) {
	repos := f.repos
	if repos == nil {
		repos = NewRepoCache()
	}
	return repos.Open(source, hc)
}

// MirrorPath is where a chart from a classic repository lands below the
// mirror's HOST/PREFIX: charts/NAME (PRODUCT.md "Helm chart").
func (Format) MirrorPath(source string) string { return MirrorPath(source) }
