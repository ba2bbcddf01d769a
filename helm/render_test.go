package helm

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/common"
	chart "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2"
	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/loader"
)

// renderTestChart builds a chart with Helm's types: name, default values (YAML)
// and templates given as name, content pairs ("templates/x.yaml", "...").
func renderTestChart(t *testing.T, name, values string, tpls ...string) *chart.Chart {
	t.Helper()
	vals, err := loader.LoadValues(strings.NewReader(values))
	if err != nil {
		t.Fatalf("values of %s: %v", name, err)
	}
	c := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: "1.0.0"},
		Values:   vals,
	}
	for i := 0; i+1 < len(tpls); i += 2 {
		c.Templates = append(c.Templates, &common.File{Name: tpls[i], Data: []byte(tpls[i+1])})
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("chart %s: %v", name, err)
	}
	return c
}

// vendorDep vendors sub into parent as `helm dependency build` would, with
// its Chart.yaml entry.
func vendorDep(parent, sub *chart.Chart, dep chart.Dependency) *chart.Chart {
	if dep.Name == "" {
		dep.Name = sub.Name()
	}
	if dep.Version == "" {
		dep.Version = sub.Metadata.Version
	}
	parent.Metadata.Dependencies = append(parent.Metadata.Dependencies, &dep)
	parent.AddDependency(sub)
	return parent
}

func loadRenderChart(t *testing.T, name string) *chart.Chart {
	t.Helper()
	c, err := loader.Load(filepath.Join("testdata", "render", name))
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return c
}

func renderValues(t *testing.T, files []string, set map[string]string) map[string]any {
	t.Helper()
	var raw [][]byte
	for _, f := range files {
		raw = append(raw, []byte(f))
	}
	v, err := Values(raw, set)
	if err != nil {
		t.Fatalf("Values: %v", err)
	}
	return v
}

const (
	rtDeploymentTpl = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  template:
    spec:
      initContainers:
        - name: migrate
          image: ghcr.io/acme/migrate:2
      containers:
        - name: app
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
        - name: sidecar
          image: "  envoyproxy/envoy:v1.30  "
        - name: no-image
          image: "   "
`
	rtCronJobTpl = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: backup
spec:
  schedule: "0 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          initContainers:
            - name: wait
              image: busybox:1.36
          containers:
            - name: backup
              image: ghcr.io/acme/backup@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
`
	rtPodTpl = `apiVersion: v1
kind: Pod
metadata:
  name: debug
spec:
  containers:
    - name: app
      image: nginx:1.25
  ephemeralContainers:
    - name: debugger
      image: docker.io/library/alpine:3.20
`
	// Several kinds in one file, with an empty document, a comment-only
	// document, a kind that runs no pods and a Service holding an
	// "image:" field where no container is.
	rtWorkloadsTpl = `
---
# only a comment
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  template:
    spec:
      containers: [{name: db, image: postgres:16}]
---
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  template:
    spec:
      containers: [{name: agent, image: "datadog/agent:7"}]
---
apiVersion: v1
kind: Service
metadata: {name: svc}
spec:
  image: not-a-container:1
  ports: [{port: 80}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      containers: [{name: once, image: "alpine:3.20"}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  template:
    spec:
      initContainers: [{name: init, image: "busybox:1.36"}]
      containers: [{name: rs, image: "httpd:2.4"}]
`
	rtConfigMapTpl = `apiVersion: v1
kind: ConfigMap
metadata:
  name: config
data:
  pod.yaml: |
    kind: Pod
    spec:
      containers:
        - image: x:1
  image: x
`
	rtHookTpl = `apiVersion: batch/v1
kind: Job
metadata:
  name: pre-install
  annotations:
    "helm.sh/hook": pre-install
spec:
  template:
    spec:
      containers: [{name: hook, image: "ghcr.io/acme/hook:1"}]
`
	rtImageValues = `image:
  repository: nginx
  tag: "1.25"
`
)

func TestImages(t *testing.T) {
	ann := AnnotationTemplate
	tests := []struct {
		name    string
		chart   func(t *testing.T) *chart.Chart
		files   []string
		set     map[string]string
		want    []ImageUse
		wantErr []string // substrings of the error, all required
	}{
		{
			name: "deployment containers and initContainers",
			chart: func(t *testing.T) *chart.Chart {
				return renderTestChart(t, "web", rtImageValues, "templates/deployment.yaml", rtDeploymentTpl)
			},
			want: []ImageUse{
				{Ref: "envoyproxy/envoy:v1.30", Chart: "web", Template: "web/templates/deployment.yaml"},
				{Ref: "ghcr.io/acme/migrate:2", Chart: "web", Template: "web/templates/deployment.yaml"},
				{Ref: "nginx:1.25", Chart: "web", Template: "web/templates/deployment.yaml"},
			},
		},
		{
			name: "cronjob",
			chart: func(t *testing.T) *chart.Chart {
				return renderTestChart(t, "ops", "", "templates/cronjob.yaml", rtCronJobTpl)
			},
			want: []ImageUse{
				{Ref: "busybox:1.36", Chart: "ops", Template: "ops/templates/cronjob.yaml"},
				{Ref: "ghcr.io/acme/backup@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", Chart: "ops", Template: "ops/templates/cronjob.yaml"},
			},
		},
		{
			name: "pod with ephemeralContainers",
			chart: func(t *testing.T) *chart.Chart {
				return renderTestChart(t, "dbg", "", "templates/pod.yaml", rtPodTpl)
			},
			want: []ImageUse{
				{Ref: "docker.io/library/alpine:3.20", Chart: "dbg", Template: "dbg/templates/pod.yaml"},
				{Ref: "nginx:1.25", Chart: "dbg", Template: "dbg/templates/pod.yaml"},
			},
		},
		{
			name: "statefulset daemonset job replicaset in one multi-document file",
			chart: func(t *testing.T) *chart.Chart {
				return renderTestChart(t, "multi", "", "templates/workloads.yaml", rtWorkloadsTpl)
			},
			want: []ImageUse{
				{Ref: "alpine:3.20", Chart: "multi", Template: "multi/templates/workloads.yaml"},
				{Ref: "busybox:1.36", Chart: "multi", Template: "multi/templates/workloads.yaml"},
				{Ref: "datadog/agent:7", Chart: "multi", Template: "multi/templates/workloads.yaml"},
				{Ref: "httpd:2.4", Chart: "multi", Template: "multi/templates/workloads.yaml"},
				{Ref: "postgres:16", Chart: "multi", Template: "multi/templates/workloads.yaml"},
			},
		},
		{
			name: "configmap holding image text yields nothing",
			chart: func(t *testing.T) *chart.Chart {
				return renderTestChart(t, "cfg", "", "templates/configmap.yaml", rtConfigMapTpl)
			},
			want: nil,
		},
		{
			name: "hook job, NOTES.txt and non-YAML files",
			chart: func(t *testing.T) *chart.Chart {
				return renderTestChart(t, "hooks", "",
					"templates/hook.yaml", rtHookTpl,
					"templates/NOTES.txt", rtPodTpl,
					"templates/readme.txt", "just some text: [\n",
					"templates/_pod.tpl", rtPodTpl,
					"templates/empty.yaml", "{{/* nothing */}}\n")
			},
			want: []ImageUse{{Ref: "ghcr.io/acme/hook:1", Chart: "hooks", Template: "hooks/templates/hook.yaml"}},
		},
		{
			name: "images set by values: defaults",
			chart: func(t *testing.T) *chart.Chart {
				return renderTestChart(t, "web", rtImageValues, "templates/pod.yaml",
					"kind: Pod\nspec:\n  containers:\n    - image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n")
			},
			want: []ImageUse{{Ref: "nginx:1.25", Chart: "web", Template: "web/templates/pod.yaml"}},
		},
		{
			name: "images set by values: values files in order",
			chart: func(t *testing.T) *chart.Chart {
				return renderTestChart(t, "web", rtImageValues, "templates/pod.yaml",
					"kind: Pod\nspec:\n  containers:\n    - image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n")
			},
			files: []string{"image: {repository: registry.example/nginx, tag: '1.26'}\n", "image: {tag: '1.27'}\n"},
			want:  []ImageUse{{Ref: "registry.example/nginx:1.27", Chart: "web", Template: "web/templates/pod.yaml"}},
		},
		{
			name: "images set by values: --set over values file",
			chart: func(t *testing.T) *chart.Chart {
				return renderTestChart(t, "web", rtImageValues, "templates/pod.yaml",
					"kind: Pod\nspec:\n  containers:\n    - image: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n")
			},
			files: []string{"image: {repository: registry.example/nginx, tag: '1.26'}\n"},
			set:   map[string]string{"image.tag": "1.25.3"},
			want:  []ImageUse{{Ref: "registry.example/nginx:1.25.3", Chart: "web", Template: "web/templates/pod.yaml"}},
		},
		{
			name:  "vendored subcharts: enabled, disabled by condition, by tags, aliased",
			chart: func(t *testing.T) *chart.Chart { return loadRenderChart(t, "web") },
			want: []ImageUse{
				{Ref: "busybox:1.36", Chart: "web", Template: ann},
				{Ref: "docker.io/acme/extra:1", Chart: "web/charts/extra", Template: "web/charts/extra/templates/job.yaml"},
				{Ref: "ghcr.io/acme/web:1.0.0", Chart: "web", Template: ann},
				{Ref: "ghcr.io/acme/web:1.0.0", Chart: "web", Template: "web/templates/deployment.yaml"},
				{Ref: "quay.io/acme/metrics-sidecar:1", Chart: "web/charts/metrics", Template: ann},
				{Ref: "quay.io/acme/metrics:0.2.0", Chart: "web/charts/metrics", Template: "web/charts/metrics/templates/daemonset.yaml"},
				{Ref: "redis:7.2", Chart: "web/charts/redis", Template: "web/charts/redis/templates/statefulset.yaml"},
				{Ref: "redis:7.4", Chart: "web/charts/cache", Template: "web/charts/cache/templates/statefulset.yaml"},
			},
		},
		{
			name:  "vendored subcharts: enabled by values and overridden",
			chart: func(t *testing.T) *chart.Chart { return loadRenderChart(t, "web") },
			set: map[string]string{
				"metrics.enabled":   "true",
				"metrics.image.tag": "0.3.0",
				"tags.extras":       "true",
				"redis.enabled":     "false",
				"redis.image.tag":   "7.2.5",
				"image.tag":         "2.0.0",
			},
			want: []ImageUse{
				{Ref: "busybox:1.36", Chart: "web", Template: ann},
				{Ref: "docker.io/acme/extra:1", Chart: "web/charts/extra", Template: "web/charts/extra/templates/job.yaml"},
				{Ref: "ghcr.io/acme/web:1.0.0", Chart: "web", Template: ann},
				{Ref: "ghcr.io/acme/web:2.0.0", Chart: "web", Template: "web/templates/deployment.yaml"},
				{Ref: "quay.io/acme/metrics-sidecar:1", Chart: "web/charts/metrics", Template: ann},
				{Ref: "quay.io/acme/metrics:0.3.0", Chart: "web/charts/metrics", Template: "web/charts/metrics/templates/daemonset.yaml"},
				{Ref: "redis:7.2.5", Chart: "web/charts/redis", Template: "web/charts/redis/templates/statefulset.yaml"},
				{Ref: "redis:7.4", Chart: "web/charts/cache", Template: "web/charts/cache/templates/statefulset.yaml"},
			},
		},
		{
			name: "global values reach a disabled subchart",
			chart: func(t *testing.T) *chart.Chart {
				parent := renderTestChart(t, "app", "global: {registry: mirror.example}\nworker: {enabled: false}\n")
				sub := renderTestChart(t, "worker", "", "templates/pod.yaml",
					"kind: Pod\nspec:\n  containers:\n    - image: {{ .Values.global.registry }}/worker:1\n")
				return vendorDep(parent, sub, chart.Dependency{Condition: "worker.enabled"})
			},
			want: []ImageUse{{Ref: "mirror.example/worker:1", Chart: "app/charts/worker", Template: "app/charts/worker/templates/pod.yaml"}},
		},
		{
			name: "fail in a template names chart and template",
			chart: func(t *testing.T) *chart.Chart {
				return renderTestChart(t, "broken", "", "templates/pod.yaml", rtPodTpl, "templates/fail.yaml", `{{ fail "no way" }}`)
			},
			wantErr: []string{"chart broken", "broken/templates/fail.yaml", "no way"},
		},
		{
			name: "required in a subchart names the subchart template",
			chart: func(t *testing.T) *chart.Chart {
				parent := renderTestChart(t, "app", "", "templates/pod.yaml", rtPodTpl)
				sub := renderTestChart(t, "db", "", "templates/secret.yaml",
					"kind: Secret\nstringData:\n  password: {{ required \"db.password is required\" .Values.password }}\n")
				return vendorDep(parent, sub, chart.Dependency{})
			},
			wantErr: []string{"chart app", "app/charts/db/templates/secret.yaml", "db.password is required"},
		},
		{
			name: "required in a disabled subchart",
			chart: func(t *testing.T) *chart.Chart {
				parent := renderTestChart(t, "app", "db: {enabled: false}\n", "templates/pod.yaml", rtPodTpl)
				sub := renderTestChart(t, "db", "", "templates/secret.yaml",
					"kind: Secret\nstringData:\n  password: {{ required \"db.password is required\" .Values.password }}\n")
				return vendorDep(parent, sub, chart.Dependency{Condition: "db.enabled"})
			},
			wantErr: []string{"chart app", "disabled by condition or tags (app/charts/db)", "app/charts/db/templates/secret.yaml", "db.password is required"},
		},
		{
			name: "required in a disabled subchart satisfied by values",
			chart: func(t *testing.T) *chart.Chart {
				parent := renderTestChart(t, "app", "db: {enabled: false}\n")
				sub := renderTestChart(t, "db", "", "templates/secret.yaml",
					"kind: Secret\nstringData:\n  password: {{ required \"db.password is required\" .Values.password }}\n",
					"templates/pod.yaml", "kind: Pod\nspec:\n  containers: [{image: postgres:16}]\n")
				return vendorDep(parent, sub, chart.Dependency{Condition: "db.enabled"})
			},
			set:  map[string]string{"db.password": "s3cret"},
			want: []ImageUse{{Ref: "postgres:16", Chart: "app/charts/db", Template: "app/charts/db/templates/pod.yaml"}},
		},
		{
			// The parent's templates run once, with the subcharts Helm
			// enables: the render that forces disabled subcharts on keeps
			// only the parent's partials (the helper stays includable).
			name: "parent templates do not run again with forced subcharts",
			chart: func(t *testing.T) *chart.Chart {
				parent := renderTestChart(t, "app", "db: {enabled: false}\n",
					"templates/_helpers.tpl", `{{ define "app.registry" }}mirror.example{{ end }}`,
					"templates/guard.yaml", `{{ if .Subcharts.db }}{{ fail "db rendered with the parent" }}{{ end }}`,
					"templates/pod.yaml", rtPodTpl)
				sub := renderTestChart(t, "db", "", "templates/pod.yaml",
					"kind: Pod\nspec:\n  containers: [{image: '{{ include \"app.registry\" . }}/postgres:16'}]\n")
				return vendorDep(parent, sub, chart.Dependency{Condition: "db.enabled"})
			},
			want: []ImageUse{
				{Ref: "docker.io/library/alpine:3.20", Chart: "app", Template: "app/templates/pod.yaml"},
				{Ref: "mirror.example/postgres:16", Chart: "app/charts/db", Template: "app/charts/db/templates/pod.yaml"},
				{Ref: "nginx:1.25", Chart: "app", Template: "app/templates/pod.yaml"},
			},
		},
		{
			name: "invalid YAML in a .yaml template",
			chart: func(t *testing.T) *chart.Chart {
				return renderTestChart(t, "bad", "", "templates/bad.yaml", "kind: Pod\nspec: [unclosed\n")
			},
			wantErr: []string{"chart bad", "YAML parse error on bad/templates/bad.yaml"},
		},
		{
			name: "malformed artifacthub.io/images annotation",
			chart: func(t *testing.T) *chart.Chart {
				c := renderTestChart(t, "ann", "")
				c.Metadata.Annotations = map[string]string{ImagesAnnotation: "image: not-a-list\n"}
				return c
			},
			wantErr: []string{"chart ann", ImagesAnnotation},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vals := renderValues(t, tt.files, tt.set)
			got, err := Images(tt.chart(t), vals)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Images: no error, got %v", got)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Images: %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Images:\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

// TestImagesLeavesChart checks that Images does not change the chart it is
// given (Helm's ProcessDependencies rewrites the chart it processes), so
// that a second call, or the caller's later use, sees the same chart.
func TestImagesLeavesChart(t *testing.T) {
	c := loadRenderChart(t, "web")
	snapshot := func() string {
		var b bytes.Buffer
		for _, d := range c.Metadata.Dependencies {
			b.WriteString(d.Name + "|" + d.Alias + "|" + d.Condition + "|" + strings.Join(d.Tags, ",") + "\n")
		}
		for _, s := range c.Dependencies() {
			b.WriteString(s.ChartFullPath() + " " + s.Metadata.Name)
			for _, tpl := range s.Templates {
				b.WriteString(" " + tpl.Name)
			}
			b.WriteString("\n")
		}
		for _, tpl := range c.Templates {
			b.WriteString(tpl.Name + "\n")
		}
		return b.String()
	}
	before := snapshot()
	first, err := Images(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after := snapshot(); after != before {
		t.Fatalf("chart changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	second, err := Images(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first, second) {
		t.Fatalf("second call differs:\n%v\n%v", first, second)
	}
}
