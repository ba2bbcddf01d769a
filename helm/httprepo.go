package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	chart "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2"
	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/loader"
	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/indexrepo"
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

// RepoCache opens charts of classic HTTP chart repositories as read-only
// OCI repositories (see Open). It reads each repository's index.yaml once
// and builds each chart version's manifest once; use one per run. It is
// safe for concurrent use; its zero value is ready.
//
// Credentials for HTTP repositories (basic auth, client certificates) are
// not supported yet: the run's *http.Client is used as it is.
type RepoCache struct{ cache indexrepo.Cache }

// NewRepoCache returns an empty RepoCache.
func NewRepoCache() *RepoCache { return &RepoCache{} }

// HTTPRepository is one chart of a classic HTTP repository seen as a
// read-only OCI repository (see RepoCache.Open): one tag per version the
// index lists, each resolving to the manifest `helm push` writes for the
// version's .tgz.
type HTTPRepository = indexrepo.Repository

// Open returns the chart named by source (REPOURL/NAME, see SplitSource)
// as a read-only repository holding, for every version the repository's
// index lists, exactly the OCI chart `helm push` writes for its .tgz. It
// reads REPOURL/index.yaml (once per repository URL) and fails when the
// index is malformed or does not list NAME. Its tags are the versions,
// "+" written "_", newest first; Resolve also takes a version with "+".
func (c *RepoCache) Open(source string, hc *http.Client) (format.Repository, error) {
	repoURL, name, ok := SplitSource(source)
	if !ok {
		return nil, fmt.Errorf("%s: not a chart in an HTTP repository (want https://HOST/PATH/NAME)", indexrepo.SafeURL(source))
	}
	r, err := c.cache.Open(context.Background(), chartRepoRules(), repoURL, name, hc)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// chartRepoRules returns a classic chart repository's rules (a function:
// a package-level Rules naming ErrDigestMismatch would be built by an
// initialiser at every start).
func chartRepoRules() *indexrepo.Rules {
	return &indexrepo.Rules{
		Noun:              "chart",
		RepoNoun:          "chart repository",
		MaxIndexSize:      maxIndexSize,
		MaxArchiveSize:    maxChartSize,
		ParseIndex:        parseIndex,
		ErrDigestMismatch: ErrDigestMismatch,
		// index.yaml as helm.sh/helm/v4/pkg/repo/v1/chartrepo.go
		// DownloadIndexFile finds it, and relative chart URLs as
		// FindChartInRepoURL resolves them.
		ResolveURL: resolveReferenceURL,
		Build:      buildChart,
	}
}

// parseIndex parses index.yaml by Helm's rules (loadIndex: invalid
// entries dropped, each chart's versions sorted newest first, as `helm
// repo update` reads it).
func parseIndex(data []byte) (indexrepo.Index, error) {
	idx, err := loadIndex(data, "index.yaml")
	if err != nil {
		return nil, err
	}
	out := indexrepo.Index{}
	for name, cvs := range idx.Entries {
		for _, cv := range cvs {
			v := indexrepo.Version{Tag: chartTag(cv.Version), Version: cv.Version, Digest: cv.Digest, Entry: cv}
			if len(cv.URLs) > 0 {
				// Helm downloads a chart from its first URL only
				// (pkg/repo/v1/chartrepo.go FindChartInRepoURL).
				v.URLs = cv.URLs[:1]
			}
			out[name] = append(out[name], v)
		}
	}
	return out, nil
}

// buildChart reads a version's .tgz, downloads its .prov if the
// repository has one, and builds the OCI chart `helm push` writes for
// them (helm.sh/helm/v4/pkg/registry/client.go Push), with the index's
// `created` as creation time so that the manifest is the same on every
// run (helm push uses the .tgz file's modification time:
// pkg/pusher/ocipusher.go).
func buildChart(ctx context.Context, d *indexrepo.Download) (indexrepo.Artifact, error) {
	cv := d.Version.Entry.(*chartVersion)
	ch, err := loader.LoadArchive(bytes.NewReader(d.Data))
	if err != nil {
		return indexrepo.Artifact{}, fmt.Errorf("%s is not a chart archive: %w", indexrepo.SafeURL(d.URL), err)
	}
	meta := ch.Metadata
	if meta.Name != d.Name || meta.Version != cv.Version {
		return indexrepo.Artifact{}, errkind.Markf(errkind.Mismatch, "%s holds chart %s version %s, but the index lists it as %s version %s: "+
			"an older release may have been moved under a newer version; refusing it", indexrepo.SafeURL(d.URL), meta.Name, meta.Version, d.Name, cv.Version)
	}
	prov, err := d.Get(ctx, d.URL+".prov", maxProvSize)
	if errors.Is(err, indexrepo.ErrHTTPNotFound) {
		prov, err = nil, nil
	}
	if err != nil {
		return indexrepo.Artifact{}, fmt.Errorf("provenance: %w", err)
	}
	created := time.Unix(0, 0).UTC()
	if !cv.Created.IsZero() {
		created = cv.Created.UTC()
	}
	blobs, desc, err := chartManifest(d.Data, prov, meta, created.Format(time.RFC3339))
	if err != nil {
		return indexrepo.Artifact{}, err
	}
	return indexrepo.Artifact{Blobs: blobs, Manifest: desc}, nil
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
