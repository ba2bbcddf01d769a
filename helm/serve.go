package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/errcode"
	"sigs.k8s.io/yaml"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/serve"
)

// ChartsPath is the URL path below which `ferry serve` answers a classic
// Helm chart repository: `helm repo add mirror http://HOST:PORT/charts`.
const ChartsPath = "/charts/"

// Bounds of what the chart repository reads from the registry to list a
// chart.
const (
	maxServedManifest = 4 << 20
	maxServedConfig   = 1 << 20
)

// ErrNotLocked is returned (wrapped) for a chart `ferry serve --lock` does
// not serve because the lock does not hold its manifest.
var ErrNotLocked = errors.New("not served: ferry serve --lock serves only the charts the lock holds")

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
// hold one version of a chart, the first in catalog order answers.
//
// It is mounted in `ferry serve` before the registry starts, and bound to
// the registry's handler once it runs; it reads that handler in process,
// so it needs neither the network nor credentials of its own (the request
// that reached it has already passed the server's authentication). It
// answers 503 until bound.
type RepoHandler struct {
	h atomic.Pointer[http.Handler]
}

// NewRepoHandler returns an unbound RepoHandler, for `ferry serve` to
// mount at ChartsPath.
func NewRepoHandler() *RepoHandler { return &RepoHandler{} }

// Bind serves every chart stored in the registry that registry (an OCI
// distribution handler such as serve.Server.Registry) answers for.
func (m *RepoHandler) Bind(registry http.Handler) error {
	return m.bind(registry, nil, nil)
}

// BindLocked is Bind for `ferry serve --lock`: it serves only the charts
// whose manifest digest l holds (packages of kind helm.chart). The
// manifest digest pins the chart's config and layers, and every layer is
// checked against its digest while it is sent, so where in the registry a
// locked chart is stored does not matter. A chart left out is answered 404
// saying why, and log receives a line.
func (m *RepoHandler) BindLocked(registry http.Handler, l *lock.Lock, log func(format string, args ...any)) error {
	locked := map[digest.Digest]bool{}
	if l != nil {
		for _, p := range l.Packages {
			if p.Kind != format.KindHelmChart || p.Digest == "" {
				continue
			}
			d, err := digest.Parse(p.Digest)
			if err != nil {
				return fmt.Errorf("lock: chart %s: %w", p.Source, err)
			}
			locked[d] = true
		}
	}
	if log == nil {
		log = func(string, ...any) {}
	}
	return m.bind(registry, locked, log)
}

func (m *RepoHandler) bind(registry http.Handler, locked map[digest.Digest]bool, log func(string, ...any)) error {
	reg, err := remote.NewRegistry("ferry.local")
	if err != nil {
		return err
	}
	reg.PlainHTTP = true
	reg.Client = &http.Client{Transport: serve.HandlerTransport(registry)}
	s := &chartStore{reg: reg, locked: locked, log: log, cache: map[digest.Digest]*storedChart{}}
	var h http.Handler = newChartMux(s)
	m.h.Store(&h)
	return nil
}

// ServeHTTP implements http.Handler.
func (m *RepoHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := m.h.Load()
	if h == nil {
		http.Error(w, "the registry is starting", http.StatusServiceUnavailable)
		return
	}
	(*h).ServeHTTP(w, r)
}

func newChartMux(s *chartStore) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+ChartsPath+"index.yaml", s.serveIndex)
	mux.HandleFunc("GET "+ChartsPath+"{file}", s.serveFile)
	return mux
}

// chartStore reads the charts a registry stores.
type chartStore struct {
	reg    *remote.Registry
	locked map[digest.Digest]bool // nil: serve everything
	log    func(string, ...any)

	mu    sync.Mutex
	cache map[digest.Digest]*storedChart // by manifest digest; content-addressed
}

// storedChart is one chart version a registry stores.
type storedChart struct {
	repo     string
	manifest ocispec.Descriptor
	meta     *chart.Metadata
	layer    ocispec.Descriptor
	prov     *ocispec.Descriptor
	created  time.Time
}

// fileName is the chart's archive name in the repository: NAME-VERSION.tgz.
func (c *storedChart) fileName() string { return c.meta.Name + "-" + c.meta.Version + ".tgz" }

// repositories returns the registry's repositories, sorted.
func (s *chartStore) repositories(ctx context.Context) ([]string, error) {
	var repos []string
	err := s.reg.Repositories(ctx, "", func(list []string) error {
		repos = append(repos, list...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing repositories: %w", err)
	}
	sort.Strings(repos)
	return repos, nil
}

// read returns the chart repoName holds under tag; errNotStoredChart (wrapped)
// when it is something else, errdef.ErrNotFound when there is no such tag.
func (s *chartStore) read(ctx context.Context, repoName, tag string) (*storedChart, error) {
	r, err := s.reg.Repository(ctx, repoName)
	if err != nil {
		return nil, err
	}
	desc, err := r.Resolve(ctx, tag)
	if err != nil {
		return nil, err
	}
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return nil, errNotStoredChart
	}
	s.mu.Lock()
	c, ok := s.cache[desc.Digest]
	s.mu.Unlock()
	if ok {
		cc := *c
		cc.repo = repoName
		return &cc, nil
	}
	if desc.Size > maxServedManifest {
		return nil, errNotStoredChart
	}
	raw, err := content.FetchAll(ctx, r, desc) // checks the digest
	if err != nil {
		return nil, err
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil || m.Config.MediaType != ConfigMediaType {
		return nil, errNotStoredChart
	}
	c = &storedChart{repo: repoName, manifest: desc}
	for i, l := range m.Layers {
		switch l.MediaType {
		case ChartLayerMediaType, LegacyChartLayerMediaType:
			c.layer = m.Layers[i]
		case ProvLayerMediaType:
			c.prov = &m.Layers[i]
		}
	}
	if c.layer.Digest == "" || m.Config.Size > maxServedConfig {
		return nil, errNotStoredChart
	}
	cfg, err := content.FetchAll(ctx, r.Blobs(), m.Config)
	if err != nil {
		return nil, err
	}
	c.meta = &chart.Metadata{}
	if err := json.Unmarshal(cfg, c.meta); err != nil || c.meta.Name == "" || c.meta.Version == "" {
		return nil, errNotStoredChart
	}
	if t, err := time.Parse(time.RFC3339, m.Annotations[ocispec.AnnotationCreated]); err == nil {
		c.created = t.UTC()
	}
	s.mu.Lock()
	s.cache[desc.Digest] = c
	s.mu.Unlock()
	cc := *c
	return &cc, nil
}

var errNotStoredChart = errors.New("not a stored Helm chart")

// servable reports whether chart c, found in repository repoName under
// tag, is one the repository lists: stored in a repository named after it
// and under its own version's tag, and locked when a lock is given.
func (s *chartStore) servable(c *storedChart, repoName, tag string) error {
	if path.Base(repoName) != c.meta.Name || chartTag(c.meta.Version) != tag {
		return errNotStoredChart
	}
	if s.locked != nil && !s.locked[c.manifest.Digest] {
		return fmt.Errorf("chart %s %s (%s/%s@%s) is %w", c.meta.Name, c.meta.Version, repoName, tag, c.manifest.Digest, ErrNotLocked)
	}
	return nil
}

// list returns every chart version the repository serves, the first
// repository in catalog order for a version several hold.
func (s *chartStore) list(ctx context.Context) ([]*storedChart, error) {
	repos, err := s.repositories(ctx)
	if err != nil {
		return nil, err
	}
	var out []*storedChart
	seen := map[string]bool{}
	for _, repoName := range repos {
		r, err := s.reg.Repository(ctx, repoName)
		if err != nil {
			return nil, err
		}
		tags, err := client.ListTags(ctx, r)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing tags of %s: %w", repoName, err)
		}
		for _, tag := range tags {
			c, err := s.read(ctx, repoName, tag)
			if errors.Is(err, errNotStoredChart) || isNotFound(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("%s:%s: %w", repoName, tag, err)
			}
			if err := s.servable(c, repoName, tag); err != nil {
				if errors.Is(err, ErrNotLocked) {
					s.log("chart index: leaving out %s", strings.TrimSuffix(err.Error(), ": "+ErrNotLocked.Error()))
				}
				continue
			}
			if seen[c.fileName()] {
				continue
			}
			seen[c.fileName()] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// serveIndex answers index.yaml, built with Helm's own index type and
// marshalled as repo.IndexFile.WriteFile does (sigs.k8s.io/yaml). Chart
// URLs are relative (NAME-VERSION.tgz), so the index works whatever host
// name the client reached the server by.
func (s *chartStore) serveIndex(w http.ResponseWriter, r *http.Request) {
	charts, err := s.list(r.Context())
	if err != nil {
		http.Error(w, "listing charts: "+err.Error(), http.StatusBadGateway)
		return
	}
	idx := repo.NewIndexFile()
	idx.Generated = time.Unix(0, 0).UTC()
	for _, c := range charts {
		if c.created.After(idx.Generated) {
			idx.Generated = c.created
		}
		idx.Entries[c.meta.Name] = append(idx.Entries[c.meta.Name], &repo.ChartVersion{
			Metadata: c.meta,
			URLs:     []string{c.fileName()},
			Created:  c.created,
			Digest:   c.layer.Digest.Encoded(),
		})
	}
	idx.SortEntries()
	out, err := yaml.Marshal(idx)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-yaml")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(out)
}

// find returns the chart whose archive is file (NAME-VERSION.tgz): NAME is
// the last path segment of a repository, VERSION its tag ("+" as "_").
func (s *chartStore) find(ctx context.Context, file string) (*storedChart, error) {
	repos, err := s.repositories(ctx)
	if err != nil {
		return nil, err
	}
	var refused error
	for _, repoName := range repos {
		version, ok := strings.CutPrefix(file, path.Base(repoName)+"-")
		if !ok {
			continue
		}
		version = strings.TrimSuffix(version, ".tgz")
		tag := chartTag(version)
		c, err := s.read(ctx, repoName, tag)
		if errors.Is(err, errNotStoredChart) || isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%s: %w", repoName, tag, err)
		}
		if err := s.servable(c, repoName, tag); err != nil {
			if errors.Is(err, ErrNotLocked) && refused == nil {
				refused = err
			}
			continue
		}
		if c.fileName() != file {
			continue
		}
		return c, nil
	}
	if refused != nil {
		return nil, refused
	}
	return nil, errdef.ErrNotFound
}

// serveFile answers NAME-VERSION.tgz and NAME-VERSION.tgz.prov with the
// chart's layers, checked against their digests while they are sent: a
// layer whose stored bytes differ is cut off before its last byte.
func (s *chartStore) serveFile(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	archive, isProv := strings.CutSuffix(file, ".prov")
	if !strings.HasSuffix(archive, ".tgz") {
		http.NotFound(w, r)
		return
	}
	c, err := s.find(r.Context(), archive)
	switch {
	case errors.Is(err, ErrNotLocked):
		s.log("chart download refused: %s", strings.TrimSuffix(err.Error(), ": "+ErrNotLocked.Error()))
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	case isNotFound(err):
		http.NotFound(w, r)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	layer := c.layer
	if isProv {
		if c.prov == nil {
			http.NotFound(w, r)
			return
		}
		layer = *c.prov
	}
	rr, err := s.reg.Repository(r.Context(), c.repo)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	rc, err := rr.Blobs().Fetch(r.Context(), layer)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(layer.Size, 10))
	if r.Method == http.MethodHead {
		return
	}
	vr := serve.VerifiedReader(rc, layer.Digest, layer.Size)
	if _, err := io.Copy(w, vr); err != nil {
		s.log("chart download cut off: %s %s: %v", c.repo, file, err)
		// The status is sent; cut the connection so that the client sees
		// a truncated download rather than a complete one.
		panic(http.ErrAbortHandler)
	}
}

// isNotFound reports whether err says that a repository, tag or blob does
// not exist.
func isNotFound(err error) bool {
	if errors.Is(err, errdef.ErrNotFound) {
		return true
	}
	var er *errcode.ErrorResponse
	return errors.As(err, &er) && er.StatusCode == http.StatusNotFound
}
