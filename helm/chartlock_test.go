package helm_test

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/cli"
	"helm.sh/helm/v4/pkg/downloader"
	"helm.sh/helm/v4/pkg/getter"

	"github.com/ferryhq/ferry/helm"
	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// chartSources serves charts for Helm's own `helm dependency update`:
// redis 1.0.0 and 1.1.0 as OCI charts in a registry, web 1.0.0 and 1.2.0
// in the classic repository https://127.0.0.1:PORT/stable, db 2.0.0 and
// 2.1.0 in https://127.0.0.1:PORT/team, both listed in a Helm
// repositories.yaml (the second as "team", Chart.yaml's "@team") that
// HELM_REPOSITORY_CONFIG names for ferry as for helm.
type chartSources struct {
	oci, stable, team string
	repoConfig        string
	dir               string
}

func newChartSources(t *testing.T) chartSources {
	t.Helper()
	reg := registrytest.New(t)
	s := chartSources{oci: "oci://" + reg.Host + "/charts", dir: t.TempDir()}
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, v := range []string{"1.0.0", "1.1.0"} {
		tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "redis", Version: v,
			Templates: map[string]string{"d.yaml": deploymentOf("ghcr.io/acme/redis:" + v)}}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := charttest.PushChart(tgz, reg.Host+"/charts", created); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string][]byte{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	s.stable, s.team = srv.URL+"/stable", srv.URL+"/team"
	for _, repo := range []struct {
		base, name string
		versions   []string
	}{{s.stable, "web", []string{"1.0.0", "1.2.0"}}, {s.team, "db", []string{"2.0.0", "2.1.0"}}} {
		archives := map[string][]byte{}
		prefix := strings.TrimPrefix(repo.base, srv.URL)
		for _, v := range repo.versions {
			tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: repo.name, Version: v,
				Templates: map[string]string{"d.yaml": deploymentOf("ghcr.io/acme/" + repo.name + ":" + v)}}))
			if err != nil {
				t.Fatal(err)
			}
			name := repo.name + "-" + v + ".tgz"
			archives[name] = tgz
			files[prefix+"/"+name] = tgz
		}
		idx, err := charttest.ChartIndex(archives, repo.base, created)
		if err != nil {
			t.Fatal(err)
		}
		files[prefix+"/index.yaml"] = idx
	}
	ca := filepath.Join(s.dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	s.repoConfig = filepath.Join(s.dir, "repositories.yaml")
	conf := "apiVersion: v1\nrepositories:\n" +
		"- {name: stable, url: " + s.stable + ", caFile: " + ca + "}\n" +
		"- {name: team, url: " + s.team + ", caFile: " + ca + "}\n"
	if err := os.WriteFile(s.repoConfig, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HELM_REPOSITORY_CONFIG", s.repoConfig)
	return s
}

// update runs Helm's own `helm dependency update` on the chart in dir:
// it writes Chart.lock and fills charts/.
func (s chartSources) update(t *testing.T, dir string) {
	t.Helper()
	hc, err := charttest.HelmClient()
	if err != nil {
		t.Fatal(err)
	}
	m := &downloader.Manager{
		Out: io.Discard, ChartPath: dir, RegistryClient: hc,
		Getters:          getter.All(cli.New(), getter.WithRegistryClient(hc), getter.WithPlainHTTP(true)),
		RepositoryConfig: s.repoConfig, RepositoryCache: filepath.Join(s.dir, "cache"),
		ContentCache: filepath.Join(s.dir, "content"),
	}
	if err := m.Update(); err != nil {
		t.Fatalf("helm dependency update: %v", err)
	}
}

// TestReadInputHelmChartLock: a Chart.lock written by Helm's own `helm
// dependency update` is in sync for ferry as for `helm dependency build`
// (helm's pkg/downloader/manager.go Build and Update hash Chart.yaml's
// dependencies after resolveRepoNames has replaced "@NAME" by the URL of
// repositories.yaml, internal/resolver/resolver.go HashReq), for an OCI
// dependency, an https classic repository and an "@alias"; its versions
// are the roots; a Chart.yaml edited after the lock is out of sync.
func TestReadInputHelmChartLock(t *testing.T) {
	s := newChartSources(t)
	host := strings.TrimPrefix(s.stable, "https://")
	host = host[:strings.Index(host, "/")]
	for _, tc := range []struct {
		name string
		deps []*chart.Dependency
		want []string
		edit [2]string
	}{
		{"oci", []*chart.Dependency{{Name: "redis", Version: "^1.0.0", Repository: s.oci}},
			[]string{strings.TrimPrefix(s.oci, "oci://") + "/redis:1.1.0"}, [2]string{"^1.0.0", "~1.0.0"}},
		{"https repository", []*chart.Dependency{{Name: "web", Version: "1.x", Repository: s.stable}},
			[]string{"https://" + host + "/stable/web 1.2.0"}, [2]string{"1.x", "1.0.x"}},
		{"@alias", []*chart.Dependency{{Name: "db", Version: ">=2.0.0", Repository: "@team"}},
			[]string{"https://" + host + "/team/db 2.1.0"}, [2]string{">=2.0.0", "<2.1.0"}},
		{"alias: and all three", []*chart.Dependency{
			{Name: "redis", Version: "^1.0.0", Repository: s.oci},
			{Name: "web", Version: "1.x", Repository: s.stable + "/"},
			{Name: "db", Version: "2.x", Repository: "alias:team", Alias: "database"},
		}, []string{
			strings.TrimPrefix(s.oci, "oci://") + "/redis:1.1.0",
			"https://" + host + "/stable/web 1.2.0",
			"https://" + host + "/team/db 2.1.0",
		}, [2]string{"alias: database", "alias: store"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := charttest.SaveChartDir(charttest.Chart(charttest.ChartSpec{Name: "app", Version: "0.1.0", Dependencies: tc.deps}), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			s.update(t, dir)
			if err := os.RemoveAll(filepath.Join(dir, "charts")); err != nil {
				t.Fatal(err)
			}
			m, ok, err := helm.New().ReadInput(dir, nil, nil)
			if err != nil || !ok {
				t.Fatalf("helm's fresh Chart.lock: ReadInput = %v, %v", ok, err)
			}
			cf, err := helm.New().Configure(m)
			if err != nil {
				t.Fatal(err)
			}
			roots, err := cf.(helm.Format).SectionRoots(m)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range roots {
				got = append(got, strings.TrimSpace(r.Ref+" "+r.Version))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("roots:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}

			yml := filepath.Join(dir, "Chart.yaml")
			data, err := os.ReadFile(yml)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), tc.edit[0]) {
				t.Fatalf("Chart.yaml has no %q:\n%s", tc.edit[0], data)
			}
			if err := os.WriteFile(yml, []byte(strings.Replace(string(data), tc.edit[0], tc.edit[1], 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := helm.New().ReadInput(dir, nil, nil); err == nil || !strings.Contains(err.Error(), "out of sync") {
				t.Errorf("Chart.yaml edited after the lock: %v", err)
			}
		})
	}
}

// TestReadInputHelmVendored: after Helm's own `helm dependency update`
// filled charts/, every dependency is vendored: the chart renders what
// is vendored, as `helm template` does without reading Chart.lock (helm's
// pkg/action/install.go CheckDependencies), so no dependency is a root,
// even for an "@alias" no repositories.yaml names any more; one not
// vendored is a root again, at its locked version.
func TestReadInputHelmVendored(t *testing.T) {
	s := newChartSources(t)
	dir, err := charttest.SaveChartDir(charttest.Chart(charttest.ChartSpec{Name: "app", Version: "0.1.0", Dependencies: []*chart.Dependency{
		{Name: "redis", Version: "^1.0.0", Repository: s.oci},
		{Name: "db", Version: "2.x", Repository: "@team"},
	}}), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.update(t, dir)
	t.Setenv("HELM_REPOSITORY_CONFIG", filepath.Join(t.TempDir(), "none.yaml"))
	roots := func() []string {
		t.Helper()
		m, ok, err := helm.New().ReadInput(dir, nil, nil)
		if err != nil || !ok {
			t.Fatalf("ReadInput = %v, %v", ok, err)
		}
		cf, err := helm.New().Configure(m)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := cf.(helm.Format).SectionRoots(m)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.Ref)
		}
		return out
	}
	if got := roots(); len(got) != 0 {
		t.Errorf("every dependency vendored: roots %v", got)
	}
	if err := os.Remove(filepath.Join(dir, "charts", "redis-1.1.0.tgz")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HELM_REPOSITORY_CONFIG", s.repoConfig)
	if got, want := strings.Join(roots(), " "), strings.TrimPrefix(s.oci, "oci://")+"/redis:1.1.0"; got != want {
		t.Errorf("redis not vendored: roots %s, want %s", got, want)
	}
}
