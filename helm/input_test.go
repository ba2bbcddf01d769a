package helm_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/cli"
	"helm.sh/helm/v4/pkg/downloader"
	"helm.sh/helm/v4/pkg/getter"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/helm"
	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/resolve"
)

func deploymentOf(image string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n      containers:\n        - {name: x, image: " + image + "}\n"
}

// rootsOf lists a MirrorSet's packages as "REF VERSION KIND".
func rootsOf(m *mirrorset.MirrorSet) []string {
	var out []string
	for _, p := range m.Packages {
		out = append(out, strings.TrimSpace(p.Ref+" "+p.Version+" "+p.Kind))
	}
	sort.Strings(out)
	return out
}

// TestReadInputLocalChart: a chart being built, given as its directory,
// its Chart.yaml or its .tgz, gives as roots its dependencies (as `helm
// dependency build` fetches them: a Chart.lock written by Helm's own
// `helm dependency update` pins them; one out of sync is refused with
// Helm's message), the charts its file:// dependencies point to, and the
// images it deploys.
func TestReadInputLocalChart(t *testing.T) {
	reg := registrytest.New(t)
	charts := reg.Host + "/charts"
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "redis", Version: v}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := charttest.PushChart(tgz, charts, created); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	sub := charttest.Chart(charttest.ChartSpec{Name: "sub", Version: "0.3.0", Templates: map[string]string{"d.yaml": deploymentOf("ghcr.io/acme/sub:0.3")}})
	if _, err := charttest.SaveChartDir(sub, dir); err != nil {
		t.Fatal(err)
	}
	app := charttest.Chart(charttest.ChartSpec{
		Name: "app", Version: "0.1.0",
		Dependencies: []*chart.Dependency{
			{Name: "redis", Version: "^1.0.0", Repository: "oci://" + charts},
			{Name: "sub", Version: "0.x", Repository: "file://../sub"},
		},
		Templates: map[string]string{"d.yaml": deploymentOf("{{ .Values.image }}")},
		Values:    map[string]any{"image": "ghcr.io/acme/app:1.0"},
	})
	appDir, err := charttest.SaveChartDir(app, dir)
	if err != nil {
		t.Fatal(err)
	}
	tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{
		Name: "packaged", Version: "0.1.0",
		Dependencies: []*chart.Dependency{{Name: "redis", Version: "2.0.0", Repository: "oci://" + charts}},
		Templates:    map[string]string{"d.yaml": deploymentOf("nginx")},
	}))
	if err != nil {
		t.Fatal(err)
	}
	tgzPath := filepath.Join(dir, "packaged-0.1.0.tgz")
	if err := os.WriteFile(tgzPath, tgz, 0o644); err != nil {
		t.Fatal(err)
	}
	unlocked := []string{
		charts + "/redis ^1.0.0",
		"ghcr.io/acme/app:1.0  " + format.KindImage,
		"ghcr.io/acme/sub:0.3  " + format.KindImage,
	}
	for _, tc := range []struct {
		name string
		path string
		want []string
	}{
		{"directory", appDir, unlocked},
		{"Chart.yaml", filepath.Join(appDir, "Chart.yaml"), unlocked},
		// An exact version of an OCI chart is its tag: no tag listing.
		{"packaged .tgz", tgzPath, []string{charts + "/redis:2.0.0", "docker.io/library/nginx:latest  " + format.KindImage}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := readInput(t, tc.path); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("roots:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}

	// Helm's own `helm dependency update` writes Chart.lock (and fills
	// charts/, which a checkout does not carry: remove it).
	hc, err := charttest.HelmClient()
	if err != nil {
		t.Fatal(err)
	}
	settings := cli.New()
	m := &downloader.Manager{
		Out: io.Discard, ChartPath: appDir, RegistryClient: hc,
		Getters:          getter.All(settings, getter.WithRegistryClient(hc), getter.WithPlainHTTP(true)),
		RepositoryConfig: filepath.Join(dir, "repositories.yaml"), RepositoryCache: filepath.Join(dir, "cache"),
		ContentCache: filepath.Join(dir, "content"),
	}
	if err := m.Update(); err != nil {
		t.Fatalf("helm dependency update: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(appDir, "charts")); err != nil {
		t.Fatal(err)
	}
	locked := []string{
		charts + "/redis:1.1.0",
		"ghcr.io/acme/app:1.0  " + format.KindImage,
		"ghcr.io/acme/sub:0.3  " + format.KindImage,
	}
	if got := readInput(t, appDir); strings.Join(got, "\n") != strings.Join(locked, "\n") {
		t.Errorf("roots with Chart.lock:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(locked, "\n"))
	}

	// Chart.yaml changed after the lock: out of sync, as Helm says.
	yml := filepath.Join(appDir, "Chart.yaml")
	data, err := os.ReadFile(yml)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(yml, []byte(strings.Replace(string(data), "^1.0.0", "~1.0.0", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = helm.New().ReadInput(appDir, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "Chart.lock") || !strings.Contains(err.Error(), "out of sync") || !strings.Contains(err.Error(), "app") {
		t.Errorf("stale Chart.lock: %v", err)
	}

	// Not a chart: not claimed.
	if _, ok, _ := helm.New().ReadInput(dir, nil, nil); ok {
		t.Error("a directory without Chart.yaml was read as a chart")
	}
}

// readInput reads a local chart as ROOT and returns its roots: those
// ReadInput's MirrorSet names (its dependencies), and the images the
// chart deploys once they are resolved and in place (Expand's roots).
func readInput(t *testing.T, path string) []string {
	t.Helper()
	var data []byte
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		if data, err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	m, ok, err := helm.New().ReadInput(path, data, nil)
	if err != nil || !ok {
		t.Fatalf("ReadInput(%s) = %v, %v", path, ok, err)
	}
	cf, err := helm.New().Configure(m)
	if err != nil {
		t.Fatal(err)
	}
	f := cf.(helm.Format)
	roots, err := m.AllRoots([]format.Format{f})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range roots {
		out = append(out, strings.TrimSpace(r.Ref+" "+r.Constraint+" "+r.Kind))
	}
	// Resolve the dependencies without expanding (the images are not
	// in the test registry), then expand as Resolve would.
	g, err := resolve.Resolve(context.Background(), roots, resolve.Options{Registry: registrytest.Client(t), Formats: []format.Format{readerOnly{f, f}}})
	if err != nil {
		t.Fatal(err)
	}
	exp, err := f.Expand(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range exp.Roots {
		out = append(out, strings.TrimSpace(r.Ref+" "+r.Constraint+" "+r.Kind))
	}
	sort.Strings(out)
	return out
}

// readerOnly is a format that reads and resolves charts as Helm does but
// never expands the closure.
type readerOnly struct {
	format.Reader
	resolve.Rules
}
