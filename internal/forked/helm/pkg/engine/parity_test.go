package engine_test

// ferry: this file is not Helm's. It holds the fork (internal/forked/helm)
// to the real helm.sh/helm/v4: every chart ferry's tests vendor, and
// charts written here for the paths a chart can fail on, loaded and
// rendered the way ferry renders (helm/render.go, as `helm template`
// does: pkg/action/install.go client-only) once with the fork and once
// with Helm, must give the same chart, the same values, the same
// rendered files and the same errors.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	helmcommon "helm.sh/helm/v4/pkg/chart/common"
	helmcommonutil "helm.sh/helm/v4/pkg/chart/common/util"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	helmloader "helm.sh/helm/v4/pkg/chart/v2/loader"
	helmchartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	helmengine "helm.sh/helm/v4/pkg/engine"
	helmreleaseutil "helm.sh/helm/v4/pkg/release/v1/util"

	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/common"
	commonutil "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/common/util"
	chart "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2"
	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/loader"
	chartutil "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/util"
	"github.com/ferryhq/ferry/internal/forked/helm/pkg/engine"
	releaseutil "github.com/ferryhq/ferry/internal/forked/helm/pkg/release/v1/util"
	"github.com/ferryhq/ferry/internal/realworldhelm"
)

// rendered is what one side (the fork or Helm) made of a chart: every
// step's result or error, as text, so the two compare with ==.
type rendered struct {
	// Chart describes the loaded chart tree (LoadDir), or Err of loading.
	Chart string
	// Archive describes the chart loaded from its archive (LoadArchive).
	Archive string
	// Deps describes the tree after ProcessDependencies.
	Deps string
	// Values is the JSON of ToRenderValuesWithSchemaValidation's result.
	Values string
	// Files are the engine's rendered files.
	Files map[string]string
	// Manifests are each rendered file split by SplitManifests, in
	// BySplitManifestsOrder.
	Manifests map[string][]string
	// Err is the first step's error, and the step.
	Err string
}

// opts are `helm template`'s release options (pkg/cmd/template.go,
// pkg/action/install.go): ferry's helm/render.go uses the same.
func forkOpts() common.ReleaseOptions {
	return common.ReleaseOptions{Name: "release-name", Namespace: "default", Revision: 1, IsInstall: true}
}

func helmOpts() helmcommon.ReleaseOptions {
	return helmcommon.ReleaseOptions{Name: "release-name", Namespace: "default", Revision: 1, IsInstall: true}
}

// renderFork loads the chart in dir (and archive, when not nil) with
// the fork and renders it with vals.
func renderFork(dir string, archive []byte, vals map[string]any) rendered {
	var r rendered
	ch, err := loader.LoadDir(dir)
	if err != nil {
		r.Err = "LoadDir: " + err.Error()
		return r
	}
	r.Chart = describeFork(ch)
	if archive != nil {
		a, err := loader.LoadArchive(bytes.NewReader(archive))
		if err != nil {
			r.Archive = "error: " + err.Error()
		} else {
			r.Archive = describeFork(a)
		}
	}
	if err := chartutil.ProcessDependencies(ch, copyValues(vals)); err != nil {
		r.Err = "ProcessDependencies: " + err.Error()
		return r
	}
	r.Deps = describeFork(ch)
	top, err := commonutil.ToRenderValuesWithSchemaValidation(ch, copyValues(vals), forkOpts(), common.DefaultCapabilities().Copy(), false)
	if err != nil {
		r.Err = "ToRenderValuesWithSchemaValidation: " + err.Error()
		return r
	}
	r.Values = asJSON(top)
	files, err := engine.Engine{}.Render(ch, top)
	if err != nil {
		r.Err = "Render: " + err.Error()
		return r
	}
	r.Files = files
	r.Manifests = map[string][]string{}
	for name, content := range files {
		docs := releaseutil.SplitManifests(content)
		keys := make([]string, 0, len(docs))
		for k := range docs {
			keys = append(keys, k)
		}
		sort.Sort(releaseutil.BySplitManifestsOrder(keys))
		for _, k := range keys {
			r.Manifests[name] = append(r.Manifests[name], docs[k])
		}
	}
	return r
}

// renderHelm is renderFork with the real Helm.
func renderHelm(dir string, archive []byte, vals map[string]any) rendered {
	var r rendered
	ch, err := helmloader.LoadDir(dir)
	if err != nil {
		r.Err = "LoadDir: " + err.Error()
		return r
	}
	r.Chart = describeHelm(ch)
	if archive != nil {
		a, err := helmloader.LoadArchive(bytes.NewReader(archive))
		if err != nil {
			r.Archive = "error: " + err.Error()
		} else {
			r.Archive = describeHelm(a)
		}
	}
	if err := helmchartutil.ProcessDependencies(ch, copyValues(vals)); err != nil {
		r.Err = "ProcessDependencies: " + err.Error()
		return r
	}
	r.Deps = describeHelm(ch)
	top, err := helmcommonutil.ToRenderValuesWithSchemaValidation(ch, copyValues(vals), helmOpts(), helmcommon.DefaultCapabilities.Copy(), false)
	if err != nil {
		r.Err = "ToRenderValuesWithSchemaValidation: " + err.Error()
		return r
	}
	r.Values = asJSON(top)
	files, err := helmengine.Engine{}.Render(ch, top)
	if err != nil {
		r.Err = "Render: " + err.Error()
		return r
	}
	r.Files = files
	r.Manifests = map[string][]string{}
	for name, content := range files {
		docs := helmreleaseutil.SplitManifests(content)
		keys := make([]string, 0, len(docs))
		for k := range docs {
			keys = append(keys, k)
		}
		sort.Sort(helmreleaseutil.BySplitManifestsOrder(keys))
		for _, k := range keys {
			r.Manifests[name] = append(r.Manifests[name], docs[k])
		}
	}
	return r
}

// describeFork is the JSON of a chart and its dependencies, Raw included
// (the Chart's JSON leaves it out), with each chart's path and parent.
func describeFork(c *chart.Chart) string {
	var b strings.Builder
	var walk func(c *chart.Chart)
	walk = func(c *chart.Chart) {
		fmt.Fprintf(&b, "%s (root %v, parent %q)\n%s\n", c.ChartFullPath(), c.IsRoot(), parentPath(c.Parent() != nil, func() string { return c.Parent().ChartFullPath() }), asJSON(c))
		for _, f := range c.Raw {
			fmt.Fprintf(&b, "raw %s %q\n", f.Name, f.Data)
		}
		// pkg/chart/v2/loader/load.go LoadFiles adds the subcharts of
		// charts/ in the order of a map's iteration: sort them.
		deps := c.Dependencies()
		sort.Slice(deps, func(i, j int) bool { return deps[i].ChartFullPath() < deps[j].ChartFullPath() })
		for _, d := range deps {
			walk(d)
		}
	}
	walk(c)
	return b.String()
}

// describeHelm is describeFork for Helm's chart.
func describeHelm(c *helmchart.Chart) string {
	var b strings.Builder
	var walk func(c *helmchart.Chart)
	walk = func(c *helmchart.Chart) {
		fmt.Fprintf(&b, "%s (root %v, parent %q)\n%s\n", c.ChartFullPath(), c.IsRoot(), parentPath(c.Parent() != nil, func() string { return c.Parent().ChartFullPath() }), asJSON(c))
		for _, f := range c.Raw {
			fmt.Fprintf(&b, "raw %s %q\n", f.Name, f.Data)
		}
		// pkg/chart/v2/loader/load.go LoadFiles adds the subcharts of
		// charts/ in the order of a map's iteration: sort them.
		deps := c.Dependencies()
		sort.Slice(deps, func(i, j int) bool { return deps[i].ChartFullPath() < deps[j].ChartFullPath() })
		for _, d := range deps {
			walk(d)
		}
	}
	walk(c)
	return b.String()
}

func parentPath(has bool, path func() string) string {
	if !has {
		return ""
	}
	return path()
}

func asJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return "json: " + err.Error()
	}
	return string(data)
}

// copyValues deep-copies vals (ProcessDependencies and the coalescing
// may write into maps), so each side gets its own.
func copyValues(vals map[string]any) map[string]any {
	if vals == nil {
		return nil
	}
	var out map[string]any
	data, err := json.Marshal(vals)
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

// compare fails t where the two sides differ. again is Helm's second
// render of the same chart: a line where Helm's two renders differ comes
// from a random function (randAlphaNum passwords, genCA certificates,
// uuidv4...) and is not compared.
func compare(t *testing.T, fork, helm, again rendered) {
	t.Helper()
	maskRandom(&fork, &helm, again)
	if fork.Err != helm.Err {
		t.Errorf("error:\n  fork: %s\n  helm: %s", fork.Err, helm.Err)
	}
	for _, f := range []struct{ name, fork, helm string }{
		{"loaded chart", fork.Chart, helm.Chart},
		{"chart loaded from its archive", fork.Archive, helm.Archive},
		{"chart after ProcessDependencies", fork.Deps, helm.Deps},
		{"render values", fork.Values, helm.Values},
	} {
		if f.fork != f.helm {
			t.Errorf("%s differs:\n%s", f.name, firstDiff(f.fork, f.helm))
		}
	}
	if !reflect.DeepEqual(fork.Files, helm.Files) {
		for name, got := range fork.Files {
			if want, ok := helm.Files[name]; !ok || got != want {
				t.Errorf("rendered %s:\n  fork: %.2000q\n  helm: %.2000q", name, got, want)
			}
		}
		for name := range helm.Files {
			if _, ok := fork.Files[name]; !ok {
				t.Errorf("helm renders %s, the fork does not", name)
			}
		}
	}
	if !reflect.DeepEqual(fork.Manifests, helm.Manifests) {
		t.Errorf("split manifests differ")
	}
}

// maskRandom replaces, in fork's and helm's rendered files and manifests,
// each line where helm and again differ with "<random>", where the two
// Helm renders have the same number of lines.
func maskRandom(fork, helm *rendered, again rendered) {
	mask := func(f, h, a string) (string, string) {
		if h == a {
			return f, h
		}
		fl, hl, al := strings.Split(f, "\n"), strings.Split(h, "\n"), strings.Split(a, "\n")
		if len(hl) != len(al) || len(fl) != len(hl) {
			return f, h
		}
		for i := range hl {
			if hl[i] != al[i] {
				fl[i], hl[i] = "<random>", "<random>"
			}
		}
		return strings.Join(fl, "\n"), strings.Join(hl, "\n")
	}
	if fork.Files == nil || fork.Manifests == nil {
		return // the fork failed: compare shows it
	}
	for name, h := range helm.Files {
		fork.Files[name], helm.Files[name] = mask(fork.Files[name], h, again.Files[name])
	}
	for name, hs := range helm.Manifests {
		fs, as := fork.Manifests[name], again.Manifests[name]
		if len(fs) != len(hs) || len(as) != len(hs) {
			continue
		}
		for i := range hs {
			fs[i], hs[i] = mask(fs[i], hs[i], as[i])
		}
	}
}

// schemaBreaking returns, for a chart whose root values.schema.json types
// a top-level property, values that give it the wrong type (an object
// where the schema asks for a scalar, a string where it asks for anything
// else), so that Helm's schema validation fails; nil if there is none.
func schemaBreaking(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "values.schema.json"))
	if err != nil {
		return nil
	}
	var schema struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatalf("%s: values.schema.json: %v", dir, err)
	}
	names := make([]string, 0, len(schema.Properties))
	for n := range schema.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		switch schema.Properties[n].Type {
		case "string":
			return map[string]any{n: map[string]any{"ferry": "parity"}}
		case "boolean", "integer", "number", "object", "array":
			return map[string]any{n: "ferry-parity"}
		}
	}
	return nil
}

// TestRenderMatchesHelm: every real chart vendored in
// testdata/realworld/helm, laid out as `helm dependency build` leaves it,
// with its default values and with values its values.schema.json
// refuses, loads (from the folder and from the packaged archive) and
// renders identically with the fork and with Helm.
func TestRenderMatchesHelm(t *testing.T) {
	archives, err := realworldhelm.Load("../../../../../testdata/realworld/helm")
	if err != nil {
		t.Fatal(err)
	}
	if len(archives) < 10 {
		t.Fatalf("%d real charts vendored, want at least 10", len(archives))
	}
	schemaFailures := 0
	for _, a := range archives {
		dir, err := realworldhelm.Layout(archives, a, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name string
			vals map[string]any
		}{{"defaults", nil}}
		if bad := schemaBreaking(t, dir); bad != nil {
			cases = append(cases, struct {
				name string
				vals map[string]any
			}{"schema-breaking", bad})
		}
		for _, c := range cases {
			t.Run(a.Name+"-"+a.Version+"/"+c.name, func(t *testing.T) {
				fork, helm := renderFork(dir, a.Data, c.vals), renderHelm(dir, a.Data, c.vals)
				compare(t, fork, helm, renderHelm(dir, a.Data, c.vals))
				if c.name == "defaults" && helm.Err != "" {
					t.Errorf("helm fails on the default values: %s", helm.Err)
				}
				if c.name == "schema-breaking" {
					if !strings.Contains(helm.Err, "values don't meet the specifications of the schema") {
						t.Errorf("values %v: helm does not refuse them by schema: %q", c.vals, helm.Err)
					}
					schemaFailures++
				}
			})
		}
	}
	if schemaFailures == 0 {
		t.Error("no vendored chart has a values.schema.json to break")
	}
}

// TestRenderTestdataMatchesHelm: helm/testdata's charts, and charts
// written here for what a template can do without a cluster (lookup,
// capabilities, DNS, files, tpl) and for each way rendering fails
// (required, fail, values.schema.json of the chart or a subchart, a
// template that does not parse, a bad Chart.yaml), give the fork's and
// Helm's same output or the same error.
func TestRenderTestdataMatchesHelm(t *testing.T) {
	const schema = `{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
  "required": ["replicas"],
  "properties": {"replicas": {"type": "integer", "minimum": 1}, "name": {"type": "string", "pattern": "^[a-z]+$"}}}`
	charts := map[string]map[string]string{
		"features": {
			"Chart.yaml":             "apiVersion: v2\nname: features\nversion: 1.2.3\nappVersion: \"4.5\"\nkubeVersion: \">=1.0.0-0\"\n",
			"values.yaml":            "image: nginx:1.25\nextra:\n  key: value\nlist: [a, b]\n",
			"files/conf.txt":         "hello from a file\n",
			"templates/_helpers.tpl": `{{- define "features.name" -}}{{ .Chart.Name }}-{{ .Release.Name }}{{- end -}}`,
			"templates/all.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "features.name" . }}
  namespace: {{ .Release.Namespace }}
data:
  kube: {{ .Capabilities.KubeVersion | quote }}
  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}
  gitVersion: {{ .Capabilities.KubeVersion.GitVersion | quote }}
  major: {{ .Capabilities.KubeVersion.Major | quote }}
  minor: {{ .Capabilities.KubeVersion.Minor | quote }}
  apis: {{ .Capabilities.APIVersions | toJson | quote }}
  crd: {{ .Capabilities.APIVersions.Has "apiextensions.k8s.io/v1" | quote }}
  crdBeta: {{ .Capabilities.APIVersions.Has "apiextensions.k8s.io/v1beta1" | quote }}
  helm: {{ .Capabilities.HelmVersion | toJson | quote }}
  semver: {{ semverCompare ">=1.19-0" .Capabilities.KubeVersion.Version | quote }}
  lookup: {{ lookup "v1" "Secret" "default" "x" | toJson | quote }}
  lookupList: {{ lookup "v1" "Pod" "" "" | toJson | quote }}
  noLookup: {{ if not (lookup "v1" "Secret" "default" "x") }}"absent"{{ end }}
  dns: {{ getHostByName "localhost" | quote }}
  file: {{ .Files.Get "files/conf.txt" | quote }}
  glob: {{ range $p, $_ := .Files.Glob "files/*" }}{{ $p }}{{ end }}
  tpl: {{ tpl "{{ .Values.image }}" . | quote }}
  toml: {{ toToml .Values.extra | quote }}
  yaml: {{ toYaml .Values.list | quote }}
  fromYaml: {{ fromYaml "a: 1" | toJson | quote }}
  template: {{ .Template.Name | quote }}
  chart: {{ .Chart.Version }}-{{ .Chart.AppVersion }}
  revision: {{ .Release.Revision | quote }}
  install: {{ .Release.IsInstall | quote }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  template:
    spec:
      containers:
        - name: c
          image: {{ .Values.image }}
`,
			"templates/NOTES.txt": "Installed {{ .Release.Name }}.\n",
		},
		"required": {
			"Chart.yaml":        "apiVersion: v2\nname: required\nversion: 0.1.0\n",
			"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ required \"a name is required: set name\" .Values.name }}\n",
		},
		"fail": {
			"Chart.yaml":        "apiVersion: v2\nname: fail\nversion: 0.1.0\n",
			"templates/cm.yaml": "{{- if not .Values.ok }}{{ fail \"set ok to true\" }}{{ end }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n",
		},
		"schema": {
			"Chart.yaml":                    "apiVersion: v2\nname: schema\nversion: 0.1.0\n",
			"values.yaml":                   "replicas: 1\nname: web\n",
			"values.schema.json":            schema,
			"templates/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n",
			"charts/sub/Chart.yaml":         "apiVersion: v2\nname: sub\nversion: 0.2.0\n",
			"charts/sub/values.yaml":        "port: 80\n",
			"charts/sub/values.schema.json": `{"type": "object", "properties": {"port": {"type": "integer", "maximum": 65535}}}`,
			"charts/sub/templates/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: sub\nspec:\n  ports: [{port: {{ .Values.port }}}]\n",
		},
		"badtemplate": {
			"Chart.yaml":        "apiVersion: v2\nname: badtemplate\nversion: 0.1.0\n",
			"templates/cm.yaml": "name: {{ .Values.name \n",
		},
		"badchartyaml": {
			"Chart.yaml": "apiVersion: v2\nname: badchartyaml\nversion: [1\n",
		},
		"multidocvalues": {
			"Chart.yaml":        "apiVersion: v2\nname: multidocvalues\nversion: 0.1.0\n",
			"values.yaml":       "a: 1\nb: {c: 2}\n---\nb: {d: 3}\n--- # comment\ne: 4",
			"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\ndata:\n  v: {{ .Values | toJson | quote }}\n",
		},
	}
	root := t.TempDir()
	for name, files := range charts {
		for p, content := range files {
			f := filepath.Join(root, name, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name, dir string
		vals      map[string]any
		wantErr   string // in Helm's error; "" for none
	}{
		{"web", "../../../../../helm/testdata/render/web", nil, ""},
		{"web/values", "../../../../../helm/testdata/render/web", map[string]any{"cache": map[string]any{"enabled": true}, "metrics": map[string]any{"enabled": true}, "tags": map[string]any{"extras": true}}, ""},
		{"features", filepath.Join(root, "features"), nil, ""},
		{"required/missing", filepath.Join(root, "required"), nil, "a name is required: set name"},
		{"required/given", filepath.Join(root, "required"), map[string]any{"name": "x"}, ""},
		{"fail/fails", filepath.Join(root, "fail"), nil, "set ok to true"},
		{"fail/ok", filepath.Join(root, "fail"), map[string]any{"ok": true}, ""},
		{"schema/ok", filepath.Join(root, "schema"), map[string]any{"replicas": 3}, ""},
		{"schema/type", filepath.Join(root, "schema"), map[string]any{"replicas": "two"}, "values don't meet the specifications of the schema"},
		{"schema/minimum", filepath.Join(root, "schema"), map[string]any{"replicas": 0}, "values don't meet the specifications of the schema"},
		{"schema/pattern", filepath.Join(root, "schema"), map[string]any{"name": "Web"}, "values don't meet the specifications of the schema"},
		{"schema/null", filepath.Join(root, "schema"), map[string]any{"replicas": nil}, "values don't meet the specifications of the schema"},
		{"schema/subchart", filepath.Join(root, "schema"), map[string]any{"sub": map[string]any{"port": 70000}}, "values don't meet the specifications of the schema"},
		{"badtemplate", filepath.Join(root, "badtemplate"), nil, "parse error"},
		{"badchartyaml", filepath.Join(root, "badchartyaml"), nil, "Chart.yaml"},
		{"multidocvalues", filepath.Join(root, "multidocvalues"), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fork, helm := renderFork(tt.dir, nil, tt.vals), renderHelm(tt.dir, nil, tt.vals)
			compare(t, fork, helm, renderHelm(tt.dir, nil, tt.vals))
			switch {
			case tt.wantErr == "" && helm.Err != "":
				t.Errorf("helm fails: %s", helm.Err)
			case tt.wantErr != "" && !strings.Contains(helm.Err, tt.wantErr):
				t.Errorf("helm's error %q does not say %q", helm.Err, tt.wantErr)
			}
		})
	}
}

// firstDiff shows where fork and helm first differ, with some context.
func firstDiff(fork, helm string) string {
	i := 0
	for i < len(fork) && i < len(helm) && fork[i] == helm[i] {
		i++
	}
	from := max(0, i-200)
	return fmt.Sprintf("  at byte %d\n  fork: %q\n  helm: %q", i, fork[from:min(len(fork), i+200)], helm[from:min(len(helm), i+200)])
}
