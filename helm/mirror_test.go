package helm

import (
	"context"
	"testing"
	"time"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/indexrepo/indexrepotest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/sourcemirror"
)

// TestHTTPRepositoryMirror reads a chart of a classic repository whose URL
// is never reachable here (offline: never asked) from a loopback mirror of
// the repository, through the one place sources are opened (format.Open
// with sourcemirror.Registries): the chart resolves to the digest the
// mirror's copy gives when read directly, and where it was read is
// recorded under the source's name. Relative chart URLs resolve against
// the mirror.
func TestHTTPRepositoryMirror(t *testing.T) {
	ctx := context.Background()
	s := indexrepotest.New(t)
	a := hrChartArchive(t, "web", "1.2.0", "web")
	s.Put("/prometheus/web-1.2.0.tgz", a)
	s.Put("/prometheus/index.yaml", hrIndex(t, hrEntry{archive: a, digest: hrDigest(t, a), file: "web-1.2.0.tgz", created: time.Unix(1700000000, 0)}))

	const upstream = "https://prometheus-community.github.io/helm-charts"
	c := registrytest.Client(t)
	formats := []format.Format{New()}
	direct, err := format.Open(c, formats, s.URL+"/prometheus/web")
	if err != nil {
		t.Fatal(err)
	}
	want, err := direct.Resolve(ctx, "1.2.0")
	if err != nil {
		t.Fatal(err)
	}

	tab, err := sourcemirror.New([]sourcemirror.Entry{{Prefix: upstream, Locations: []string{s.URL + "/prometheus"}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	// A fresh format: its repository cache has not read the mirror yet.
	repo, err := format.Open(sourcemirror.Registries{Inner: c, Table: tab}, []format.Format{New()}, upstream+"/web")
	if err != nil {
		t.Fatal(err)
	}
	got, err := repo.Resolve(ctx, "1.2.0")
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != want.Digest {
		t.Errorf("digest through the mirror %s, read directly %s", got.Digest, want.Digest)
	}
	if rf := tab.ReadFrom(upstream+"/web", got.Digest.String()); rf != s.URL+"/prometheus/web" {
		t.Errorf("ReadFrom = %q", rf)
	}
	rc, err := repo.Fetch(ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
}
