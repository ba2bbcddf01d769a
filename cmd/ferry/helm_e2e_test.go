package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/ferryhq/ferry/helm"
	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	forkloader "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/loader"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
)

// chartCreated is the creation time every fixture chart records.
var chartCreated = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// chartRepoServer serves a classic Helm repository (index.yaml and .tgz
// files) on 127.0.0.1, and can be stopped.
type chartRepoServer struct {
	srv   *httptest.Server
	mu    sync.Mutex
	files map[string][]byte
}

func newChartRepoServer(t *testing.T) *chartRepoServer {
	t.Helper()
	s := &chartRepoServer{files: map[string][]byte{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		data, ok := s.files[strings.TrimPrefix(r.URL.Path, "/")]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	})}}
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	return s
}

// publish writes archives (name -> .tgz) and their index.yaml.
func (s *chartRepoServer) publish(t *testing.T, archives map[string][]byte) {
	t.Helper()
	idx, err := charttest.ChartIndex(archives, s.srv.URL, chartCreated)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, data := range archives {
		s.files[name] = data
	}
	s.files["index.yaml"] = idx
}

func (s *chartRepoServer) set(name string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[name] = data
}

// helmWorld is a source registry with charts and the images they deploy,
// a classic chart repository, and an empty mirror.
type helmWorld struct {
	src, mirror *registrytest.Registry
	repo        *chartRepoServer
	// images maps a name to the image reference pushed for it.
	images map[string]string
}

func deployment(name, image string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
spec:
  template:
    spec:
      initContainers:
        - name: init
          image: %s
      containers:
        - name: main
          image: %s
`, name, image, image)
}

func newHelmWorld(t *testing.T) *helmWorld {
	t.Helper()
	ctx := context.Background()
	w := &helmWorld{src: registrytest.New(t), mirror: registrytest.New(t), repo: newChartRepoServer(t), images: map[string]string{}}
	c := registrytest.Client(t)
	for _, name := range []string{"web", "redis", "metrics", "common", "sidecar", "worker", "cron"} {
		ref := w.src.Host + "/images/" + name + ":1.0"
		repo := registrytest.Repository(t, c, w.src.Host+"/images/"+name)
		desc, err := fixture.PushImage(ctx, repo, "helm-"+name, 512)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.Tag(ctx, desc, "1.0"); err != nil {
			t.Fatal(err)
		}
		w.images[name] = ref
	}
	// redis 2.x deploys another image of the same repository: one image
	// repository locked at two tags.
	redis2 := registrytest.Repository(t, c, w.src.Host+"/images/redis")
	desc, err := fixture.PushImage(ctx, redis2, "helm-redis-2", 512)
	if err != nil {
		t.Fatal(err)
	}
	if err := redis2.Tag(ctx, desc, "2.0"); err != nil {
		t.Fatal(err)
	}
	charts := w.src.Host + "/charts"
	push := func(ch *chart.Chart) {
		t.Helper()
		tgz, err := charttest.ChartArchive(ch)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := charttest.PushChart(tgz, charts, chartCreated); err != nil {
			t.Fatal(err)
		}
	}
	// metrics: two levels below web.
	push(charttest.Chart(charttest.ChartSpec{Name: "metrics", Version: "1.0.0", Templates: map[string]string{"d.yaml": deployment("metrics", w.images["metrics"])}}))
	// redis 1.0.0, 1.1.0 (chosen by ^1.0.0) and 2.0.0.
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		image := w.images["redis"]
		if v == "2.0.0" {
			image = w.src.Host + "/images/redis:2.0"
		}
		push(charttest.Chart(charttest.ChartSpec{
			Name: "redis", Version: v,
			Dependencies: []*chart.Dependency{{Name: "metrics", Version: "1.0.0", Repository: "oci://" + charts}},
			Templates:    map[string]string{"d.yaml": deployment("redis", image)},
		}))
	}
	// common, in the classic repository; its image is set by values.
	var archives = map[string][]byte{}
	for _, v := range []string{"0.1.0", "0.2.0"} {
		tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{
			Name: "common", Version: v,
			Values:    map[string]any{"image": map[string]any{"repository": w.src.Host + "/images/common", "tag": "1.0"}},
			Templates: map[string]string{"d.yaml": deployment("common", "{{ .Values.image.repository }}:{{ .Values.image.tag }}")},
		}))
		if err != nil {
			t.Fatal(err)
		}
		archives["common-"+v+".tgz"] = tgz
	}
	w.repo.publish(t, archives)
	// web: a +build version, an OCI dependency with a range, an aliased
	// one disabled by a condition, a classic-repository dependency by
	// alias, and a vendored subchart with its own image.
	sidecar := charttest.Chart(charttest.ChartSpec{Name: "sidecar", Version: "0.1.0", Templates: map[string]string{"d.yaml": deployment("sidecar", w.images["sidecar"])}})
	push(charttest.Chart(charttest.ChartSpec{
		Name: "web", Version: "1.0.0+build.1",
		Dependencies: []*chart.Dependency{
			{Name: "redis", Version: "^1.0.0", Repository: "oci://" + charts},
			{Name: "redis", Alias: "cache", Version: "2.0.0", Repository: "oci://" + charts, Condition: "cache.enabled"},
			{Name: "common", Version: "0.x", Repository: "@example"},
			{Name: "sidecar", Version: "0.1.0"},
		},
		Values: map[string]any{"cache": map[string]any{"enabled": false}},
		Templates: map[string]string{
			"d.yaml":    deployment("web", w.images["web"]),
			"w.yaml":    "apiVersion: v1\nkind: Pod\nmetadata: {name: w}\nspec:\n  containers:\n    - {name: w, image: " + w.images["worker"] + "}\n",
			"cron.yaml": "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n            - {name: c, image: " + w.images["cron"] + "}\n",
		},
		Vendored: []*chart.Chart{sidecar},
	}))
	return w
}

func (w *helmWorld) ferryYAML(extra string) string {
	return `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
charts:
  - ref: oci://` + w.src.Host + `/charts/web
    version: ">=1.0.0-0"
helm:
  repositories:
    example: ` + w.repo.srv.URL + `
` + extra
}

// TestHelmClosure: an OCI chart with an OCI dependency chosen by a range
// (and its own dependency, two levels deep), an aliased dependency
// disabled by a condition, a dependency in a classic repository named by
// an alias, a vendored subchart, a +build version and images set by
// values are locked, mirrored, verified and installed; with the sources
// stopped, Helm's own client pulls and renders the mirrored charts.
func TestHelmClosure(t *testing.T) {
	t.Parallel()
	w := newHelmWorld(t)
	env := clitest.New(t)
	env.WriteFile("ferry.yaml", w.ferryYAML("exclude: ["+w.src.Host+"/images/worker]\n"))
	env.MustRun("lock")
	l, err := lock.Read(env.Path("ferry.lock"))
	if err != nil {
		t.Fatal(err)
	}
	charts := w.src.Host + "/charts/"
	want := map[string]string{ // source -> version
		charts + "web":             "1.0.0_build.1",
		charts + "redis":           "",
		charts + "metrics":         "1.0.0",
		w.repo.srv.URL + "/common": "0.2.0",
	}
	got := map[string][]string{}
	kinds := map[string]int{}
	for _, p := range l.Resolved() {
		got[p.Source] = append(got[p.Source], p.Version)
		kinds[p.Kind]++
	}
	for src, v := range want {
		if len(got[src]) == 0 || (v != "" && got[src][0] != v) {
			t.Errorf("lock: %s at %v, want %q", src, got[src], v)
		}
	}
	if vs := strings.Join(got[charts+"redis"], ","); !strings.Contains(vs, "1.1.0") || !strings.Contains(vs, "2.0.0") {
		t.Errorf("redis locked at %s, want 1.1.0 (^1.0.0) and 2.0.0 (the disabled alias is still mirrored)", vs)
	}
	for _, name := range []string{"web", "redis", "metrics", "common", "sidecar", "cron"} {
		src := w.src.Host + "/images/" + name
		if len(got[src]) == 0 {
			t.Errorf("image %s not locked", src)
		}
		for _, p := range l.Resolved() {
			if p.Source == src && p.Kind != "image" {
				t.Errorf("image %s: kind %s, want image", src, p.Kind)
			}
		}
	}
	if vs := strings.Join(got[w.src.Host+"/images/redis"], ","); !strings.Contains(vs, "1.0") || !strings.Contains(vs, "2.0") {
		t.Errorf("images/redis locked at %s, want 1.0 and 2.0", vs)
	}
	// A classic repository's chart records the archive's sha256, the
	// digest its index.yaml gives.
	if p := l.PackageAt(w.repo.srv.URL+"/common", l.Package(w.repo.srv.URL+"/common").Digest); p == nil || !strings.HasPrefix(p.Attributes["chartDigest"], "sha256:") {
		t.Errorf("common: no chartDigest recorded: %+v", p)
	}
	// exclude: an image never locked.
	if p := l.Package(w.src.Host + "/images/worker"); p != nil {
		t.Errorf("excluded image locked: %+v", p)
	}
	if kinds["helm.chart"] < 5 {
		t.Errorf("kinds: %v", kinds)
	}
	// ferry why names the chart and the template.
	why := env.MustRun("why", w.src.Host+"/images/sidecar")
	if !strings.Contains(why.Stdout+why.Stderr, "sidecar/templates/d.yaml") || !strings.Contains(why.Stdout+why.Stderr, "web") {
		t.Errorf("why: %s%s", why.Stdout, why.Stderr)
	}

	env.MustRun("mirror", "--to", w.mirror.Host+"/m")
	env.MustRun("verify", "--deep", "--mirror", w.mirror.Host+"/m")
	env.MustRun("mirror", "--to-archive", "charts.tar")
	w.src.Stop()
	w.repo.srv.Close()

	// Across the gap: the archive imports into another registry.
	air := registrytest.New(t)
	env.MustRun("mirror", "--from-archive", "charts.tar", "--to", air.Host+"/air")
	env.MustRun("verify", "--deep", "--mirror", air.Host+"/air")
	// The mirror alone resolves the closure, classic repository included.
	env.MustRun("verify", "--resolve", "--mirror", air.Host+"/air")

	// Helm's own client pulls the mirrored charts, which render.
	hc, err := charttest.HelmClient()
	if err != nil {
		t.Fatal(err)
	}
	for ref, name := range map[string]string{
		w.mirror.Host + "/m/charts/web:1.0.0_build.1": "web",
		w.mirror.Host + "/m/charts/common:0.2.0":      "common",
	} {
		res, err := hc.Pull(ref)
		if err != nil {
			t.Fatalf("helm pull %s: %v", ref, err)
		}
		// ferry renders with its fork of Helm's chart packages.
		ch, err := forkloader.LoadArchive(bytes.NewReader(res.Chart.Data))
		if err != nil || ch.Name() != name {
			t.Fatalf("helm pull %s: %v %v", ref, ch, err)
		}
		if _, err := helm.Images(ch, nil); err != nil {
			t.Errorf("rendering %s: %v", ref, err)
		}
	}
	dest := env.Path("installed")
	env.MustRun("install", "--dest", dest, "--mirror", w.mirror.Host+"/m")
	for _, f := range []string{"charts/web-1.0.0+build.1.tgz", "charts/common-0.2.0.tgz", "charts/metrics-1.0.0.tgz"} {
		data, err := os.ReadFile(filepath.Join(dest, f))
		if err != nil {
			t.Errorf("install: %v", err)
			continue
		}
		if _, err := loader.LoadArchive(bytes.NewReader(data)); err != nil {
			t.Errorf("install %s: %v", f, err)
		}
	}
}

// TestHelmBadInput: each bad chart input is a clear error naming the
// chart and the chain, with the exit code PRODUCT.md gives, and no lock.
func TestHelmBadInput(t *testing.T) {
	t.Parallel()
	w := newHelmWorld(t)
	charts := w.src.Host + "/charts"
	push := func(ch *chart.Chart) {
		t.Helper()
		tgz, err := charttest.ChartArchive(ch)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := charttest.PushChart(tgz, charts, chartCreated); err != nil {
			t.Fatal(err)
		}
	}
	push(charttest.Chart(charttest.ChartSpec{Name: "noimage", Version: "1.0.0", Templates: map[string]string{"d.yaml": deployment("x", w.src.Host+"/images/missing:9.9")}}))
	push(charttest.Chart(charttest.ChartSpec{Name: "fails", Version: "1.0.0", Templates: map[string]string{"d.yaml": `{{ required "tag is required" .Values.tag }}`}}))
	push(charttest.Chart(charttest.ChartSpec{Name: "badrange", Version: "1.0.0", Dependencies: []*chart.Dependency{{Name: "redis", Version: "not a range", Repository: "oci://" + charts}}}))
	push(charttest.Chart(charttest.ChartSpec{Name: "parent", Version: "1.0.0", Dependencies: []*chart.Dependency{{Name: "noimage", Version: "1.x", Repository: "oci://" + charts}}}))
	// Not a chart: Helm's media types over bytes that are no chart.
	ctx := context.Background()
	notChart := registrytest.Repository(t, registrytest.Client(t), charts+"/notchart")
	layer, err := oras.PushBytes(ctx, notChart, helm.ChartLayerMediaType, []byte("not a tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := oras.PushBytes(ctx, notChart, helm.ConfigMediaType, []byte(`{"name":"notchart","version":"1.0.0"}`))
	if err != nil {
		t.Fatal(err)
	}
	man, err := oras.PackManifest(ctx, notChart, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{ConfigDescriptor: &cfg, Layers: []ocispec.Descriptor{layer}})
	if err != nil {
		t.Fatal(err)
	}
	if err := notChart.Tag(ctx, man, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	// A classic repository whose index.yaml is not one.
	bad := newChartRepoServer(t)
	bad.set("index.yaml", []byte("entries: [this is: not an index"))
	// A classic repository whose archive does not match its index.
	good, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "tampered", Version: "1.0.0"}))
	if err != nil {
		t.Fatal(err)
	}
	w.repo.publish(t, map[string][]byte{"tampered-1.0.0.tgz": good})
	other, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "tampered", Version: "1.0.0", AppVersion: "evil"}))
	if err != nil {
		t.Fatal(err)
	}
	w.repo.set("tampered-1.0.0.tgz", other)

	for _, tc := range []struct {
		name  string
		chart string
		code  int
		want  []string
	}{
		{"missing image", "ref: oci://" + charts + "/noimage", 1, []string{"noimage", "templates/d.yaml", "images/missing:9.9"}},
		{"missing image two levels down", "ref: oci://" + charts + "/parent", 1, []string{"parent", "noimage", "templates/d.yaml"}},
		{"template fails", "ref: oci://" + charts + "/fails", 1, []string{"fails", "templates/d.yaml", "tag is required"}},
		{"local chart that fails", "LOCAL", 2, []string{"local", "templates/d.yaml", "tag is required"}},
		{"invalid range", "ref: oci://" + charts + "/badrange", 1, []string{"badrange", "redis", "not a range"}},
		{"not a chart", "ref: oci://" + charts + "/notchart:1.0.0", 1, []string{"notchart", "not a chart"}},
		{"malformed index", "repo: " + bad.srv.URL + "\n    name: web", 1, []string{bad.srv.URL, "index.yaml"}},
		{"index digest mismatch", "repo: " + w.repo.srv.URL + "\n    name: tampered", 3, []string{"tampered", "1.0.0", "digest"}},
		// Credentials in a repository URL are refused and never printed
		// (the check below looks for the password).
		{"credentials in a repository URL", "repo: https://ada:s3cr3t-pw@charts.example.com\n    name: web", 2, []string{"REDACTED@charts.example.com", "credentials"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := clitest.New(t)
			args := []string{"lock"}
			if tc.chart == "LOCAL" {
				// A chart being built, given as its directory.
				if _, err := charttest.SaveChartDir(charttest.Chart(charttest.ChartSpec{Name: "local", Version: "0.1.0", Templates: map[string]string{"d.yaml": `{{ required "tag is required" .Values.tag }}`}}), env.Dir); err != nil {
					t.Fatal(err)
				}
				args = append(args, "local")
			} else {
				env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\ncharts:\n  - "+tc.chart+"\n")
			}
			r := env.Expect(tc.code, args, tc.want...)
			if strings.Contains(r.Stdout+r.Stderr, "s3cr3t-pw") {
				t.Errorf("a credential was printed:\n%s", r.Stdout+r.Stderr)
			}
			if _, err := os.Stat(env.Path("ferry.lock")); err == nil {
				t.Error("a lock was written")
			}
		})
	}
}
