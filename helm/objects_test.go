package helm

import (
	"slices"
	"testing"
)

// TestObjectImages pins where images are found in rendered objects:
// workloads' pod templates, the prometheus-operator's resources (their
// upstream types are cited in objects.go), other custom resources'
// image shapes, user-declared paths, and operator flags (run time).
func TestObjectImages(t *testing.T) {
	for _, tc := range []struct {
		name          string
		doc           string
		paths         []ImagePath
		want, runtime []string
	}{
		{
			name: "deployment with a flag image",
			doc: `apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      initContainers: [{name: i, image: busybox:1.36}]
      containers:
        - name: op
          image: quay.io/prometheus-operator/prometheus-operator:v0.93.1
          args: ["--prometheus-config-reloader=quay.io/prometheus-operator/prometheus-config-reloader:v0.93.1", "--log-level=info", "--image-pull-policy=Always"]`,
			want:    []string{"busybox:1.36", "quay.io/prometheus-operator/prometheus-operator:v0.93.1"},
			runtime: []string{"quay.io/prometheus-operator/prometheus-config-reloader:v0.93.1"},
		},
		{
			name: "Prometheus with thanos and a patched sidecar",
			doc: `apiVersion: monitoring.coreos.com/v1
kind: Prometheus
spec:
  image: "quay.io/prometheus/prometheus:v3.14.0"
  thanos: {image: quay.io/thanos/thanos:v0.39.2}
  containers: [{name: config-reloader}]
  initContainers: [{name: x, image: alpine:3.20}]`,
			want: []string{"alpine:3.20", "quay.io/prometheus/prometheus:v3.14.0", "quay.io/thanos/thanos:v0.39.2"},
		},
		{
			name: "Alertmanager",
			doc:  "apiVersion: monitoring.coreos.com/v1\nkind: Alertmanager\nspec: {image: quay.io/prometheus/alertmanager:v0.34.0}",
			want: []string{"quay.io/prometheus/alertmanager:v0.34.0"},
		},
		{
			name: "ThanosRuler",
			doc:  "apiVersion: monitoring.coreos.com/v1\nkind: ThanosRuler\nspec: {image: quay.io/thanos/thanos:v0.39.2}",
			want: []string{"quay.io/thanos/thanos:v0.39.2"},
		},
		{
			name: "other custom resource: image string, image mapping, repository and tag",
			doc: `apiVersion: acme.example.com/v1
kind: Widget
spec:
  image: ghcr.io/acme/widget:1.0
  sidecar:
    image: {registry: docker.io, repository: bitnami/redis, tag: "8.2.1"}
  exporter: {repository: quay.io/acme/exporter, tag: v2}
  pinned: {repository: ghcr.io/acme/pinned, digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
  note: {image: "not an image reference"}`,
			want: []string{"docker.io/bitnami/redis:8.2.1", "ghcr.io/acme/pinned@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "ghcr.io/acme/widget:1.0", "quay.io/acme/exporter:v2"},
		},
		{
			name: "Kubernetes' own kinds are not searched",
			doc:  "apiVersion: v1\nkind: ConfigMap\ndata: {image: nginx:1.25}",
		},
		{
			name: "a CRD's schema is not a custom resource",
			doc:  "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {versions: [{schema: {openAPIV3Schema: {properties: {image: {type: string}}}}}]}",
		},
		{
			name:  "user path for a kind",
			doc:   "apiVersion: v1\nkind: ConfigMap\ndata:\n  workers: ignored\nspec: {workers: [{img: ghcr.io/acme/w:1}, {img: ghcr.io/acme/w:2}]}",
			paths: []ImagePath{{Kind: "ConfigMap", Path: "spec.workers[].img"}, {Kind: "Secret", Path: "spec.x"}},
			want:  []string{"ghcr.io/acme/w:1", "ghcr.io/acme/w:2"},
		},
		{
			name:  "user path limited by apiVersion",
			doc:   "apiVersion: acme.example.com/v2\nkind: Job2\nspec: {run: {img: ghcr.io/acme/j:1}}",
			paths: []ImagePath{{APIVersion: "acme.example.com/v1", Kind: "Job2", Path: "spec.run.img"}},
		},
		{
			name: "no kind",
			doc:  "foo: {image: nginx}",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, runtime, err := objectImages(tc.doc, tc.paths)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("images %q, want %q", got, tc.want)
			}
			if !slices.Equal(runtime, tc.runtime) {
				t.Errorf("run-time images %q, want %q", runtime, tc.runtime)
			}
		})
	}
}
