package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	chart "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/serve/formatrepo"
)

// ChartsPath is the URL path below which `ferry serve` answers a classic
// Helm chart repository: `helm repo add mirror http://HOST:PORT/charts`.
const ChartsPath = "/charts/"

// maxServedConfig bounds the chart configs the chart repository reads.
const maxServedConfig = 1 << 20

// ErrNotLocked is returned (wrapped) for a chart `ferry serve --lock` does
// not serve because the lock does not hold its manifest.
var ErrNotLocked = errors.New("not served: this server was started with a lock and serves only the charts the lock holds")

// RepoHandler answers a classic Helm chart repository from the OCI charts
// a registry stores:
//
//	GET /charts/index.yaml               every stored chart version
//	GET /charts/NAME-VERSION.tgz         the chart layer, digest-checked
//	GET /charts/NAME-VERSION.tgz.prov    the provenance layer, when stored
//
// A chart is an image manifest whose config media type is Helm's
// (application/vnd.cncf.helm.config.v1+json), in a repository named after
// the chart (…/NAME, as `helm push` and `ferry mirror` write it) and
// tagged with its version ("+" written "_"). When several repositories
// hold one version of a chart, the first in catalog order answers (the
// walk is formatrepo.Artifacts').
//
// It is mounted in `ferry serve` before the registry starts, and bound to
// the registry's handler once it runs; it reads that handler in process,
// so it needs neither the network nor credentials of its own (the request
// that reached it has already passed the server's authentication). It
// answers 503 until bound.
type RepoHandler = formatrepo.RepoHandler[*storedChart]

// NewRepoHandler returns an unbound RepoHandler, for `ferry serve` to
// mount at ChartsPath. Bind serves every stored version; BindLocked, for
// `ferry serve --lock`, only those whose manifest digest the lock holds
// among its packages of kind KindHelmChart.
func NewRepoHandler() *RepoHandler {
	return formatrepo.NewRepoHandler(formatrepo.RepoConfig[*storedChart]{
		Path: ChartsPath, Kind: format.KindHelmChart, Noun: "chart", NotLocked: ErrNotLocked, Format: chartFormat{},
		Index: func(a *formatrepo.Artifacts[*storedChart]) http.HandlerFunc { return (&chartStore{a: a}).serveIndex },
		File:  func(a *formatrepo.Artifacts[*storedChart]) http.HandlerFunc { return (&chartStore{a: a}).serveFile },
	})
}

// storedChart is one chart version a registry stores.
type storedChart struct {
	meta  *chart.Metadata
	layer ocispec.Descriptor
	prov  *ocispec.Descriptor
}

// chartFormat is the Helm chart's formatrepo.ArtifactFormat.
type chartFormat struct{}

// Decode reads a chart's manifest and config.
func (chartFormat) Decode(ctx context.Context, blobs content.Fetcher, _ ocispec.Descriptor, m *ocispec.Manifest) (*storedChart, error) {
	if m.Config.MediaType != ConfigMediaType {
		return nil, formatrepo.ErrNotArtifact
	}
	c := &storedChart{}
	for i, l := range m.Layers {
		switch l.MediaType {
		case ChartLayerMediaType, LegacyChartLayerMediaType:
			c.layer = m.Layers[i]
		case ProvLayerMediaType:
			c.prov = &m.Layers[i]
		}
	}
	if c.layer.Digest == "" || m.Config.Size > maxServedConfig {
		return nil, formatrepo.ErrNotArtifact
	}
	cfg, err := content.FetchAll(ctx, blobs, m.Config)
	if err != nil {
		return nil, err
	}
	c.meta = &chart.Metadata{}
	if err := json.Unmarshal(cfg, c.meta); err != nil || c.meta.Name == "" || c.meta.Version == "" {
		return nil, formatrepo.ErrNotArtifact
	}
	return c, nil
}

// Name is the chart's name.
func (chartFormat) Name(c *storedChart) string { return c.meta.Name }

// Tag is the chart's version, "+" written "_" (an OCI tag has no "+").
func (chartFormat) Tag(c *storedChart) string { return chartTag(c.meta.Version) }

// File is the chart's archive name in the repository: NAME-VERSION.tgz.
func (chartFormat) File(c *storedChart) string { return c.meta.Name + "-" + c.meta.Version + ".tgz" }

// FileTag is the tag of an archive's version.
func (chartFormat) FileTag(version string) string { return chartTag(version) }

// Describe names the chart in messages.
func (chartFormat) Describe(c *storedChart) string {
	return fmt.Sprintf("chart %s %s", c.meta.Name, c.meta.Version)
}

// chartStore answers the chart repository's requests.
type chartStore struct {
	a *formatrepo.Artifacts[*storedChart]
}

// serveIndex answers index.yaml, built with Helm's index type (indexFile)
// and marshalled as repo.IndexFile.WriteFile does (sigs.k8s.io/yaml). Chart
// URLs are relative (NAME-VERSION.tgz), so the index works whatever host
// name the client reached the server by.
func (s *chartStore) serveIndex(w http.ResponseWriter, r *http.Request) {
	charts, err := s.a.List(r.Context())
	if err != nil {
		http.Error(w, "listing charts: "+err.Error(), http.StatusBadGateway)
		return
	}
	idx := newIndexFile()
	idx.Generated = time.Unix(0, 0).UTC()
	for _, c := range charts {
		if c.Created.After(idx.Generated) {
			idx.Generated = c.Created
		}
		idx.Entries[c.Entry.meta.Name] = append(idx.Entries[c.Entry.meta.Name], &chartVersion{
			Metadata: c.Entry.meta,
			URLs:     []string{chartFormat{}.File(c.Entry)},
			Created:  c.Created,
			Digest:   c.Entry.layer.Digest.Encoded(),
		})
	}
	idx.sortEntries()
	out, err := idx.marshal()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	formatrepo.ServeBytes(w, r, "application/x-yaml", out)
}

// serveFile answers NAME-VERSION.tgz and NAME-VERSION.tgz.prov with the
// chart's layers, checked against their digests while they are sent: a
// layer whose stored bytes differ is cut off before its last byte.
func (s *chartStore) serveFile(w http.ResponseWriter, r *http.Request) {
	archive, isProv := strings.CutSuffix(r.PathValue("file"), ".prov")
	s.a.ServeFile(w, r, archive, func(c *storedChart) (ocispec.Descriptor, bool) {
		if !isProv {
			return c.layer, true
		}
		if c.prov == nil {
			return ocispec.Descriptor{}, false
		}
		return *c.prov, true
	})
}
