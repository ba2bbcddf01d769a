package helm_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/loader"

	"github.com/ferryhq/ferry/helm"
	"github.com/ferryhq/ferry/internal/realworldhelm"
)

// realworldCharts is, for every real chart vendored in
// testdata/realworld/helm, what ferry finds beyond the images `helm
// template` prints with the chart's default values, and why:
//
//   - disabled: images of subcharts that a condition turns off by default
//     (ferry renders them too, since a value given at install enables
//     them, and the mirror must then hold their images);
//   - runtime: images an operator deploys at run time, named in its
//     container's flags (reported as not locked, never locked).
var realworldCharts = map[string]struct {
	disabled, runtime []string
}{
	"kube-prometheus-stack": {
		// windowsMonitoring.enabled: false turns prometheus-windows-exporter off.
		disabled: []string{"ghcr.io/prometheus-community/windows-exporter:0.31.8"},
		// templates/prometheus-operator/deployment.yaml:
		// --prometheus-config-reloader=… and --thanos-default-base-image=….
		runtime: []string{"quay.io/prometheus-operator/prometheus-config-reloader:v0.93.1", "quay.io/thanos/thanos:v0.42.4"},
	},
	// memcached.enabled: false.
	"wordpress": {disabled: []string{"docker.io/bitnami/memcached:1.6.39-debian-12-r0"}},
}

// TestRealworldChartImages renders every vendored real chart, laid out as
// `helm dependency build` leaves it, and checks that ferry finds exactly
// the images `helm template` prints (its `image:` lines), plus the
// documented extras of realworldCharts: Prometheus and Alertmanager
// images set in custom resources, subchart values given by the parent
// (kube-prometheus-stack's grafana sidecar), library charts (bitnami's
// common) and aliases are Helm's own.
func TestRealworldChartImages(t *testing.T) {
	archives, err := realworldhelm.Load("../testdata/realworld/helm")
	if err != nil {
		t.Fatal(err)
	}
	if len(archives) < 10 {
		t.Fatalf("%d real charts vendored, want at least 10", len(archives))
	}
	for _, a := range archives {
		t.Run(a.Name+"-"+a.Version, func(t *testing.T) {
			t.Parallel()
			dir, err := realworldhelm.Layout(archives, a, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			want, err := realworldhelm.TemplateImages(dir, nil)
			if err != nil {
				t.Fatalf("helm template: %v", err)
			}
			ch, err := loader.LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			uses, err := helm.Images(ch, nil)
			if err != nil {
				t.Fatalf("ferry: %v", err)
			}
			var got, runtime []string
			for _, u := range uses {
				if u.RunTime {
					runtime = append(runtime, u.Ref)
				} else {
					got = append(got, u.Ref)
				}
			}
			slices.Sort(got)
			got = slices.Compact(got)
			slices.Sort(runtime)
			runtime = slices.Compact(runtime)
			extra := realworldCharts[a.Name]
			wantAll := slices.Concat(want, extra.disabled)
			slices.Sort(wantAll)
			if !slices.Equal(got, wantAll) {
				t.Errorf("images:\n  ferry:         %s\n  helm template: %s\n  + disabled:    %s", strings.Join(got, " "), strings.Join(want, " "), strings.Join(extra.disabled, " "))
			}
			if !slices.Equal(runtime, extra.runtime) {
				t.Errorf("deployed at run time: %v, want %v", runtime, extra.runtime)
			}
		})
	}
}
