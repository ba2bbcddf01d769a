package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/cli"
	"helm.sh/helm/v4/pkg/downloader"
	"helm.sh/helm/v4/pkg/getter"

	"github.com/ferryhq/ferry/helm"
	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/clitest"
	forkloader "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/loader"
	"github.com/ferryhq/ferry/internal/tooltest"
)

// TestHelmHandOff: with every source stopped (the OCI registry and the
// classic repository), `ferry install` leaves helm/web-VERSION/, whose
// Chart.yaml and Chart.lock name the mirror; helm's own `helm dependency
// build` (pkg/downloader Manager.Build, which checks Chart.lock's digest
// against Chart.yaml first) fetches every dependency from the mirror, and
// the chart then passes `helm install`'s dependency check
// (pkg/action/install.go CheckDependencies) and renders.
func TestHelmHandOff(t *testing.T) {
	t.Parallel()
	w := newHelmWorld(t)
	env := clitest.New(t)
	env.WriteFile("ferry.yaml", w.ferryYAML(""))
	env.MustRun("lock")
	env.MustRun("mirror", "--to", w.mirror.Host+"/m")
	w.src.Stop()
	w.repo.srv.Close()

	dest := env.Path("installed")
	env.MustRun("install", "--dest", dest)
	chartDir := filepath.Join(dest, helm.HandOffDir, "web-1.0.0+build.1")
	chartYAML, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(chartYAML), w.src.Host) || strings.Contains(string(chartYAML), "@example") {
		t.Errorf("Chart.yaml still names a source:\n%s", chartYAML)
	}
	if !strings.Contains(string(chartYAML), "oci://"+w.mirror.Host+"/m/charts") {
		t.Errorf("Chart.yaml does not name the mirror:\n%s", chartYAML)
	}

	// Real helm v3 (built by scripts/tools.sh; FERRY_INTEROP=1, make interop:
	// skipped otherwise), on a copy: `helm
	// dependency build --plain-http` with empty helm homes, the sources
	// stopped.
	v3Dir := filepath.Join(t.TempDir(), "web")
	if err := os.CopyFS(v3Dir, os.DirFS(chartDir)); err != nil {
		t.Fatal(err)
	}
	helm3 := tooltest.Path(t, "helm-v3", "v3.22", "version", "--short")
	v3Home := t.TempDir()
	cmd := exec.Command(helm3, "dependency", "build", "--plain-http", v3Dir)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(v3Home, "cache"), "HELM_CONFIG_HOME="+filepath.Join(v3Home, "config"),
		"HELM_DATA_HOME="+filepath.Join(v3Home, "data"), "HELM_REGISTRY_CONFIG="+filepath.Join(v3Home, "registry.json"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helm v3 dependency build: %v\n%s", err, out)
	}
	var v3Got []string
	v3Entries, err := os.ReadDir(filepath.Join(v3Dir, "charts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range v3Entries {
		v3Got = append(v3Got, e.Name())
	}
	sort.Strings(v3Got)
	if want := []string{"common-0.2.0.tgz", "redis-1.1.0.tgz", "redis-2.0.0.tgz", "sidecar"}; strings.Join(v3Got, " ") != strings.Join(want, " ") {
		t.Errorf("charts/ after helm v3 dependency build: %v, want %v", v3Got, want)
	}

	// helm dependency build, with an empty repositories.yaml: nothing but
	// the mirror can answer.
	home := t.TempDir()
	repoConfig := filepath.Join(home, "repositories.yaml")
	if err := os.WriteFile(repoConfig, []byte("apiVersion: \"\"\nrepositories: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hc, err := charttest.HelmClient()
	if err != nil {
		t.Fatal(err)
	}
	settings := cli.New()
	settings.RepositoryConfig = repoConfig
	settings.RepositoryCache = filepath.Join(home, "cache")
	var out bytes.Buffer
	m := &downloader.Manager{
		Out:              &out,
		ChartPath:        chartDir,
		Getters:          getter.All(settings),
		RegistryClient:   hc,
		RepositoryConfig: repoConfig,
		RepositoryCache:  settings.RepositoryCache,
		ContentCache:     filepath.Join(home, "content"),
	}
	if err := m.Build(); err != nil {
		t.Fatalf("helm dependency build %s: %v\n%s", chartDir, err, out.String())
	}
	var got []string
	entries, err := os.ReadDir(filepath.Join(chartDir, "charts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		got = append(got, e.Name())
	}
	sort.Strings(got)
	want := []string{"common-0.2.0.tgz", "redis-1.1.0.tgz", "redis-2.0.0.tgz", "sidecar"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("charts/ after helm dependency build: %v, want %v\n%s", got, want, out.String())
	}

	ch, err := loader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	// helm install's check (pkg/action/install.go CheckDependencies, not
	// imported: pkg/action links helm's SQL release storage): every
	// Chart.yaml dependency is a loaded subchart, by name or alias.
	loaded := map[string]bool{}
	for _, sub := range ch.Dependencies() {
		loaded[sub.Name()] = true
	}
	for _, d := range ch.Metadata.Dependencies {
		if !loaded[d.Name] && (d.Alias == "" || !loaded[d.Alias]) {
			t.Errorf("helm install's dependency check: %s is missing from charts/", d.Name)
		}
	}
	// ferry renders with its fork of Helm's chart packages.
	fch, err := forkloader.LoadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	images, err := helm.Images(fch, nil)
	if err != nil {
		t.Fatalf("rendering: %v", err)
	}
	var refs []string
	for _, im := range images {
		refs = append(refs, im.Ref)
	}
	if !strings.Contains(strings.Join(refs, " "), "/images/common:1.0") {
		t.Errorf("rendered images %v lack the common chart's", images)
	}
}
