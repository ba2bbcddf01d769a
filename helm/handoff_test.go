package helm

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/cli"
	"helm.sh/helm/v4/pkg/downloader"
	"helm.sh/helm/v4/pkg/getter"

	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/loader"
	"github.com/ferryhq/ferry/lock"
)

// TestWriteHandOff pins the chart copy install writes for helm: each
// dependency ferry resolved points at `oci://` + the mirror repository's
// parent (helm's pkg/downloader/manager.go findChartURL appends the
// chart's name to an OCI repository), vendored ones at "" (downloadAll:
// "did not declare a repository. Assuming it exists in the charts
// directory") with vendored archives unpacked into charts/NAME/, and
// Chart.lock lists each at the locked version (helm's
// internal/resolver/resolver.go Resolve) under the digest helm's Build
// checks (internal/resolver/resolver.go HashReq over the files as
// pkg/chart/v2/loader reads them). Where every dependency is vendored,
// helm's own Manager.Build runs on the copy with no repository at all.
func TestWriteHandOff(t *testing.T) {
	archive := func(t *testing.T, ch *chart.Chart) []byte {
		t.Helper()
		data, err := charttest.ChartArchive(ch)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	sub := func(name, version string) *chart.Chart {
		return charttest.Chart(charttest.ChartSpec{Name: name, Version: version, Templates: map[string]string{"d.yaml": "kind: ConfigMap\n"}})
	}
	const mirror = "mirror.example:5000/m/charts"
	charts := map[string]installedChart{
		"src.example/charts/redis@sha256:a":    {name: "redis", version: "1.1.0", mirrorRepo: mirror + "/redis"},
		"src.example/charts/redis@sha256:b":    {name: "redis", version: "2.0.0", mirrorRepo: mirror + "/redis"},
		"https://repo.example/common@sha256:c": {name: "common", version: "0.2.0", mirrorRepo: mirror + "/common"},
		"src.example/charts/odd@sha256:d":      {name: "odd", version: "1.0.0", mirrorRepo: mirror + "/renamed"},
	}
	tests := []struct {
		name     string
		chart    func(t *testing.T) *chart.Chart
		deps     []lock.Dependency
		wantYAML []string // substrings of the copy's Chart.yaml
		wantLock []string // "NAME REPOSITORY VERSION" of Chart.lock, in order; nil: no Chart.lock
		files    []string // more files the copy must hold
		build    bool     // run helm's Manager.Build on the copy
		wantNote string   // helm/NAME-VERSION.txt instead of a copy
	}{
		{
			name: "OCI range, an alias of the same chart, a classic repository by alias",
			chart: func(t *testing.T) *chart.Chart {
				return charttest.Chart(charttest.ChartSpec{Name: "web", Version: "1.0.0+build.1", Dependencies: []*chart.Dependency{
					{Name: "redis", Version: "^1.0.0", Repository: "oci://src.example/charts"},
					{Name: "redis", Alias: "cache", Version: "2.0.0", Repository: "oci://src.example/charts", Condition: "cache.enabled"},
					{Name: "common", Version: "0.x", Repository: "@example"},
				}})
			},
			deps: []lock.Dependency{
				{Name: "redis", Resolved: "src.example/charts/redis@sha256:b"},
				{Name: "redis", Resolved: "src.example/charts/redis@sha256:a"},
				{Name: "common", Resolved: "https://repo.example/common@sha256:c"},
			},
			wantYAML: []string{"repository: oci://" + mirror, "alias: cache", "condition: cache.enabled", "version: ^1.0.0"},
			wantLock: []string{"redis oci://" + mirror + " 1.1.0", "redis oci://" + mirror + " 2.0.0", "common oci://" + mirror + " 0.2.0"},
		},
		{
			name: "vendored directory and archive, helm dependency build accepts the lock",
			chart: func(t *testing.T) *chart.Chart {
				ch := charttest.Chart(charttest.ChartSpec{Name: "app", Version: "0.1.0",
					Dependencies: []*chart.Dependency{
						{Name: "side", Version: "0.1.0", Repository: "file://../side"},
						{Name: "db", Version: "~0.3.0", Repository: "https://repo.example"},
					},
					Vendored: []*chart.Chart{sub("side", "0.1.0")}})
				ch.Files = append(ch.Files, &common.File{Name: "charts/db-0.3.1.tgz", Data: archive(t, sub("db", "0.3.1"))})
				return ch
			},
			wantYAML: []string{`repository: ""`},
			wantLock: []string{"side  0.1.0", "db  ~0.3.0"},
			files:    []string{"charts/side/Chart.yaml", "charts/db/Chart.yaml", "charts/db/templates/d.yaml"},
			build:    true,
		},
		{
			name: "no dependencies: copied as is",
			chart: func(t *testing.T) *chart.Chart {
				return sub("plain", "1.0.0")
			},
			files: []string{"templates/d.yaml"},
		},
		{
			name: "a mirror repository not named after the chart",
			chart: func(t *testing.T) *chart.Chart {
				return charttest.Chart(charttest.ChartSpec{Name: "x", Version: "1.0.0", Dependencies: []*chart.Dependency{{Name: "odd", Version: "1.0.0", Repository: "oci://src.example/charts"}}})
			},
			deps:     []lock.Dependency{{Name: "odd", Resolved: "src.example/charts/odd@sha256:d"}},
			wantNote: `dependency "odd": mirrored to ` + mirror + "/renamed",
		},
		{
			name: "a dependency the lock does not resolve",
			chart: func(t *testing.T) *chart.Chart {
				return charttest.Chart(charttest.ChartSpec{Name: "x", Version: "1.0.0", Dependencies: []*chart.Dependency{{Name: "redis", Version: "^3.0.0", Repository: "oci://src.example/charts"}}})
			},
			deps:     []lock.Dependency{{Name: "redis", Resolved: "src.example/charts/redis@sha256:a"}},
			wantNote: `dependency "redis": the lock resolves it to no installed chart of version "^3.0.0"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := tt.chart(t)
			data := archive(t, ch)
			dir := t.TempDir()
			err := writeHandOff(dir, &lock.Package{Dependencies: tt.deps}, data, charts, map[string]bool{})
			if err != nil {
				t.Fatal(err)
			}
			copyDir := filepath.Join(dir, HandOffDir, ch.Name()+"-"+ch.Metadata.Version)
			if tt.wantNote != "" {
				note, err := os.ReadFile(copyDir + ".txt")
				if err != nil || !strings.Contains(string(note), tt.wantNote) {
					t.Fatalf("note %q (%v), want it to contain %q", note, err, tt.wantNote)
				}
				if _, err := os.Stat(copyDir); !os.IsNotExist(err) {
					t.Errorf("a copy was written beside the note: %v", err)
				}
				return
			}
			chartYAML, err := os.ReadFile(filepath.Join(copyDir, "Chart.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.wantYAML {
				if !strings.Contains(string(chartYAML), s) {
					t.Errorf("Chart.yaml lacks %q:\n%s", s, chartYAML)
				}
			}
			for _, f := range tt.files {
				if _, err := os.Stat(filepath.Join(copyDir, f)); err != nil {
					t.Errorf("copy lacks %s: %v", f, err)
				}
			}
			// Read back as helm reads a chart directory.
			got, err := loader.LoadDir(copyDir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantLock == nil {
				if got.Lock != nil {
					t.Errorf("a Chart.lock was written: %+v", got.Lock)
				}
				return
			}
			if got.Lock == nil {
				t.Fatal("no Chart.lock")
			}
			var lines []string
			for _, d := range got.Lock.Dependencies {
				lines = append(lines, d.Name+" "+d.Repository+" "+d.Version)
			}
			if strings.Join(lines, "\n") != strings.Join(tt.wantLock, "\n") {
				t.Errorf("Chart.lock:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(tt.wantLock, "\n"))
			}
			if sum, err := hashReq(got.Metadata.Dependencies, got.Lock.Dependencies); err != nil || sum != got.Lock.Digest {
				t.Errorf("Chart.lock digest %s, helm's hash of the copy %s (%v)", got.Lock.Digest, sum, err)
			}
			if !tt.build {
				return
			}
			home := t.TempDir()
			settings := cli.New()
			settings.RepositoryConfig = filepath.Join(home, "repositories.yaml")
			settings.RepositoryCache = filepath.Join(home, "cache")
			var out bytes.Buffer
			m := &downloader.Manager{Out: &out, ChartPath: copyDir, Getters: getter.All(settings), RepositoryConfig: settings.RepositoryConfig, RepositoryCache: settings.RepositoryCache, SkipUpdate: true}
			if err := m.Build(); err != nil {
				t.Fatalf("helm dependency build: %v\n%s", err, out.String())
			}
		})
	}
}

// TestWriteHandOffSameNameVersion: two charts of one name and version
// (from two sources) get two folders, the second named by its digest too,
// never one folder mixing their files.
func TestWriteHandOffSameNameVersion(t *testing.T) {
	data, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "web", Version: "1.0.0"}))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	taken := map[string]bool{}
	for _, d := range []string{"sha256:" + strings.Repeat("a", 64), "sha256:" + strings.Repeat("b", 64)} {
		if err := writeHandOff(dir, &lock.Package{Digest: d}, data, nil, taken); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"web-1.0.0/Chart.yaml", "web-1.0.0-bbbbbbbbbbbb/Chart.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, HandOffDir, f)); err != nil {
			t.Error(err)
		}
	}
}
