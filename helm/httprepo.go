package helm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/redact"
)

// Size caps of what is read from a classic chart repository.
const (
	// maxIndexSize is the largest index.yaml read.
	maxIndexSize = 64 << 20
	// maxChartSize is the largest chart archive (.tgz) read.
	maxChartSize = 64 << 20
	// maxProvSize is the largest provenance file (.prov) read.
	maxProvSize = 4 << 20
)

// ErrDigestMismatch is returned (wrapped) when a chart archive downloaded
// from a classic repository does not have the sha256 digest the
// repository's index.yaml records for it.
var ErrDigestMismatch = errors.New("chart archive does not match the repository index's digest")

// errHTTPNotFound is returned (wrapped) by get for a 404 answer.
var errHTTPNotFound = errors.New("not found (HTTP 404)")

// SplitSource splits the source of a chart in a classic HTTP repository,
// REPOURL/NAME, at its last "/": "https://charts.example.com/stable/nginx"
// is chart "nginx" of repository "https://charts.example.com/stable". ok is
// false for anything but an http:// or https:// URL with a host and a
// chart name.
func SplitSource(source string) (repoURL, name string, ok bool) {
	lower := strings.ToLower(source)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return "", "", false
	}
	if strings.ContainsAny(source, "?#") {
		return "", "", false
	}
	i := strings.LastIndexByte(source, '/')
	repoURL, name = source[:i], source[i+1:]
	if name == "" {
		return "", "", false
	}
	u, err := url.Parse(repoURL)
	if err != nil || u.Host == "" {
		return "", "", false
	}
	return repoURL, name, true
}

// MirrorPath returns where a chart of a classic repository lands below a
// mirror's HOST/PREFIX: "charts/NAME" (PRODUCT.md: TO/charts/NAME:VERSION).
// It returns "" for a source SplitSource does not accept.
func MirrorPath(source string) string {
	_, name, ok := SplitSource(source)
	if !ok {
		return ""
	}
	return "charts/" + name
}

// chartTag returns the OCI tag Helm pushes a chart version under: "+" is
// not allowed in a tag and is written "_" (helm.sh/helm/v4/pkg/registry,
// reference.go newReference and client.go Tags).
func chartTag(version string) string { return strings.ReplaceAll(version, "+", "_") }

// safeURL returns u without its userinfo, for messages.
func safeURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return redact.String(u)
	}
	p.User = nil
	return p.String()
}

// RepoCache opens charts of classic HTTP chart repositories as read-only
// OCI repositories (see Open). It reads each repository's index.yaml once
// and builds each chart version's manifest once; use one per run. It is
// safe for concurrent use; its zero value is ready.
//
// Credentials for HTTP repositories (basic auth, client certificates) are
// not supported yet: the run's *http.Client is used as it is.
type RepoCache struct {
	mu      sync.Mutex
	indexes map[string]*indexLoad
	repos   map[string]*HTTPRepository
}

// NewRepoCache returns an empty RepoCache.
func NewRepoCache() *RepoCache { return &RepoCache{} }

type indexLoad struct {
	once sync.Once
	idx  *repo.IndexFile
	err  error
}

// Open returns the chart named by source (REPOURL/NAME, see SplitSource)
// as a read-only repository holding, for every version the repository's
// index lists, exactly the OCI chart `helm push` writes for its .tgz. It
// reads REPOURL/index.yaml (once per repository URL) and fails when the
// index is malformed or does not list NAME.
func (c *RepoCache) Open(source string, hc *http.Client) (format.Repository, error) {
	return c.open(context.Background(), source, hc)
}

func (c *RepoCache) open(ctx context.Context, source string, hc *http.Client) (*HTTPRepository, error) {
	repoURL, name, ok := SplitSource(source)
	if !ok {
		return nil, fmt.Errorf("%s: not a chart in an HTTP repository (want https://HOST/PATH/NAME)", safeURL(source))
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	c.mu.Lock()
	if c.repos == nil {
		c.repos = map[string]*HTTPRepository{}
		c.indexes = map[string]*indexLoad{}
	}
	if r, ok := c.repos[source]; ok {
		c.mu.Unlock()
		return r, nil
	}
	l, ok := c.indexes[repoURL]
	if !ok {
		l = &indexLoad{}
		c.indexes[repoURL] = l
	}
	c.mu.Unlock()
	l.once.Do(func() { l.idx, l.err = loadIndex(ctx, hc, repoURL) })
	if l.err != nil {
		return nil, l.err
	}
	versions := l.idx.Entries[name]
	if len(versions) == 0 {
		names := make([]string, 0, len(l.idx.Entries))
		for n, vs := range l.idx.Entries {
			if len(vs) > 0 {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		const most = 20
		list := strings.Join(names, ", ")
		if len(names) > most {
			list = strings.Join(names[:most], ", ") + fmt.Sprintf(", … (%d in all)", len(names))
		}
		if len(names) == 0 {
			list = "none"
		}
		return nil, fmt.Errorf("chart %q: not in the index of %s (%w); it lists: %s", name, safeURL(repoURL), errdef.ErrNotFound, list)
	}
	r := &HTTPRepository{hc: hc, repoURL: repoURL, name: name, blobs: map[digest.Digest][]byte{}}
	seen := map[string]bool{}
	for _, v := range versions {
		t := chartTag(v.Version)
		if seen[t] {
			continue
		}
		seen[t] = true
		r.versions = append(r.versions, &versionSlot{cv: v, tag: t})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.repos[source]; ok {
		return prev, nil
	}
	c.repos[source] = r
	return r, nil
}

// loadIndex downloads and parses REPOURL/index.yaml with Helm's own index
// loader (repo.LoadIndexFile, which drops invalid entries and sorts each
// chart's versions newest first, as `helm repo update` does).
func loadIndex(ctx context.Context, hc *http.Client, repoURL string) (*repo.IndexFile, error) {
	// As helm.sh/helm/v4/pkg/repo/v1/chartrepo.go DownloadIndexFile.
	indexURL, err := repo.ResolveReferenceURL(repoURL, "index.yaml")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", safeURL(repoURL), err)
	}
	data, err := get(ctx, hc, indexURL, maxIndexSize)
	if err != nil {
		return nil, fmt.Errorf("chart repository %s: reading index.yaml: %w", safeURL(repoURL), err)
	}
	// Helm exports its index parser only as LoadIndexFile(path).
	dir, err := os.MkdirTemp("", "ferry-helm-index-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "index.yaml")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		return nil, err
	}
	idx, err := repo.LoadIndexFile(p)
	if err != nil {
		// LoadIndexFile names the temporary file; name the repository.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return nil, fmt.Errorf("chart repository %s: malformed index.yaml: %w", safeURL(repoURL), err)
	}
	return idx, nil
}

// get downloads u, at most max bytes; a 404 answer wraps errHTTPNotFound.
func get(ctx context.Context, hc *http.Client, u string, max int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", safeURL(u), redact.Error(err))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, redact.Error(err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("GET %s: %w", safeURL(u), errHTTPNotFound)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: %s", safeURL(u), resp.Status)
	case resp.ContentLength > max:
		return nil, fmt.Errorf("GET %s: %d bytes, more than the %d allowed", safeURL(u), resp.ContentLength, max)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", safeURL(u), redact.Error(err))
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("GET %s: more than the %d bytes allowed", safeURL(u), max)
	}
	return data, nil
}

// HTTPRepository is one chart of a classic HTTP repository seen as a
// read-only OCI repository (see RepoCache.Open): one tag per version the
// index lists, each resolving to the manifest `helm push` writes for the
// version's .tgz. Manifests are built on first use, once.
type HTTPRepository struct {
	hc       *http.Client
	repoURL  string
	name     string
	versions []*versionSlot // index order: newest first

	mu    sync.Mutex
	blobs map[digest.Digest][]byte // manifests, configs, layers built so far
}

type versionSlot struct {
	cv  *repo.ChartVersion
	tag string

	mu       sync.Mutex
	manifest *ocispec.Descriptor // set once built
	err      error               // set when building failed: not retried in this run
}

var _ format.Repository = (*HTTPRepository)(nil)

// source returns REPOURL/NAME without userinfo, for messages.
func (r *HTTPRepository) source() string { return safeURL(r.repoURL) + "/" + r.name }

// Tags implements registry.TagLister: every version the index lists, "+"
// written "_", in index order (newest first), those after last when last
// is set.
func (r *HTTPRepository) Tags(ctx context.Context, last string, fn func(tags []string) error) error {
	tags := make([]string, 0, len(r.versions))
	for _, v := range r.versions {
		tags = append(tags, v.tag)
	}
	if last != "" {
		for i, t := range tags {
			if t == last {
				tags = tags[i+1:]
				break
			}
		}
	}
	if len(tags) == 0 {
		return nil
	}
	return fn(tags)
}

// Resolve implements content.Resolver: reference is a tag (a version, "+"
// written "_" or not), a digest, or TAG@DIGEST (the tag is then checked
// against the digest; it saves building every version to find one digest).
func (r *HTTPRepository) Resolve(ctx context.Context, reference string) (ocispec.Descriptor, error) {
	tag, dgst, _ := strings.Cut(reference, "@")
	if dgst == "" {
		if d, err := digest.Parse(tag); err == nil {
			tag, dgst = "", d.String()
		}
	}
	if tag == "" {
		d, err := digest.Parse(dgst)
		if err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("%s@%s: %w", r.source(), dgst, err)
		}
		desc, err := r.findManifest(ctx, d)
		if err != nil {
			return ocispec.Descriptor{}, err
		}
		return desc, nil
	}
	slot := r.slot(tag)
	if slot == nil {
		return ocispec.Descriptor{}, fmt.Errorf("chart %s: version %s: %w", r.source(), tag, errdef.ErrNotFound)
	}
	desc, err := r.build(ctx, slot)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	if dgst != "" && desc.Digest.String() != dgst {
		return ocispec.Descriptor{}, fmt.Errorf("chart %s: version %s is %s, not %s: %w", r.source(), slot.cv.Version, desc.Digest, dgst, errdef.ErrNotFound)
	}
	return desc, nil
}

// FetchReference implements registry.ReferenceFetcher.
func (r *HTTPRepository) FetchReference(ctx context.Context, reference string) (ocispec.Descriptor, io.ReadCloser, error) {
	desc, err := r.Resolve(ctx, reference)
	if err != nil {
		return ocispec.Descriptor{}, nil, err
	}
	rc, err := r.Fetch(ctx, desc)
	if err != nil {
		return ocispec.Descriptor{}, nil, err
	}
	return desc, rc, nil
}

// Fetch implements content.Fetcher: the manifest, config, chart layer or
// provenance layer of a version, by digest.
func (r *HTTPRepository) Fetch(ctx context.Context, target ocispec.Descriptor) (io.ReadCloser, error) {
	b, err := r.blob(ctx, target.Digest)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != target.Size {
		return nil, fmt.Errorf("chart %s: %s has %d bytes, not %d: %w", r.source(), target.Digest, len(b), target.Size, errdef.ErrNotFound)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

// Exists implements content.ReadOnlyStorage.
func (r *HTTPRepository) Exists(ctx context.Context, target ocispec.Descriptor) (bool, error) {
	b, err := r.blob(ctx, target.Digest)
	if errors.Is(err, errdef.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return int64(len(b)) == target.Size, nil
}

// slot returns the version whose tag (or version) is tag.
func (r *HTTPRepository) slot(tag string) *versionSlot {
	for _, v := range r.versions {
		if v.tag == tag || v.cv.Version == tag {
			return v
		}
	}
	return nil
}

// stored returns a blob built so far.
func (r *HTTPRepository) stored(d digest.Digest) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.blobs[d]
	return b, ok
}

// blob returns the blob d, building versions until one holds it: first
// the version whose index digest is d (a chart layer), then every version
// in index order.
func (r *HTTPRepository) blob(ctx context.Context, d digest.Digest) ([]byte, error) {
	if b, ok := r.stored(d); ok {
		return b, nil
	}
	failed, err := r.search(ctx, d)
	if err != nil {
		return nil, err
	}
	if b, ok := r.stored(d); ok {
		return b, nil
	}
	return nil, notFound(fmt.Sprintf("chart %s: %s", r.source(), d), failed)
}

// notFound is errdef.ErrNotFound for what, and also the first version
// that failed to build while looking for it, if any (a digest mismatch
// stays visible to errors.Is).
func notFound(what string, failed error) error {
	if failed != nil {
		return fmt.Errorf("%s: %w (and %w)", what, errdef.ErrNotFound, failed)
	}
	return fmt.Errorf("%s: %w", what, errdef.ErrNotFound)
}

// findManifest returns the descriptor of the version whose manifest is d.
func (r *HTTPRepository) findManifest(ctx context.Context, d digest.Digest) (ocispec.Descriptor, error) {
	find := func() (ocispec.Descriptor, bool) {
		for _, v := range r.versions {
			v.mu.Lock()
			m := v.manifest
			v.mu.Unlock()
			if m != nil && m.Digest == d {
				return *m, true
			}
		}
		return ocispec.Descriptor{}, false
	}
	if desc, ok := find(); ok {
		return desc, nil
	}
	failed, err := r.search(ctx, d)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	if desc, ok := find(); ok {
		return desc, nil
	}
	return ocispec.Descriptor{}, notFound(fmt.Sprintf("chart %s: no version is %s", r.source(), d), failed)
}

// search builds versions until one of them holds d: first the version
// whose index digest is d (d is then its chart layer), then every version
// in index order. A version that fails to build is skipped; failed is the
// first such failure. err is only the context's.
func (r *HTTPRepository) search(ctx context.Context, d digest.Digest) (failed, err error) {
	try := func(v *versionSlot) bool {
		if _, err := r.build(ctx, v); err != nil {
			if failed == nil {
				failed = err
			}
			return false
		}
		_, ok := r.stored(d)
		return ok
	}
	if d.Validate() == nil && d.Algorithm() == digest.SHA256 {
		for _, v := range r.versions {
			if indexDigest(v.cv) == d.Encoded() && try(v) {
				return nil, nil
			}
		}
	}
	for _, v := range r.versions {
		if err := ctx.Err(); err != nil {
			return failed, err
		}
		if try(v) {
			return nil, nil
		}
	}
	return failed, nil
}

// indexDigest returns the sha256 hex an index entry records, lower case,
// without an algorithm prefix.
func indexDigest(cv *repo.ChartVersion) string {
	return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(cv.Digest), "sha256:"))
}

// build returns the manifest of version v, building it on first use; a
// failure is remembered and returned again.
func (r *HTTPRepository) build(ctx context.Context, v *versionSlot) (ocispec.Descriptor, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.manifest != nil {
		return *v.manifest, nil
	}
	if v.err != nil {
		return ocispec.Descriptor{}, v.err
	}
	blobs, desc, err := r.synthesize(ctx, v.cv)
	if err != nil {
		if ctx.Err() == nil {
			// The run's client has retried what was transient.
			v.err = err
		}
		return ocispec.Descriptor{}, err
	}
	r.mu.Lock()
	for d, b := range blobs {
		r.blobs[d] = b
	}
	r.mu.Unlock()
	v.manifest = &desc
	return desc, nil
}

// synthesize downloads version cv's .tgz (and .prov) and builds the OCI
// chart `helm push` writes for it (helm.sh/helm/v4/pkg/registry/client.go
// Push), with the index's `created` as creation time so that the manifest
// is the same on every run (helm push uses the .tgz file's modification
// time: pkg/pusher/ocipusher.go).
func (r *HTTPRepository) synthesize(ctx context.Context, cv *repo.ChartVersion) (map[digest.Digest][]byte, ocispec.Descriptor, error) {
	what := fmt.Sprintf("chart %s version %s", r.source(), cv.Version)
	if len(cv.URLs) == 0 {
		return nil, ocispec.Descriptor{}, fmt.Errorf("%s: the index lists no URL", what)
	}
	// Relative URLs as helm.sh/helm/v4/pkg/repo/v1/chartrepo.go
	// FindChartInRepoURL resolves them.
	chartURL, err := repo.ResolveReferenceURL(r.repoURL, cv.URLs[0])
	if err != nil {
		return nil, ocispec.Descriptor{}, fmt.Errorf("%s: %w", what, redact.Error(err))
	}
	data, err := get(ctx, r.hc, chartURL, maxChartSize)
	if err != nil {
		return nil, ocispec.Descriptor{}, fmt.Errorf("%s: %w", what, err)
	}
	sum := sha256.Sum256(data)
	got := hex.EncodeToString(sum[:])
	if want := indexDigest(cv); want != "" && want != got {
		return nil, ocispec.Descriptor{}, exitcode.With(exitcode.Mismatch, fmt.Errorf("%s: %s: %w: the index says sha256:%s, the download is sha256:%s", what, safeURL(chartURL), ErrDigestMismatch, want, got))
	}
	ch, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, ocispec.Descriptor{}, fmt.Errorf("%s: %s is not a chart archive: %w", what, safeURL(chartURL), err)
	}
	meta := ch.Metadata
	if meta.Name != r.name || meta.Version != cv.Version {
		return nil, ocispec.Descriptor{}, fmt.Errorf("%s: %s holds chart %s version %s", what, safeURL(chartURL), meta.Name, meta.Version)
	}
	prov, err := get(ctx, r.hc, chartURL+".prov", maxProvSize)
	if errors.Is(err, errHTTPNotFound) {
		prov, err = nil, nil
	}
	if err != nil {
		return nil, ocispec.Descriptor{}, fmt.Errorf("%s: provenance: %w", what, err)
	}
	created := time.Unix(0, 0).UTC()
	if !cv.Created.IsZero() {
		created = cv.Created.UTC()
	}
	blobs, desc, err := chartManifest(data, prov, meta, created.Format(time.RFC3339))
	if err != nil {
		return nil, ocispec.Descriptor{}, fmt.Errorf("%s: %w", what, err)
	}
	return blobs, desc, nil
}

// chartManifest builds the OCI chart of a .tgz (data), its provenance
// file (prov, nil for none) and its metadata (as Helm's loader reads it
// from data) as helm.sh/helm/v4/pkg/registry/client.go Push and
// tagManifest do: the chart layer, the provenance layer, sorted by digest,
// the config (the metadata as JSON) and the manifest, marshalled by
// encoding/json. It returns every blob by digest and the manifest's
// descriptor.
func chartManifest(data, prov []byte, meta *chart.Metadata, creationTime string) (map[digest.Digest][]byte, ocispec.Descriptor, error) {
	blobs := map[digest.Digest][]byte{}
	add := func(mediaType string, b []byte) ocispec.Descriptor {
		d := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(b), Size: int64(len(b))}
		blobs[d.Digest] = b
		return d
	}
	layers := []ocispec.Descriptor{add(ChartLayerMediaType, data)}
	configData, err := json.Marshal(meta)
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	config := add(ConfigMediaType, configData)
	if prov != nil {
		layers = append(layers, add(ProvLayerMediaType, prov))
	}
	sort.Slice(layers, func(i, j int) bool { return layers[i].Digest < layers[j].Digest })
	manifest := ocispec.Manifest{
		Versioned:   specs.Versioned{SchemaVersion: 2},
		Config:      config,
		Layers:      layers,
		Annotations: ociAnnotations(meta, creationTime),
	}
	manifestData, err := json.Marshal(manifest)
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	return blobs, add(ocispec.MediaTypeImageManifest, manifestData), nil
}

// ociAnnotations replicates helm.sh/helm/v4/pkg/registry/chart.go
// generateOCIAnnotations (unexported there): the chart's description,
// name, version, home, creation time, first source and maintainers as OCI
// annotations, then the chart's own annotations, which may not override
// the title and version.
func ociAnnotations(meta *chart.Metadata, creationTime string) map[string]string {
	out := map[string]string{}
	add := func(k, v string) {
		if strings.TrimSpace(v) != "" {
			out[k] = v
		}
	}
	add(ocispec.AnnotationDescription, meta.Description)
	add(ocispec.AnnotationTitle, meta.Name)
	add(ocispec.AnnotationVersion, meta.Version)
	add(ocispec.AnnotationURL, meta.Home)
	add(ocispec.AnnotationCreated, creationTime)
	if len(meta.Sources) > 0 {
		add(ocispec.AnnotationSource, meta.Sources[0])
	}
	if len(meta.Maintainers) > 0 {
		var sb strings.Builder
		for i, m := range meta.Maintainers {
			if m == nil {
				m = &chart.Maintainer{}
			}
			if m.Name != "" {
				sb.WriteString(m.Name)
			}
			if m.Email != "" {
				sb.WriteString(" (")
				sb.WriteString(m.Email)
				sb.WriteString(")")
			}
			if i < len(meta.Maintainers)-1 {
				sb.WriteString(", ")
			}
		}
		add(ocispec.AnnotationAuthors, sb.String())
	}
	for k, v := range meta.Annotations {
		if k == ocispec.AnnotationVersion || k == ocispec.AnnotationTitle {
			continue
		}
		out[k] = v
	}
	return out
}
