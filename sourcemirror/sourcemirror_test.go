package sourcemirror_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/sourcemirror"
)

// TestLocations pins the order sources are read in: the longest matching
// prefix's mirrors in the order written, the matched prefix replaced by
// the location (containers/image pkg/sysregistriesv2
// system_registries_v2.go FindRegistry and PullSourcesFromReference;
// containerd docs/hosts.md override_path), the source last unless listed
// elsewhere, never offline.
func TestLocations(t *testing.T) {
	entries := []sourcemirror.Entry{
		{Prefix: "docker.io", Locations: []string{"registry.internal/dockerhub"}},
		{Prefix: "quay.io", Locations: []string{"registry.internal/quay", "quay.io", "backup.internal/quay"}},
		{Prefix: "quay.io/prometheus", Locations: []string{"registry.internal/prom"}},
		{Prefix: "ghcr.io/acme/app", Locations: []string{"oci://registry.internal/acme-app/"}},
		{Prefix: "https://prometheus-community.github.io/helm-charts", Locations: []string{"https://charts.internal/prometheus"}},
		{Prefix: "https://kudo-repository.storage.googleapis.com/v1", Locations: []string{"http://kudo.internal/v1"}},
		{Prefix: "index.docker.io/bitnami", Locations: []string{"registry.internal/bitnami"}},
	}
	for _, tc := range []struct {
		source  string
		offline bool
		want    []string
	}{
		{source: "docker.io/library/nginx", want: []string{"registry.internal/dockerhub/library/nginx", "docker.io/library/nginx"}},
		{source: "docker.io/library/nginx", offline: true, want: []string{"registry.internal/dockerhub/library/nginx"}},
		{source: "docker.io/bitnami/redis", want: []string{"registry.internal/bitnami/redis", "docker.io/bitnami/redis"}},
		// Docker Hub's other names in a source (bitnami's charts name
		// oci://registry-1.docker.io/bitnamicharts) match too; the source
		// keeps its name.
		{source: "registry-1.docker.io/bitnami/wordpress", offline: true, want: []string{"registry.internal/bitnami/wordpress"}},
		{source: "index.docker.io/library/nginx", want: []string{"registry.internal/dockerhub/library/nginx", "index.docker.io/library/nginx"}},
		{source: "quay.io/coreos/etcd", want: []string{"registry.internal/quay/coreos/etcd", "quay.io/coreos/etcd", "backup.internal/quay/coreos/etcd"}},
		{source: "quay.io/coreos/etcd", offline: true, want: []string{"registry.internal/quay/coreos/etcd", "backup.internal/quay/coreos/etcd"}},
		{source: "quay.io/prometheus/node-exporter", want: []string{"registry.internal/prom/node-exporter", "quay.io/prometheus/node-exporter"}},
		// A prefix matches whole path elements only.
		{source: "quay.io/prometheus-operator/x", want: []string{"registry.internal/quay/prometheus-operator/x", "quay.io/prometheus-operator/x", "backup.internal/quay/prometheus-operator/x"}},
		{source: "ghcr.io/acme/app", want: []string{"registry.internal/acme-app", "ghcr.io/acme/app"}},
		{source: "ghcr.io/acme/apps", want: []string{"ghcr.io/acme/apps"}},
		{source: "ghcr.io/other/x", offline: true, want: nil},
		{source: "https://prometheus-community.github.io/helm-charts/kube-prometheus-stack", offline: true,
			want: []string{"https://charts.internal/prometheus/kube-prometheus-stack"}},
		{source: "kudo+https://kudo-repository.storage.googleapis.com/v1/kafka",
			want: []string{"kudo+http://kudo.internal/v1/kafka", "kudo+https://kudo-repository.storage.googleapis.com/v1/kafka"}},
	} {
		tab, err := sourcemirror.New(entries, tc.offline)
		if err != nil {
			t.Fatal(err)
		}
		if got := tab.Locations(tc.source); !slices.Equal(got, tc.want) {
			t.Errorf("Locations(%q, offline %v) = %q, want %q", tc.source, tc.offline, got, tc.want)
		}
	}
}

func TestNewRefusesBadEntries(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    sourcemirror.Entry
		err  string
	}{
		{"no host", sourcemirror.Entry{Prefix: "library/nginx", Locations: []string{"registry.internal/x"}}, "no registry host"},
		{"no location", sourcemirror.Entry{Prefix: "docker.io"}, "no location"},
		{"url for registry", sourcemirror.Entry{Prefix: "docker.io", Locations: []string{"https://registry.internal/x"}}, "mirrored by another registry"},
		{"registry for url", sourcemirror.Entry{Prefix: "https://charts.example.com", Locations: []string{"registry.internal/charts"}}, "mirrored by another http(s)://"},
		{"tag", sourcemirror.Entry{Prefix: "docker.io/library/nginx:1", Locations: []string{"registry.internal/x"}}, "without tag or digest"},
		{"credentials", sourcemirror.Entry{Prefix: "https://charts.example.com", Locations: []string{"https://u:p@charts.internal"}}, "without credentials"},
	} {
		if _, err := sourcemirror.New([]sourcemirror.Entry{tc.e}, false); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: err %v, want it to contain %q", tc.name, err, tc.err)
		}
	}
}

// testClient is a registry client that does not retry, so that a stopped
// registry fails at once.
func testClient(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(client.Options{RegistryConfig: filepath.Join(t.TempDir(), "config.json"), Retry: client.RetryPolicy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOfflineReadsTheMirrorOnly reads docker.io/library/app from a
// loopback mirror holding dockerhub/library/app: the source, a name never
// reachable here, is not tried, and where the package was read is
// recorded under the source's name.
func TestOfflineReadsTheMirrorOnly(t *testing.T) {
	ctx := context.Background()
	mirror := registrytest.New(t)
	c := testClient(t)
	repo := registrytest.Repository(t, c, mirror.Host+"/dockerhub/library/app")
	desc, err := fixture.PushImage(ctx, repo, "app")
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, "1.0"); err != nil {
		t.Fatal(err)
	}
	tab, err := sourcemirror.New([]sourcemirror.Entry{{Prefix: "docker.io", Locations: []string{mirror.Host + "/dockerhub"}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	src, err := format.Open(sourcemirror.Registries{Inner: c, Table: tab}, nil, "docker.io/library/app")
	if err != nil {
		t.Fatal(err)
	}
	got, err := src.Resolve(ctx, "1.0")
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != desc.Digest {
		t.Errorf("digest %s, want %s", got.Digest, desc.Digest)
	}
	var tags []string
	if err := src.Tags(ctx, "", func(ts []string) error { tags = append(tags, ts...); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tags, []string{"1.0"}) {
		t.Errorf("tags %q", tags)
	}
	if rf := tab.ReadFrom("docker.io/library/app", desc.Digest.String()); rf != mirror.Host+"/dockerhub/library/app" {
		t.Errorf("ReadFrom = %q", rf)
	}
	// Offline, a source with no mirror is read nowhere.
	if _, err := format.Open(sourcemirror.Registries{Inner: c, Table: tab}, nil, "ghcr.io/acme/app"); err == nil || !strings.Contains(err.Error(), "offline") {
		t.Errorf("unmirrored source offline: err %v", err)
	}
}

// TestFallbackOrder: an unreachable mirror, then a mirror without the
// tag, then the source: each is asked in that order and the first that
// has the content answers; once the second mirror holds it, the source
// is not asked.
func TestFallbackOrder(t *testing.T) {
	ctx := context.Background()
	dead := registrytest.New(t)
	dead.Stop()
	empty := registrytest.New(t)
	source := registrytest.New(t)
	c := testClient(t)
	srcRepo := registrytest.Repository(t, c, source.Host+"/acme/app")
	desc, err := fixture.PushImage(ctx, srcRepo, "app")
	if err != nil {
		t.Fatal(err)
	}
	if err := srcRepo.Tag(ctx, desc, "1.0"); err != nil {
		t.Fatal(err)
	}
	entries := []sourcemirror.Entry{{Prefix: source.Host + "/acme", Locations: []string{dead.Host + "/m", empty.Host + "/m"}}}

	for _, step := range []struct {
		name         string
		pushToMirror bool
		offline      bool
		wantFrom     string
		wantSource   bool
		wantErr      bool
	}{
		{name: "source last", wantFrom: "", wantSource: true},
		{name: "offline, mirrors lack it", offline: true, wantErr: true},
		{name: "second mirror", pushToMirror: true, wantFrom: empty.Host + "/m/app"},
	} {
		if step.pushToMirror {
			m := registrytest.Repository(t, c, empty.Host+"/m/app")
			if _, err := fixture.PushImage(ctx, m, "app"); err != nil {
				t.Fatal(err)
			}
			if err := m.Tag(ctx, desc, "1.0"); err != nil {
				t.Fatal(err)
			}
		}
		empty.Reset()
		source.Reset()
		tab, err := sourcemirror.New(entries, step.offline)
		if err != nil {
			t.Fatal(err)
		}
		repo, err := format.Open(sourcemirror.Registries{Inner: c, Table: tab}, nil, source.Host+"/acme/app")
		if err != nil {
			t.Fatal(err)
		}
		got, err := repo.Resolve(ctx, "1.0")
		if step.wantErr {
			if err == nil {
				t.Errorf("%s: resolved %s, want an error", step.name, got.Digest)
			}
		} else if err != nil || got.Digest != desc.Digest {
			t.Errorf("%s: %v %s", step.name, err, got.Digest)
		}
		if rf := tab.ReadFrom(source.Host+"/acme/app", desc.Digest.String()); rf != step.wantFrom {
			t.Errorf("%s: ReadFrom %q, want %q", step.name, rf, step.wantFrom)
		}
		if n := len(empty.Requests()); n == 0 {
			t.Errorf("%s: the second mirror was not asked", step.name)
		}
		if asked := len(source.Requests()) > 0; asked != step.wantSource {
			t.Errorf("%s: source asked %v, want %v (%v)", step.name, asked, step.wantSource, source.Requests())
		}
	}
}
