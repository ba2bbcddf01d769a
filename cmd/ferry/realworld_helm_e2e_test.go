package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/realworldhelm"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/ociref"
)

// The public hosts the real charts name, and where a loopback mirror
// serves each inside the test's "air gap".
const (
	promCharts    = "https://prometheus-community.github.io/helm-charts"
	grafanaCharts = "https://grafana-community.github.io/helm-charts"
	bitnamiCharts = "registry-1.docker.io/bitnamicharts"
)

// realworldDisabled are the images of subcharts a condition turns off by
// default, which ferry locks beside what `helm template` prints (see
// helm/realworld_test.go): kube-prometheus-stack's windows exporter,
// wordpress's memcached.
var realworldDisabled = map[string][]string{
	"kube-prometheus-stack": {"ghcr.io/prometheus-community/windows-exporter:0.31.8"},
	"wordpress":             {"docker.io/bitnami/memcached:1.6.39-debian-12-r0"},
}

// TestRealworldChartsLockOffline locks the real charts people install
// from their upstream sources, unedited, with every public host reachable
// only through an internal mirror (ferry.yaml `mirrors:`, `--offline`):
// kube-prometheus-stack and prometheus from the prometheus-community
// repository (with grafana from grafana-community's), and bitnami's
// wordpress, redis and postgresql from the bitnamicharts OCI registry,
// each with the images they deploy. The lock names only the public
// sources; the charts it holds are those Helm's rule picks (the highest
// version satisfying each range, as `helm dependency build` does), and
// its images are exactly what `helm template` prints for each root chart
// with its dependencies in place, plus the documented images of subcharts
// disabled by default. The operator's run-time images are reported, not
// locked.
func TestRealworldChartsLockOffline(t *testing.T) {
	t.Parallel()
	archives, err := realworldhelm.Load(filepath.Join("..", "..", "testdata", "realworld", "helm"))
	if err != nil {
		t.Fatal(err)
	}
	mir := registrytest.New(t)
	prom, graf := newChartRepoServer(t), newChartRepoServer(t)
	promFiles, grafFiles := map[string][]byte{}, map[string][]byte{}
	for _, a := range archives {
		name := a.Name + "-" + a.Version + ".tgz"
		switch {
		case a.Name == "grafana":
			grafFiles[name] = a.Data
		case strings.HasPrefix(filepath.Base(a.File), "prometheus") || strings.HasPrefix(a.Name, "kube-") || a.Name == "alertmanager":
			promFiles[name] = a.Data
		default: // bitnami
			if _, err := charttest.PushChart(a.Data, mir.Host+"/bitnamicharts", chartCreated); err != nil {
				t.Fatal(err)
			}
		}
	}
	prom.publish(t, promFiles)
	graf.publish(t, grafFiles)

	// The roots, and what Helm's own rules and `helm template` give for
	// each.
	roots := []struct{ name, entry string }{
		{"kube-prometheus-stack", "repo: " + promCharts + "\n    name: kube-prometheus-stack\n    version: 88.5.3"},
		{"prometheus", "repo: " + promCharts + "\n    name: prometheus\n    version: 29.x"},
		{"wordpress", "ref: oci://" + bitnamiCharts + "/wordpress\n    version: 27.x.x"},
		{"redis", "ref: oci://" + bitnamiCharts + "/redis\n    version: 23.1.1"},
		{"postgresql", "ref: oci://" + bitnamiCharts + "/postgresql\n    version: \">=17 <18\""},
	}
	var wantImages, wantCharts []string
	c := registrytest.Client(t)
	for _, r := range roots {
		a, err := realworldhelm.Pick(archives, r.name, "*")
		if err != nil {
			t.Fatal(err)
		}
		dir, err := realworldhelm.Layout(archives, a, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		images, err := realworldhelm.TemplateImages(dir, nil)
		if err != nil {
			t.Fatalf("helm template %s: %v", r.name, err)
		}
		wantImages = append(wantImages, images...)
		wantImages = append(wantImages, realworldDisabled[r.name]...)
		wantCharts = append(wantCharts, helmClosure(t, archives, a)...)
	}
	for i, img := range wantImages {
		ref, err := ociref.ParseNormalized(img, "")
		if err != nil {
			t.Fatal(err)
		}
		wantImages[i] = ref.String()
	}
	slices.Sort(wantImages)
	wantImages = slices.Compact(wantImages)
	slices.Sort(wantCharts)
	wantCharts = slices.Compact(wantCharts)
	// Every image, at its public name's place in the mirror.
	hostPath := map[string]string{"docker.io": "dockerhub", "quay.io": "quay", "ghcr.io": "ghcr", "registry.k8s.io": "k8s"}
	pushMirroredImages(t, c, mir.Host, hostPath, wantImages, "realworld")

	env := clitest.New(t)
	var y strings.Builder
	y.WriteString("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\ncharts:\n")
	for _, r := range roots {
		y.WriteString("  - " + r.entry + "\n")
	}
	fmt.Fprintf(&y, "mirrors:\n  %q: %s\n  %q: %s\n  %s: %s/bitnamicharts\n", promCharts, prom.srv.URL, grafanaCharts, graf.srv.URL, bitnamiCharts, mir.Host)
	for host, p := range hostPath {
		fmt.Fprintf(&y, "  %s: %s/%s\n", host, mir.Host, p)
	}
	env.WriteFile("ferry.yaml", y.String())
	r := env.Expect(0, []string{"lock", "--offline"}, "deployed at run time", "prometheus-config-reloader")
	l, err := lock.Read(env.Path("ferry.lock"))
	if err != nil {
		t.Fatal(err)
	}
	var gotImages, gotCharts []string
	for _, p := range l.Packages {
		switch p.Kind {
		case format.KindImage:
			for _, tag := range append([]string{p.Version}, p.Tags...) {
				gotImages = append(gotImages, p.Source+":"+tag)
			}
		case format.KindHelmChart:
			gotCharts = append(gotCharts, chartName(p.Source)+"-"+p.Version)
		}
		if strings.Contains(p.Source, "127.0.0.1") {
			t.Errorf("the lock names the mirror %s, not the public source", p.Source)
		}
	}
	slices.Sort(gotImages)
	slices.Sort(gotCharts)
	gotCharts = slices.Compact(gotCharts)
	if !slices.Equal(gotImages, wantImages) {
		t.Errorf("images locked:\n  %s\nwant (helm template + disabled subcharts):\n  %s\nstderr:\n%s", strings.Join(gotImages, "\n  "), strings.Join(wantImages, "\n  "), r.Stderr)
	}
	if !slices.Equal(gotCharts, wantCharts) {
		t.Errorf("charts locked %v, want (Helm's picks) %v", gotCharts, wantCharts)
	}
	// The run-time images are not locked.
	for _, img := range gotImages {
		if strings.Contains(img, "prometheus-config-reloader") && !slices.Contains(wantImages, img) {
			t.Errorf("run-time image %s was locked", img)
		}
	}
}

// helmClosure lists NAME-VERSION of a chart and of every chart its
// dependencies resolve to by Helm's rule among the vendored archives,
// transitively (a dependency vendored in charts/ is part of its parent).
func helmClosure(t *testing.T, archives []realworldhelm.Archive, a realworldhelm.Archive) []string {
	t.Helper()
	out := []string{a.Name + "-" + a.Version}
	have := map[string]bool{}
	for _, sub := range a.Chart.Dependencies() {
		have[sub.Name()] = true
	}
	for _, d := range a.Chart.Metadata.Dependencies {
		if have[d.Name] {
			continue
		}
		dep, err := realworldhelm.Pick(archives, d.Name, d.Version)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, helmClosure(t, archives, dep)...)
	}
	return out
}

// chartName is the last element of a chart's source.
func chartName(source string) string { return source[strings.LastIndex(source, "/")+1:] }

// pushMirroredImages pushes a small image for every public reference in
// images, tagged as the reference is, at its place in the mirror host:
// HOST/hostPath[REGISTRY]/PATH, as a `mirrors:` entry REGISTRY:
// HOST/hostPath[REGISTRY] maps it. seed tells the images apart.
func pushMirroredImages(t *testing.T, c *client.Client, host string, hostPath map[string]string, images []string, seed string) {
	t.Helper()
	ctx := context.Background()
	for i, img := range images {
		ref, err := ociref.Parse(img)
		if err != nil {
			t.Fatal(err)
		}
		repo := registrytest.Repository(t, c, host+"/"+hostPath[ref.Registry]+"/"+strings.TrimPrefix(ref.Repo(), ref.Registry+"/"))
		desc, err := fixture.PushImage(ctx, repo, fmt.Sprintf("%s-%d", seed, i), 64)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.Tag(ctx, desc, ref.Tag); err != nil {
			t.Fatal(err)
		}
	}
}
