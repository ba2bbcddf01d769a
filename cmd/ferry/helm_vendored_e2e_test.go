package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/cli"
	"helm.sh/helm/v4/pkg/downloader"
	"helm.sh/helm/v4/pkg/getter"

	"github.com/ferryhq/ferry/internal/authtest"
	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"oras.land/oras-go/v2"
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

// TestHelmVersionFlagTagRule: `ferry lock oci://HOST/charts/x --version
// RANGE` chooses among the chart's tags by Helm's tag rule, as a
// ferry.yaml `charts:` entry does (helm's pkg/registry/client.go Tags:
// only strict semantic versions, "_" read as "+"): the stray tags
// v3.0.0 and v3.9.0 are no chart versions, so ^3 locks 3.1.0; a
// `packages:` entry written oci:// follows the same rule.
func TestHelmVersionFlagTagRule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := registrytest.New(t)
	c := registrytest.Client(t)
	dst := registrytest.Repository(t, c, src.Host+"/charts/x")
	for _, v := range []string{"3.0.0", "3.1.0", "3.9.0"} {
		tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "x", Version: v}))
		if err != nil {
			t.Fatal(err)
		}
		if v == "3.1.0" {
			if _, err := charttest.PushChart(tgz, src.Host+"/charts", chartCreated); err != nil {
				t.Fatal(err)
			}
			continue
		}
		// A stray "v"-tag: the chart pushed elsewhere, copied under it.
		if _, err := charttest.PushChart(tgz, src.Host+"/scratch", chartCreated); err != nil {
			t.Fatal(err)
		}
		scratch := registrytest.Repository(t, c, src.Host+"/scratch/x")
		if _, err := oras.Copy(ctx, scratch, v, dst, "v"+v, oras.DefaultCopyOptions); err != nil {
			t.Fatal(err)
		}
	}
	env := clitest.New(t)
	check := func(name string) {
		t.Helper()
		l, err := lock.Read(env.Path(name))
		if err != nil {
			t.Fatal(err)
		}
		p := l.Package(src.Host + "/charts/x")
		if p == nil || p.Version != "3.1.0" {
			t.Errorf("%s: charts/x locked as %+v, want 3.1.0", name, p)
		}
	}
	env.MustRun("lock", "oci://"+src.Host+"/charts/x", "--version", "^3", "--lock", "flag.lock")
	check("flag.lock")
	env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: oci://"+src.Host+"/charts/x\n    version: ^3\n")
	env.MustRun("lock", "--lock", "packages.lock")
	check("packages.lock")
}

// TestHelmClassicRepositoryCredentials: a classic chart repository that
// asks for a username and password (HTTP Basic, as Helm sends a
// repository's credentials: pkg/getter/httpgetter.go) takes them from
// the docker-style config, --registry-config here, as registries do;
// without them the run fails naming the repository; the password is
// never printed.
func TestHelmClassicRepositoryCredentials(t *testing.T) {
	t.Parallel()
	const user, pass = "ada", "s3cr3t-pw-8d1f"
	repo := newChartRepoServer(t)
	inner := repo.srv.Config.Handler
	repo.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	})
	tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "common", Version: "0.2.0"}))
	if err != nil {
		t.Fatal(err)
	}
	repo.publish(t, map[string][]byte{"common-0.2.0.tgz": tgz})
	env := clitest.New(t)
	env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\ncharts:\n  - repo: "+repo.srv.URL+"\n    name: common\n    version: 0.x\n")
	res := env.Run("lock", "--registry-config", env.WriteFile("empty.json", "{}"))
	if res.Code == 0 || !strings.Contains(res.Stderr, "401") || !strings.Contains(res.Stderr, "password for "+strings.TrimPrefix(repo.srv.URL, "http://")+" are read from the docker config") || strings.Contains(res.Stdout+res.Stderr, pass) {
		t.Errorf("without credentials: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	cfg := authtest.WriteDockerConfig(t, t.TempDir(), strings.TrimPrefix(repo.srv.URL, "http://"), user, pass)
	res = env.MustRun("lock", "--registry-config", cfg, "--log-level", "debug")
	if strings.Contains(res.Stdout+res.Stderr+env.ReadFile("ferry.lock"), pass) {
		t.Errorf("the password is printed or locked:\n%s%s", res.Stdout, res.Stderr)
	}
	l, err := lock.Read(env.Path("ferry.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if p := l.Package(repo.srv.URL + "/common"); p == nil || p.Version != "0.2.0" {
		t.Errorf("common locked as %+v", p)
	}
}
