package helm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/getter"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"oras.land/oras-go/v2"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/serve"
)

// servedChart is a chart pushed with Helm's client for the serve tests.
type servedChart struct {
	repo, name, version string
	prov                bool
	created             time.Time
	archive, provData   []byte
	manifest            string // the manifest digest helm push wrote
}

// startChartServer runs `ferry serve` (serve.Start with the chart
// repository mounted at /charts/, as cmd/ferry does), pushes charts to it
// with Helm's own registry client, and binds the handler.
func startChartServer(t *testing.T, charts []*servedChart) (srv *serve.Server, root string) {
	t.Helper()
	h := NewRepoHandler()
	root = t.TempDir()
	srv, err := serve.Start(context.Background(), serve.Options{Root: root, Addr: "127.0.0.1:0", Extra: map[string]http.Handler{ChartsPath: h}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if err := h.Bind(srv.Registry()); err != nil {
		t.Fatal(err)
	}
	helm := hrHelmClient(t)
	for _, c := range charts {
		c.archive = hrChartArchive(t, c.name, c.version, "chart "+c.name+" "+c.version)
		opts := []registry.PushOption{registry.PushOptCreationTime(c.created.Format(time.RFC3339))}
		if c.prov {
			c.provData = []byte("-----BEGIN PGP SIGNED MESSAGE-----\n" + c.name + " " + c.version + "\n")
			opts = append(opts, registry.PushOptProvData(c.provData))
		}
		res, err := helm.Push(c.archive, srv.Addr+"/"+c.repo+":"+c.version, opts...)
		if err != nil {
			t.Fatalf("helm push %s: %v", c.repo, err)
		}
		c.manifest = res.Manifest.Digest
	}
	// Something that is not a chart, in a repository of its own.
	c := registrytest.Client(t)
	other := registrytest.Repository(t, c, srv.Addr+"/misc/thing")
	if _, err := oras.PackManifest(context.Background(), other, oras.PackManifestVersion1_1, "application/vnd.example.thing", oras.PackManifestOptions{}); err != nil {
		t.Fatal(err)
	}
	return srv, root
}

// helmIndex downloads base/index.yaml with Helm's own repository client
// (`helm repo add` / `helm repo update`) and loads it.
func helmIndex(t *testing.T, base string) (*repo.IndexFile, error) {
	t.Helper()
	cr, err := repo.NewChartRepository(&repo.Entry{Name: "mirror", URL: base}, getter.Getters())
	if err != nil {
		t.Fatal(err)
	}
	cr.CachePath = t.TempDir()
	p, err := cr.DownloadIndexFile()
	if err != nil {
		return nil, err
	}
	return repo.LoadIndexFile(p)
}

// helmGet downloads a URL with Helm's own HTTP getter.
func helmGet(t *testing.T, u string) ([]byte, error) {
	t.Helper()
	g, err := getter.Getters().ByScheme("http")
	if err != nil {
		t.Fatal(err)
	}
	buf, err := g.Get(u)
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// TestServeChartRepository: `ferry serve` answers a classic chart
// repository from the OCI charts it stores: Helm's repository client
// reads its index.yaml and downloads each chart and provenance file, which
// are the bytes helm pushed; something that is not a chart is not listed.
func TestServeChartRepository(t *testing.T) {
	charts := []*servedChart{
		{repo: "mirror/charts/nginx", name: "nginx", version: "1.0.0", created: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)},
		{repo: "mirror/charts/nginx", name: "nginx", version: "1.1.0+build.1", prov: true, created: time.Date(2024, 2, 2, 3, 4, 5, 0, time.UTC)},
		{repo: "acme/redis", name: "redis", version: "2.0.0", created: time.Date(2024, 3, 2, 3, 4, 5, 0, time.UTC)},
	}
	srv, _ := startChartServer(t, charts)
	base := "http://" + srv.Addr + "/charts"
	idx, err := helmIndex(t, base)
	if err != nil {
		t.Fatalf("helm repo add %s: %v", base, err)
	}
	var names []string
	for n := range idx.Entries {
		names = append(names, n)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"nginx", "redis"}) {
		t.Errorf("index lists %v, want nginx and redis", names)
	}
	if vs := idx.Entries["nginx"]; len(vs) != 2 || vs[0].Version != "1.1.0+build.1" || vs[1].Version != "1.0.0" {
		t.Errorf("nginx versions are not 1.1.0+build.1, 1.0.0 (newest first): %+v", vs)
	}
	for _, c := range charts {
		t.Run(c.name+"-"+c.version, func(t *testing.T) {
			cv, err := idx.Get(c.name, c.version)
			if err != nil {
				t.Fatal(err)
			}
			if cv.Digest != hrDigest(t, c.archive) {
				t.Errorf("index digest %s, want the .tgz's %s", cv.Digest, hrDigest(t, c.archive))
			}
			if !cv.Created.Equal(c.created) {
				t.Errorf("index created %s, want %s", cv.Created, c.created)
			}
			if want := c.name + "-" + c.version + ".tgz"; !slices.Equal(cv.URLs, []string{want}) {
				t.Errorf("urls %v, want [%s]", cv.URLs, want)
			}
			u, err := repo.ResolveReferenceURL(base, cv.URLs[0])
			if err != nil {
				t.Fatal(err)
			}
			data, err := helmGet(t, u)
			if err != nil {
				t.Fatalf("GET %s: %v", u, err)
			}
			if !bytes.Equal(data, c.archive) {
				t.Error("downloaded .tgz is not the pushed chart")
			}
			ch, err := loader.LoadArchive(bytes.NewReader(data))
			if err != nil || ch.Metadata.Name != c.name || ch.Metadata.Version != c.version {
				t.Errorf("loading the download: %v", err)
			}
			prov, err := helmGet(t, u+".prov")
			switch {
			case c.prov && err != nil:
				t.Errorf("GET .prov: %v", err)
			case c.prov && !bytes.Equal(prov, c.provData):
				t.Error(".prov is not the pushed provenance")
			case !c.prov && (err == nil || !strings.Contains(err.Error(), "404")):
				t.Errorf("GET .prov of a chart without one: %v, want 404", err)
			}
		})
	}
	for _, p := range []string{"/charts/nginx-9.9.9.tgz", "/charts/thing-1.0.0.tgz", "/charts/misc", "/charts/nginx-1.0.0.zip"} {
		resp, err := http.Get("http://" + srv.Addr + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", p, resp.Status)
		}
	}
}

// TestServeChartRepositoryChecks: with a lock, only the locked charts are
// listed and downloadable (others: 404 saying why, and a log line); a
// chart whose stored layer was altered is cut off, whatever the lock.
func TestServeChartRepositoryChecks(t *testing.T) {
	charts := []*servedChart{
		{repo: "m/charts/nginx", name: "nginx", version: "1.0.0", created: time.Unix(1700000000, 0).UTC()},
		{repo: "m/charts/nginx", name: "nginx", version: "1.1.0", created: time.Unix(1700000100, 0).UTC()},
		{repo: "m/charts/redis", name: "redis", version: "2.0.0", created: time.Unix(1700000200, 0).UTC()},
	}
	srv, root := startChartServer(t, charts)
	l := &lock.Lock{Packages: []lock.Package{
		{Source: "https://charts.example.com/nginx", Kind: format.KindHelmChart, Version: "1.0.0", Digest: charts[0].manifest, Mirror: "mirror.example.com/m/charts/nginx"},
		{Source: "https://charts.example.com/redis", Kind: format.KindHelmChart, Version: "2.0.0", Digest: charts[2].manifest, Mirror: "mirror.example.com/m/charts/redis"},
		// Another kind with nginx 1.1.0's digest does not unlock it.
		{Source: "example.com/x", Kind: format.KindArtifact, Digest: charts[1].manifest},
	}}
	var mu sync.Mutex
	var logged []string
	locked := NewRepoHandler()
	if err := locked.BindLocked(srv.Registry(), l, func(f string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(f, args...))
	}); err != nil {
		t.Fatal(err)
	}
	ls := httptest.NewServer(locked)
	t.Cleanup(ls.Close)

	// Tamper with redis's stored chart layer, keeping its size.
	layer := hrDigest(t, charts[2].archive)
	p := filepath.Join(root, "docker", "registry", "v2", "blobs", "sha256", layer[:2], layer, "data")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-10] ^= 0xff
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}

	idx, err := helmIndex(t, ls.URL+"/charts")
	if err != nil {
		t.Fatal(err)
	}
	if vs := idx.Entries["nginx"]; len(vs) != 1 || vs[0].Version != "1.0.0" {
		t.Errorf("locked index lists nginx %+v, want 1.0.0 only", vs)
	}
	tests := []struct {
		name, base, file string
		wantErr          string // "" : the download is the pushed archive
		archive          []byte
	}{
		{name: "locked", base: ls.URL, file: "nginx-1.0.0.tgz", archive: charts[0].archive},
		{name: "not locked", base: ls.URL, file: "nginx-1.1.0.tgz", wantErr: "404"},
		{name: "unlocked server serves it", base: "http://" + srv.Addr, file: "nginx-1.1.0.tgz", archive: charts[1].archive},
		{name: "altered layer, locked", base: ls.URL, file: "redis-2.0.0.tgz", wantErr: "EOF"},
		{name: "altered layer, unlocked", base: "http://" + srv.Addr, file: "redis-2.0.0.tgz", wantErr: "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := helmGet(t, tt.base+"/charts/"+tt.file)
			if tt.wantErr == "" {
				if err != nil || !bytes.Equal(data, tt.archive) {
					t.Errorf("GET %s: %v (%d bytes), want the pushed archive", tt.file, err, len(data))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("GET %s: %v (%d bytes), want an error mentioning %q", tt.file, err, len(data), tt.wantErr)
			}
		})
	}
	resp, err := http.Get(ls.URL + "/charts/nginx-1.1.0.tgz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "the lock holds") {
		t.Errorf("unlocked chart: %s %q, want 404 saying why", resp.Status, body)
	}
	mu.Lock()
	defer mu.Unlock()
	joined := strings.Join(logged, "\n")
	for _, w := range []string{"chart index: leaving out chart nginx 1.1.0", "chart download refused: chart nginx 1.1.0", "chart download cut off: m/charts/redis"} {
		if !strings.Contains(joined, w) {
			t.Errorf("log %q does not say %q", joined, w)
		}
	}
}
