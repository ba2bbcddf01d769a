package helm

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/common"
	commonutil "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/common/util"
	chart "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2"
	chartutil "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/util"
	"github.com/ferryhq/ferry/internal/forked/helm/pkg/engine"
	releaseutil "github.com/ferryhq/ferry/internal/forked/helm/pkg/release/v1/util"
	"sigs.k8s.io/yaml"
)

// ImageUse is one container image a rendered chart deploys, and where.
type ImageUse struct {
	// Ref is the image reference as written in the manifest (spaces
	// trimmed, not normalised), e.g. "nginx:1.25" or "ghcr.io/a/b@sha256:…".
	Ref string
	// Chart is the chart's path as Helm names it when rendering: the chart
	// name, and for a vendored subchart its path below the parent
	// ("web/charts/redis"; an aliased subchart is named by its alias).
	Chart string
	// Template is the template file that produced the image
	// ("web/templates/deployment.yaml"), or AnnotationTemplate for an image
	// listed in Chart.yaml's artifacthub.io/images annotation.
	Template string
	// RunTime reports an image named in a container's flags
	// (`--prometheus-config-reloader=IMAGE`), which an operator deploys
	// at run time (objects.go): reported, not locked.
	RunTime bool
}

const (
	// ImagesAnnotation is the Chart.yaml annotation in which Artifact Hub
	// lists a chart's images: a YAML list of {name, image}
	// (https://artifacthub.io/docs/topics/annotations/helm/).
	ImagesAnnotation = "artifacthub.io/images"
	// AnnotationTemplate is the Template of an ImageUse found in the
	// ImagesAnnotation rather than in a rendered template.
	AnnotationTemplate = "Chart.yaml (" + ImagesAnnotation + ")"

	// releaseName and releaseNamespace are what `helm template` renders
	// with when given no name and no namespace (helm's pkg/cmd/template.go
	// sets ReleaseName "release-name"; the namespace defaults to "default").
	releaseName      = "release-name"
	releaseNamespace = "default"
	// notesFile is the rendered file Helm takes out of the manifests
	// (pkg/action/install.go notesFileSuffix, pkg/action/action.go
	// renderResources).
	notesFile = "NOTES.txt"
)

// Images renders ch client-side with Helm's engine, as `helm template`
// does, with vals (user-supplied values, see Values) coalesced over the
// chart's defaults, and returns every container image the output deploys:
// the containers, initContainers and ephemeralContainers of every
// pod-bearing kind (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet,
// ReplicationController, Job, and CronJob's spec.jobTemplate.spec.template),
// hooks included, plus the images listed in the artifacthub.io/images
// annotation of the chart and of each vendored subchart. The result is
// sorted by (Ref, Chart, Template) and has no duplicates. ch is not
// modified. Only the subcharts vendored in ch (ch.Dependencies()) are
// rendered: a dependency declared in Chart.yaml but not vendored is not,
// unless the caller vendors it first (ch.AddDependency, as `helm
// dependency build` does), which also gives it the parent's values.
//
// Rendering follows pkg/action/install.go (Install.RunWithContext, client
// only as for `helm template`): chartutil.ProcessDependencies (conditions,
// tags, aliases, import-values of the subcharts vendored in charts/, that
// is ch.Dependencies()), common/util.ToRenderValuesWithSchemaValidation
// with release "release-name", namespace "default", IsInstall and
// common.DefaultCapabilities, then engine.Engine.Render, then NOTES.txt
// and partials dropped and each file split with releaseutil.SplitManifests
// (pkg/action/action.go renderResources, pkg/release/v1/util
// manifest_sorter.go). The chart's kubeVersion constraint is not checked:
// it says where the chart may be installed, not which images it needs.
//
// A subchart disabled by its condition or tags is rendered too, because a
// value given at install may enable it and its images must then be in the
// mirror. Images does this in a second render of the same chart with every
// condition and tag removed (so every vendored subchart is enabled, as if
// its condition were true) and with the templates of the charts that the
// first render already covered reduced to their partials; the disabled
// subcharts thus render with exactly the values Helm would give them once
// enabled (the parent's values for them, globals, their defaults), and the
// parent's own templates, which may test `.Values.redis.enabled`, do not
// run twice. The second render skips values.schema.json validation (Helm
// validates a subchart's schema only when it is enabled). A template of a
// disabled subchart that fails with the given values is an error, as in the
// first render: ferry cannot know its images otherwise; values that make it
// render (e.g. a `required` password) can be given in ferry.yaml.
//
// A template that fails to render is an error naming the chart and Helm's
// message, which names the template and line. A document that does not
// parse as YAML is an error in a .yaml, .yml or .json template (Helm's
// SortManifests fails on it too) and is ignored in other files; a document
// of any other kind, or with no kind, yields nothing.
func Images(ch *chart.Chart, vals map[string]any) ([]ImageUse, error) {
	return ImagesWith(ch, vals, nil)
}

// ImagesWith is Images that also looks for images at the user-declared
// paths of custom resources (ferry.yaml `helm: {imagePaths}`).
func ImagesWith(ch *chart.Chart, vals map[string]any, paths []ImagePath) ([]ImageUse, error) {
	if err := checkChartMetadata(ch); err != nil {
		return nil, err
	}
	if vals == nil {
		vals = map[string]any{}
	}
	name := ch.Name()
	var uses []ImageUse

	// First render: exactly what `helm template` renders with these values.
	first := copyChartTree(ch)
	if err := chartutil.ProcessDependencies(first, vals); err != nil {
		return nil, fmt.Errorf("chart %s: processing dependencies: %w", name, err)
	}
	got, err := renderImages(first, vals, false, paths)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", name, err)
	}
	uses = append(uses, got...)

	// Second render: the subcharts the first one left out by condition or
	// tags, forced on.
	rendered := map[string]bool{}
	for _, c := range chartTree(first) {
		rendered[c.ChartFullPath()] = true
	}
	forced := copyChartTree(ch)
	for _, c := range chartTree(forced) {
		for _, d := range c.Metadata.Dependencies {
			if d != nil {
				d.Condition, d.Tags = "", nil
			}
		}
	}
	if err := chartutil.ProcessDependencies(forced, vals); err != nil {
		return nil, fmt.Errorf("chart %s: processing dependencies with all subcharts enabled: %w", name, err)
	}
	var disabled []string
	for _, c := range chartTree(forced) {
		if rendered[c.ChartFullPath()] {
			c.Templates = partialTemplates(c.Templates)
		} else {
			disabled = append(disabled, c.ChartFullPath())
		}
	}
	if len(disabled) > 0 {
		got, err := renderImages(forced, vals, true, paths)
		if err != nil {
			return nil, fmt.Errorf("chart %s: rendering subcharts disabled by condition or tags (%s) to find their images: %w",
				name, strings.Join(disabled, ", "), err)
		}
		uses = append(uses, got...)
	}

	// The artifacthub.io/images annotations of the chart and of every
	// vendored subchart, enabled or not.
	for _, c := range chartTree(copyChartTree(ch)) {
		got, err := annotationImages(c)
		if err != nil {
			return nil, err
		}
		uses = append(uses, got...)
	}

	slices.SortFunc(uses, func(a, b ImageUse) int {
		return cmp.Or(cmp.Compare(a.Ref, b.Ref), cmp.Compare(a.Chart, b.Chart), cmp.Compare(a.Template, b.Template), boolCompare(a.RunTime, b.RunTime))
	})
	return slices.Compact(uses), nil
}

// renderImages renders c (dependencies already processed) with the user
// values vals and returns the images of its pod-bearing documents.
func renderImages(c *chart.Chart, vals map[string]any, skipSchema bool, paths []ImagePath) ([]ImageUse, error) {
	// pkg/action/install.go: client-only capabilities and release options.
	caps := common.DefaultCapabilities().Copy()
	opts := common.ReleaseOptions{
		Name:      releaseName,
		Namespace: releaseNamespace,
		Revision:  1,
		IsInstall: true,
	}
	top, err := commonutil.ToRenderValuesWithSchemaValidation(c, vals, opts, caps, skipSchema)
	if err != nil {
		return nil, err
	}
	// pkg/action/action.go renderResources: the zero Engine is the one
	// `helm template` uses (no cluster, not strict, not lint mode).
	files, err := engine.Engine{}.Render(c, top)
	if err != nil {
		return nil, err
	}
	charts := chartTree(c)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var uses []ImageUse
	for _, file := range names {
		content := files[file]
		// pkg/action/action.go drops NOTES.txt; SortManifests skips
		// partials and empty files.
		if strings.HasSuffix(file, notesFile) || strings.HasPrefix(path.Base(file), "_") || strings.TrimSpace(content) == "" {
			continue
		}
		docs := releaseutil.SplitManifests(content)
		keys := make([]string, 0, len(docs))
		for k := range docs {
			keys = append(keys, k)
		}
		sort.Sort(releaseutil.BySplitManifestsOrder(keys))
		owner := chartOf(file, charts)
		for _, k := range keys {
			refs, runtime, err := objectImages(docs[k], paths)
			if err != nil {
				switch path.Ext(file) {
				case ".yaml", ".yml", ".json":
					// The same message as Helm's SortManifests.
					return nil, fmt.Errorf("YAML parse error on %s: %w", file, err)
				}
				continue
			}
			for _, r := range refs {
				uses = append(uses, ImageUse{Ref: r, Chart: owner, Template: file})
			}
			for _, r := range runtime {
				uses = append(uses, ImageUse{Ref: r, Chart: owner, Template: file, RunTime: true})
			}
		}
	}
	return uses, nil
}

// annotationImages returns the images of c's artifacthub.io/images
// annotation.
func annotationImages(c *chart.Chart) ([]ImageUse, error) {
	raw := c.Metadata.Annotations[ImagesAnnotation]
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var list []struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	}
	if err := yaml.Unmarshal([]byte(raw), &list); err != nil {
		return nil, fmt.Errorf("chart %s: Chart.yaml annotation %s: %w", c.ChartFullPath(), ImagesAnnotation, err)
	}
	var uses []ImageUse
	for _, e := range list {
		if r := strings.TrimSpace(e.Image); r != "" {
			uses = append(uses, ImageUse{Ref: r, Chart: c.ChartFullPath(), Template: AnnotationTemplate})
		}
	}
	return uses, nil
}

// chartOf returns the path of the chart among charts that owns the
// rendered file: the engine names a file by its chart's ChartFullPath
// followed by the template's name (pkg/engine/engine.go recAllTpls), so it
// is the longest chart path that prefixes it.
func chartOf(file string, charts []*chart.Chart) string {
	best := ""
	for _, c := range charts {
		p := c.ChartFullPath()
		if len(p) > len(best) && strings.HasPrefix(file, p+"/") {
			best = p
		}
	}
	return best
}

// partialTemplates keeps the templates the engine parses but never renders on
// their own (pkg/engine/engine.go render): their definitions stay
// available to the templates that include them.
func partialTemplates(tpls []*common.File) []*common.File {
	var out []*common.File
	for _, t := range tpls {
		if t != nil && strings.HasPrefix(path.Base(t.Name), "_") {
			out = append(out, t)
		}
	}
	return out
}

// chartTree returns c and all its dependencies, depth first.
func chartTree(c *chart.Chart) []*chart.Chart {
	out := []*chart.Chart{c}
	for _, d := range c.Dependencies() {
		if d != nil {
			out = append(out, chartTree(d)...)
		}
	}
	return out
}

// checkChartMetadata reports a chart or vendored subchart with no Chart.yaml
// metadata, which Helm's loader never returns but a hand-built chart may.
func checkChartMetadata(ch *chart.Chart) error {
	if ch == nil {
		return errors.New("no chart")
	}
	if ch.Metadata == nil {
		return errors.New("chart has no metadata (Chart.yaml)")
	}
	for _, d := range ch.Dependencies() {
		if d == nil {
			continue
		}
		if err := checkChartMetadata(d); err != nil {
			return fmt.Errorf("chart %s: subchart: %w", ch.Name(), err)
		}
	}
	return nil
}

// copyChartTree copies ch and its vendored subcharts deeply enough for
// chartutil.ProcessDependencies (which rewrites the dependency lists,
// Metadata.Dependencies entries and Values) and for Images' template
// filtering to leave ch untouched. The copy is a root chart even when ch
// is a subchart. Files, templates and values are shared: nothing here
// modifies them.
func copyChartTree(ch *chart.Chart) *chart.Chart {
	md := *ch.Metadata
	md.Dependencies = make([]*chart.Dependency, len(ch.Metadata.Dependencies))
	for i, d := range ch.Metadata.Dependencies {
		if d != nil {
			dc := *d
			md.Dependencies[i] = &dc
		}
	}
	if ch.Metadata.Dependencies == nil {
		md.Dependencies = nil
	}
	out := &chart.Chart{
		Raw:           ch.Raw,
		Metadata:      &md,
		Lock:          ch.Lock,
		Templates:     ch.Templates,
		Values:        ch.Values,
		Schema:        ch.Schema,
		SchemaModTime: ch.SchemaModTime,
		Files:         ch.Files,
		ModTime:       ch.ModTime,
	}
	var deps []*chart.Chart
	for _, d := range ch.Dependencies() {
		if d != nil {
			deps = append(deps, copyChartTree(d))
		}
	}
	out.SetDependencies(deps...)
	return out
}

// boolCompare orders false before true.
func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
