package helm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/provenance"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/indexrepo/indexrepotest"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// hrChartArchive builds a chart with Helm's own types and writes its .tgz
// with chartutil.Save, as `helm package` does. description varies the
// bytes of two archives of one name and version.
func hrChartArchive(t *testing.T, name, version, description string) []byte {
	t.Helper()
	c := &chart.Chart{
		Metadata: &chart.Metadata{
			APIVersion:  chart.APIVersionV2,
			Name:        name,
			Version:     version,
			AppVersion:  "1.25.3",
			Description: description,
			Home:        "https://example.com/" + name,
			Sources:     []string{"https://github.com/example/" + name, "https://example.org/mirror"},
			Maintainers: []*chart.Maintainer{{Name: "Ada", Email: "ada@example.com"}, {Name: "Bob"}},
			Annotations: map[string]string{
				"category": "web",
				// Helm never lets a chart annotation replace the title.
				"org.opencontainers.image.title": "not-" + name,
			},
		},
		Values: map[string]any{"image": map[string]any{"repository": "nginx"}},
		Templates: []*common.File{{
			Name: "templates/cm.yaml",
			Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n"),
		}},
	}
	p, err := chartutil.Save(c, t.TempDir())
	if err != nil {
		t.Fatalf("saving chart %s %s: %v", name, version, err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// hrDigest returns a file's sha256 hex as Helm's index writer computes it.
func hrDigest(t *testing.T, data []byte) string {
	t.Helper()
	d, err := provenance.Digest(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// hrEntry is one chart version of an index written by hrIndex.
type hrEntry struct {
	archive []byte // the .tgz the entry describes (its metadata)
	digest  string // the digest the index records
	file    string // the file name (MustAdd's filename)
	baseURL string // "" for a URL relative to the repository
	created time.Time
}

// hrIndex writes an index.yaml with Helm's own repo.IndexFile.
func hrIndex(t *testing.T, entries ...hrEntry) []byte {
	t.Helper()
	idx := repo.NewIndexFile()
	for _, e := range entries {
		ch, err := loader.LoadArchive(bytes.NewReader(e.archive))
		if err != nil {
			t.Fatal(err)
		}
		if err := idx.MustAdd(ch.Metadata, e.file, e.baseURL, e.digest); err != nil {
			t.Fatal(err)
		}
		vs := idx.Entries[ch.Metadata.Name]
		vs[len(vs)-1].Created = e.created
	}
	p := filepath.Join(t.TempDir(), "index.yaml")
	if err := idx.WriteFile(p, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hrHelmClient returns Helm's own registry client, on plain HTTP, with no
// credentials from the machine.
func hrHelmClient(t *testing.T) *registry.Client {
	t.Helper()
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	c, err := registry.NewClient(registry.ClientOptPlainHTTP(), registry.ClientOptWriter(io.Discard),
		registry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "registry.json")))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRepoCacheMatchesHelmPush: a chart of a classic repository, opened
// as a Repository, holds for each version exactly the manifest `helm
// push` writes for the .tgz (same digest as Helm's own client pushing it
// to a real registry), lists its versions as Helm's OCI tags, and copies
// with oras to a registry from which Helm's client pulls the same .tgz.
func TestRepoCacheMatchesHelmPush(t *testing.T) {
	ctx := context.Background()
	s := indexrepotest.New(t)
	type version struct {
		version string
		tag     string
		path    string // where the .tgz is served
		file    string
		baseURL string
		prov    bool
		created time.Time
	}
	versions := []version{
		{version: "1.0.0", tag: "1.0.0", path: "/stable/nginx-1.0.0.tgz", file: "nginx-1.0.0.tgz",
			created: time.Date(2024, 3, 4, 5, 6, 7, 890, time.UTC)},
		{version: "1.1.0+build.1", tag: "1.1.0_build.1", path: "/files/nginx-1.1.0+build.1.tgz", file: "nginx-1.1.0+build.1.tgz",
			baseURL: s.URL + "/files", created: time.Date(2025, 1, 2, 3, 4, 5, 600, time.FixedZone("CET", 3600))},
		{version: "1.2.0", tag: "1.2.0", path: "/stable/nginx-1.2.0.tgz", file: "nginx-1.2.0.tgz", prov: true,
			created: time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)},
	}
	archives := map[string][]byte{}
	provs := map[string][]byte{}
	var entries []hrEntry
	for _, v := range versions {
		a := hrChartArchive(t, "nginx", v.version, "web server "+v.version)
		archives[v.version] = a
		s.Put(v.path, a)
		if v.prov {
			provs[v.version] = []byte("-----BEGIN PGP SIGNED MESSAGE-----\nname: nginx\nversion: " + v.version + "\n")
			s.Put(v.path+".prov", provs[v.version])
		}
		entries = append(entries, hrEntry{archive: a, digest: hrDigest(t, a), file: v.file, baseURL: v.baseURL, created: v.created})
	}
	redis := hrChartArchive(t, "redis", "2.0.0", "cache")
	entries = append(entries, hrEntry{archive: redis, digest: hrDigest(t, redis), file: "redis-2.0.0.tgz", created: time.Unix(1700000000, 0)})
	s.Put("/stable/index.yaml", hrIndex(t, entries...))

	c := registrytest.Client(t)
	hc := c.HTTPClient()
	cache := NewRepoCache()
	source := s.URL + "/stable/nginx"
	r, err := cache.Open(source, hc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Open(s.URL+"/stable/redis", hc); err != nil {
		t.Fatal(err)
	}
	if n := s.Count("/stable/index.yaml"); n != 1 {
		t.Errorf("index.yaml read %d times for two charts of one repository, want 1", n)
	}
	tags, err := client.ListTags(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1.2.0", "1.1.0_build.1", "1.0.0"}; !slices.Equal(tags, want) {
		t.Errorf("tags = %v, want %v (index order, + as _)", tags, want)
	}

	src := registrytest.New(t)
	dst := registrytest.New(t)
	helm := hrHelmClient(t)
	for _, v := range versions {
		t.Run(v.tag, func(t *testing.T) {
			desc, err := r.Resolve(ctx, v.tag)
			if err != nil {
				t.Fatal(err)
			}
			opts := []registry.PushOption{registry.PushOptCreationTime(v.created.UTC().Format(time.RFC3339))}
			if v.prov {
				opts = append(opts, registry.PushOptProvData(provs[v.version]))
			}
			pushed, err := helm.Push(archives[v.version], src.Host+"/helm/nginx:"+v.version, opts...)
			if err != nil {
				t.Fatalf("helm push: %v", err)
			}
			if desc.Digest.String() != pushed.Manifest.Digest || desc.Size != pushed.Manifest.Size {
				t.Errorf("ferry's manifest is %s (%d bytes), helm push wrote %s (%d bytes)", desc.Digest, desc.Size, pushed.Manifest.Digest, pushed.Manifest.Size)
			}
			if v.prov && pushed.Prov.Digest == "" {
				t.Error("helm pushed no provenance layer")
			}
			// Same tag by version with "+", and by digest pinned to the tag.
			for _, ref := range []string{v.version, v.tag + "@" + desc.Digest.String(), desc.Digest.String()} {
				got, err := r.Resolve(ctx, ref)
				if err != nil || got.Digest != desc.Digest {
					t.Errorf("Resolve(%s) = %s, %v; want %s", ref, got.Digest, err, desc.Digest)
				}
			}

			// oras copies the chart to a mirror; Helm's client pulls it.
			mirror := registrytest.Repository(t, c, dst.Host+"/mirror/charts/nginx")
			if _, err := oras.Copy(ctx, r, v.tag, mirror, v.tag, oras.DefaultCopyOptions); err != nil {
				t.Fatalf("oras.Copy: %v", err)
			}
			pulled, err := helm.Pull(dst.Host+"/mirror/charts/nginx:"+v.version, registry.PullOptWithProv(v.prov))
			if err != nil {
				t.Fatalf("helm pull from the mirror: %v", err)
			}
			if pulled.Manifest.Digest != pushed.Manifest.Digest {
				t.Errorf("mirror holds %s, helm push wrote %s", pulled.Manifest.Digest, pushed.Manifest.Digest)
			}
			if !bytes.Equal(pulled.Chart.Data, archives[v.version]) {
				t.Error("the pulled chart layer is not the repository's .tgz")
			}
			if v.prov && !bytes.Equal(pulled.Prov.Data, provs[v.version]) {
				t.Error("the pulled provenance is not the repository's .prov")
			}
			ch, err := loader.LoadArchive(bytes.NewReader(pulled.Chart.Data))
			if err != nil || ch.Metadata.Name != "nginx" || ch.Metadata.Version != v.version {
				t.Errorf("pulled chart: %v, %+v", err, ch)
			}
			if n := s.Count(v.path); n != 1 {
				t.Errorf("%s downloaded %d times, want 1", v.path, n)
			}
		})
	}
	if n := s.Count("/stable/nginx-1.0.0.tgz.prov"); n != 1 {
		t.Errorf("missing .prov asked %d times, want 1", n)
	}

	t.Run("digest on a fresh cache", func(t *testing.T) {
		want, err := r.Resolve(ctx, "1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := NewRepoCache().Open(source, hc)
		if err != nil {
			t.Fatal(err)
		}
		desc, rc, err := fresh.FetchReference(ctx, want.Digest.String())
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		if desc.Digest != want.Digest || digest.FromBytes(b) != want.Digest {
			t.Errorf("FetchReference(%s) = %s", want.Digest, desc.Digest)
		}
		if _, err := fresh.Resolve(ctx, "1.2.0@"+want.Digest.String()); !errors.Is(err, errdef.ErrNotFound) {
			t.Errorf("a tag pinned to another version's digest: %v, want not found", err)
		}
		other := digest.FromString("nothing")
		if ok, err := fresh.Exists(ctx, ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: other, Size: 7}); ok || err != nil {
			t.Errorf("Exists(unknown) = %v, %v", ok, err)
		}
	})

	t.Run("concurrent resolves build once", func(t *testing.T) {
		before := s.Count("/stable/nginx-1.2.0.tgz")
		fresh, err := NewRepoCache().Open(source, hc)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		digests := make([]digest.Digest, 8)
		for i := range digests {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := fresh.Resolve(ctx, "1.2.0")
				if err != nil {
					t.Error(err)
				}
				digests[i] = d.Digest
			}()
		}
		wg.Wait()
		if n := s.Count("/stable/nginx-1.2.0.tgz") - before; n != 1 {
			t.Errorf("8 concurrent resolves downloaded the .tgz %d times, want 1", n)
		}
		for _, d := range digests[1:] {
			if d != digests[0] {
				t.Errorf("concurrent resolves disagree: %v", digests)
			}
		}
	})
}

// TestRepoCacheErrors: what a classic repository can get wrong is an
// error naming the repository, the chart and (for a download) the URL and
// both digests, with no credentials from the URL.
func TestRepoCacheErrors(t *testing.T) {
	ctx := context.Background()
	s := indexrepotest.New(t)
	good := hrChartArchive(t, "nginx", "1.0.0", "web server")
	other := hrChartArchive(t, "nginx", "1.0.0", "another build")
	redis := hrChartArchive(t, "redis", "2.0.0", "cache")
	created := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	// /bad: the index's digest is of another build than the one served.
	s.Put("/bad/nginx-1.0.0.tgz", good)
	s.Put("/bad/index.yaml", hrIndex(t, hrEntry{archive: good, digest: hrDigest(t, other), file: "nginx-1.0.0.tgz", created: created}))
	// /swapped: the index's nginx URL serves redis (with redis's digest).
	s.Put("/swapped/nginx-1.0.0.tgz", redis)
	s.Put("/swapped/index.yaml", hrIndex(t, hrEntry{archive: good, digest: hrDigest(t, redis), file: "nginx-1.0.0.tgz", created: created}))
	s.Put("/malformed/index.yaml", []byte("apiVersion: v1\nentries:\n  nginx: [\n"))
	s.Put("/noversion/index.yaml", []byte("entries: {}\n"))
	// /gone: the index names an archive the server does not have.
	s.Put("/gone/index.yaml", hrIndex(t, hrEntry{archive: good, digest: hrDigest(t, good), file: "nginx-1.0.0.tgz", created: created}))
	hostPort := strings.TrimPrefix(s.URL, "http://")

	tests := []struct {
		name    string
		source  string
		resolve string // "" : the error is Open's
		wantIs  error
		want    []string
	}{
		{name: "digest mismatch", source: s.URL + "/bad/nginx", resolve: "1.0.0", wantIs: ErrDigestMismatch,
			want: []string{"nginx", "1.0.0", s.URL + "/bad/nginx-1.0.0.tgz", hrDigest(t, good), hrDigest(t, other)}},
		{name: "digest lookup meets a mismatch", source: s.URL + "/bad/nginx", resolve: digest.FromString("elsewhere").String(), wantIs: ErrDigestMismatch,
			want: []string{"no version is " + digest.FromString("elsewhere").String(), "not found", hrDigest(t, other)}},
		{name: "archive of another chart", source: s.URL + "/swapped/nginx", resolve: "1.0.0",
			want: []string{"nginx", "1.0.0", "holds chart redis version 2.0.0"}},
		{name: "archive missing", source: s.URL + "/gone/nginx", resolve: "1.0.0",
			want: []string{"nginx", s.URL + "/gone/nginx-1.0.0.tgz", "404"}},
		{name: "version not in index", source: s.URL + "/bad/nginx", resolve: "9.9.9", wantIs: errdef.ErrNotFound,
			want: []string{"nginx", "9.9.9"}},
		{name: "malformed index", source: s.URL + "/malformed/nginx",
			want: []string{s.URL + "/malformed", "malformed index.yaml"}},
		{name: "index without apiVersion", source: s.URL + "/noversion/nginx",
			want: []string{s.URL + "/noversion", "malformed index.yaml", "no API version"}},
		{name: "no index", source: s.URL + "/nothing/nginx",
			want: []string{s.URL + "/nothing", "index.yaml", "404"}},
		{name: "chart not in index", source: s.URL + "/bad/postgres", wantIs: errdef.ErrNotFound,
			want: []string{`"postgres"`, s.URL + "/bad", "lists: nginx"}},
		{name: "credentials in the URL are never printed", source: "http://ada:s3cr3t@" + hostPort + "/bad/postgres", wantIs: errdef.ErrNotFound,
			want: []string{`"postgres"`, s.URL + "/bad", "lists: nginx"}},
		{name: "not an HTTP source", source: "oci://ghcr.io/acme/nginx", want: []string{"not a chart in an HTTP repository"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRepoCache().Open(tt.source, http.DefaultClient)
			if tt.resolve != "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				_, err = r.Resolve(ctx, tt.resolve)
			}
			if err == nil {
				t.Fatal("no error")
			}
			if tt.wantIs == ErrDigestMismatch && strings.HasPrefix(tt.resolve, "sha256:") && !errors.Is(err, errdef.ErrNotFound) {
				t.Errorf("error %q does not wrap %v", err, errdef.ErrNotFound)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %q does not wrap %v", err, tt.wantIs)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error %q prints the URL's password", err)
			}
		})
	}
}

// TestRepoSplitSource: REPOURL/NAME splits at the last "/", for http and
// https URLs only; the mirror path is charts/NAME.
func TestRepoSplitSource(t *testing.T) {
	tests := []struct {
		source, repoURL, name string
		ok                    bool
	}{
		{source: "https://charts.example.com/stable/nginx", repoURL: "https://charts.example.com/stable", name: "nginx", ok: true},
		{source: "https://charts.example.com/nginx", repoURL: "https://charts.example.com", name: "nginx", ok: true},
		{source: "http://127.0.0.1:8080/a/b/redis", repoURL: "http://127.0.0.1:8080/a/b", name: "redis", ok: true},
		{source: "HTTPS://charts.example.com/x", repoURL: "HTTPS://charts.example.com", name: "x", ok: true},
		{source: "https://charts.example.com/stable/"},
		{source: "https://charts.example.com"},
		{source: "https:///nginx"},
		{source: "https://charts.example.com/nginx?x=1"},
		{source: "oci://ghcr.io/acme/nginx"},
		{source: "ghcr.io/acme/nginx"},
		{source: "file:///charts/nginx"},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			repoURL, name, ok := SplitSource(tt.source)
			if repoURL != tt.repoURL || name != tt.name || ok != tt.ok {
				t.Errorf("SplitSource = %q, %q, %v; want %q, %q, %v", repoURL, name, ok, tt.repoURL, tt.name, tt.ok)
			}
			wantPath := ""
			if tt.ok {
				wantPath = "charts/" + tt.name
			}
			if got := MirrorPath(tt.source); got != wantPath {
				t.Errorf("MirrorPath = %q, want %q", got, wantPath)
			}
		})
	}
}
