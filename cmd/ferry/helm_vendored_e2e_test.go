package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/cli"
	"helm.sh/helm/v4/pkg/downloader"
	"helm.sh/helm/v4/pkg/getter"

	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
)

// TestHelmVendoredLocalChart: after Helm's own `helm dependency update`
// (pkg/downloader/manager.go Update: Chart.lock written, charts/ filled),
// a local chart given as ROOT whose every dependency is vendored is
// locked from what is vendored: the images its vendored charts deploy,
// rendered as `helm template` renders the chart, are locked; nothing is
// "nothing to resolve". Given as its directory, its Chart.yaml, a
// ferry.yaml `charts: [{path}]` entry, or a vendored .tgz alone.
func TestHelmVendoredLocalChart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := registrytest.New(t)
	c := registrytest.Client(t)
	for _, name := range []string{"app", "redis"} {
		repo := registrytest.Repository(t, c, src.Host+"/images/"+name)
		desc, err := fixture.PushImage(ctx, repo, "vendored-"+name)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.Tag(ctx, desc, "1.1"); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "redis", Version: v,
			Templates: map[string]string{"d.yaml": deployment("redis", src.Host+"/images/redis:1.1")}}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := charttest.PushChart(tgz, src.Host+"/charts", chartCreated); err != nil {
			t.Fatal(err)
		}
	}
	env := clitest.New(t)
	dir, err := charttest.SaveChartDir(charttest.Chart(charttest.ChartSpec{Name: "app", Version: "0.1.0",
		Dependencies: []*chart.Dependency{{Name: "redis", Version: "^1.0.0", Repository: "oci://" + src.Host + "/charts"}},
		Templates:    map[string]string{"d.yaml": deployment("app", src.Host+"/images/app:1.1")},
	}), env.Dir)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := charttest.HelmClient()
	if err != nil {
		t.Fatal(err)
	}
	m := &downloader.Manager{
		Out: io.Discard, ChartPath: dir, RegistryClient: hc,
		Getters:          getter.All(cli.New(), getter.WithRegistryClient(hc), getter.WithPlainHTTP(true)),
		RepositoryConfig: filepath.Join(t.TempDir(), "repositories.yaml"), RepositoryCache: t.TempDir(),
		ContentCache: t.TempDir(),
	}
	if err := m.Update(); err != nil {
		t.Fatalf("helm dependency update: %v", err)
	}
	env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\ncharts:\n  - path: app\n")
	for i, args := range [][]string{{"lock", "./app"}, {"lock", "./app/Chart.yaml"}, {"lock", "./app/charts/redis-1.1.0.tgz"}, {"lock"}} {
		out := fmt.Sprintf("ferry%d.lock", i)
		env.MustRun(append(args, "--lock", out)...)
		l, err := lock.Read(env.Path(out))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range l.Resolved() {
			got = append(got, p.Source+" "+p.Kind)
		}
		want := []string{src.Host + "/images/app image", src.Host + "/images/redis image"}
		if strings.HasSuffix(args[len(args)-1], ".tgz") {
			// The vendored chart itself, given as ROOT.
			want = want[1:]
		}
		for _, want := range want {
			if !strings.Contains(strings.Join(got, "\n"), want) {
				t.Errorf("%v: lock lacks %s:\n%s", args, want, strings.Join(got, "\n"))
			}
		}
	}
}
