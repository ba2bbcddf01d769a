package kudo

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
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"go.yaml.in/yaml/v3"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/redact"
)

// SourcePrefix prefixes the http(s) URL of a KUDO repository package's
// source, so that Helm's classic repositories (plain http(s) URLs) and
// KUDO's never claim each other's sources: "kudo+https://HOST/PATH/NAME".
const SourcePrefix = "kudo+"

// maxIndexSize is the largest index.yaml read.
const maxIndexSize = 64 << 20

// ErrDigestMismatch is returned (wrapped) when a package tarball does not
// have the sha256 digest the repository's index.yaml records for it.
var ErrDigestMismatch = errors.New("package tarball does not match the repository index's digest")

// IndexFile is a KUDO repository's index.yaml (kudobuilder/kudo
// pkg/kudoctl/util/repo/index.go IndexFile).
type IndexFile struct {
	APIVersion string                     `yaml:"apiVersion"`
	Entries    map[string][]*IndexVersion `yaml:"entries"`
}

// IndexVersion is one entry of index.yaml (index.go PackageVersion with
// its Metadata inlined).
type IndexVersion struct {
	Name            string   `yaml:"name"`
	OperatorVersion string   `yaml:"operatorVersion"`
	AppVersion      string   `yaml:"appVersion,omitempty"`
	URLs            []string `yaml:"urls"`
	Digest          string   `yaml:"digest,omitempty"`
	Removed         bool     `yaml:"removed,omitempty"`
}

// Tag is the version's OCI tag (see Package.Version).
func (v *IndexVersion) Tag() string { return versionTag(v.AppVersion, v.OperatorVersion) }

// ParseIndex parses index.yaml as KUDO does (index.go ParseIndexFile): an
// apiVersion is required, every entry needs an operatorVersion, and each
// package's versions are sorted newest first.
func ParseIndex(data []byte) (*IndexFile, error) {
	var idx IndexFile
	if err := yaml.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("unmarshalling index file: %w", err)
	}
	if idx.APIVersion == "" {
		return nil, errors.New("validating index file: no API version defined")
	}
	for name, vs := range idx.Entries {
		for _, v := range vs {
			if v == nil || v.OperatorVersion == "" {
				return nil, fmt.Errorf("validating index file: package %s is missing an operator version", name)
			}
		}
		SortNewestFirst(vs)
	}
	return &idx, nil
}

// SortNewestFirst sorts versions as KUDO's index does (index.go
// PackageVersions.Less, reversed): by appVersion, then operatorVersion,
// newest first; a version that is not semver sorts last.
func SortNewestFirst(vs []*IndexVersion) {
	sort.SliceStable(vs, func(i, j int) bool {
		return newer(vs[i].AppVersion, vs[i].OperatorVersion, vs[j].AppVersion, vs[j].OperatorVersion)
	})
}

// newer reports whether (app1, opv1) sorts before (app2, opv2), newest
// first.
func newer(app1, opv1, app2, opv2 string) bool {
	c := cmpVersion(app1, app2)
	if c == 0 {
		c = cmpVersion(opv1, opv2)
	}
	return c > 0
}

// cmpVersion compares two versions as semver; one that does not parse is
// older than one that does. An empty appVersion does not parse.
func cmpVersion(a, b string) int {
	va, ea := semver.NewVersion(a)
	vb, eb := semver.NewVersion(b)
	switch {
	case ea != nil && eb != nil:
		return strings.Compare(a, b)
	case ea != nil:
		return -1
	case eb != nil:
		return 1
	}
	return va.Compare(vb)
}

// validTag is the OCI distribution spec's tag grammar.
var validTag = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)

// SplitSource splits a package source: "kudo+https://HOST/PATH/NAME" is
// package NAME of repository "https://HOST/PATH"; a last element ending
// in .tgz or .tar.gz is a package tarball's URL (name is then the file
// name, tarball true).
func SplitSource(source string) (repoURL, name string, tarball, ok bool) {
	rest, found := strings.CutPrefix(source, SourcePrefix)
	if !found {
		return "", "", false, false
	}
	lower := strings.ToLower(rest)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") || strings.ContainsAny(rest, "?#") {
		return "", "", false, false
	}
	i := strings.LastIndexByte(rest, '/')
	repoURL, name = rest[:i], rest[i+1:]
	if name == "" {
		return "", "", false, false
	}
	u, err := url.Parse(repoURL)
	if err != nil || u.Host == "" {
		return "", "", false, false
	}
	tarball = strings.HasSuffix(name, ".tgz") || strings.HasSuffix(name, ".tar.gz")
	return repoURL, name, tarball, true
}

// Source returns the source of package name in repository repoURL.
func Source(repoURL, name string) string {
	return SourcePrefix + strings.TrimSuffix(repoURL, "/") + "/" + name
}

// MirrorPath returns where a package lands below a mirror's HOST/PREFIX:
// "kudo-operators/NAME" (PRODUCT.md "KUDO operator package"). For a
// tarball URL, NAME is the file name without its extension and version
// (KUDO names tarballs NAME-APP_OPV.tgz or NAME-OPV.tgz,
// pkg/kudoctl/packages/writer/writer_tar.go). "" for a source SplitSource
// refuses.
func MirrorPath(source string) string {
	_, name, tarball, ok := SplitSource(source)
	if !ok {
		return ""
	}
	if tarball {
		name = tarballName(name)
	}
	return "kudo-operators/" + name
}

// tarballVersion matches the version suffix of a tarball's file name.
var tarballVersion = regexp.MustCompile(`-[0-9][^/]*$`)

func tarballName(file string) string {
	file = strings.TrimSuffix(strings.TrimSuffix(file, ".tgz"), ".tar.gz")
	return tarballVersion.ReplaceAllString(file, "")
}

// safeURL returns u without userinfo, for messages.
func safeURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return redact.String(u)
	}
	p.User = nil
	return p.String()
}

// resolveURL resolves ref (an index entry's URL) against the repository.
func resolveURL(repoURL, ref string) (string, error) {
	base, err := url.Parse(strings.TrimSuffix(repoURL, "/") + "/")
	if err != nil {
		return "", err
	}
	r, err := url.Parse(ref)
	if err != nil {
		return "", err
	}
	return base.ResolveReference(r).String(), nil
}

// get downloads u, at most max bytes.
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
		return nil, fmt.Errorf("GET %s: %w", safeURL(u), errdef.ErrNotFound)
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

// RepoCache opens KUDO repository packages as read-only OCI repositories
// (see Open). It reads each repository's index.yaml once per process and
// builds each version's artifact once. Safe for concurrent use; its zero
// value is ready.
type RepoCache struct {
	mu      sync.Mutex
	indexes map[string]*indexLoad
	repos   map[string]*Repository
}

type indexLoad struct {
	once sync.Once
	idx  *IndexFile
	err  error
}

// NewRepoCache returns an empty RepoCache.
func NewRepoCache() *RepoCache { return &RepoCache{} }

// Open returns source ("kudo+https://REPO/NAME", or a tarball URL with
// the kudo+ prefix) as a read-only repository with one tag per version,
// APPVERSION_OPERATORVERSION, each resolving to an artifact holding the
// version's exact tarball (see the package documentation for its media
// types). It reads REPO/index.yaml once per repository URL and fails when
// the index does not list NAME.
func (c *RepoCache) Open(source string, hc *http.Client) (format.Repository, error) {
	return c.open(context.Background(), source, hc)
}

func (c *RepoCache) open(ctx context.Context, source string, hc *http.Client) (*Repository, error) {
	repoURL, name, tarball, ok := SplitSource(source)
	if !ok {
		return nil, fmt.Errorf("%s: not a KUDO package source (want kudo+https://REPOSITORY/NAME)", safeURL(source))
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	c.mu.Lock()
	if c.repos == nil {
		c.repos = map[string]*Repository{}
		c.indexes = map[string]*indexLoad{}
	}
	if r, ok := c.repos[source]; ok {
		c.mu.Unlock()
		return r, nil
	}
	var l *indexLoad
	if !tarball {
		l = c.indexes[repoURL]
		if l == nil {
			l = &indexLoad{}
			c.indexes[repoURL] = l
		}
	}
	c.mu.Unlock()
	r := &Repository{hc: hc, repoURL: repoURL, name: name, tarball: tarball, blobs: map[digest.Digest][]byte{}}
	if tarball {
		r.versions = []*slot{{iv: &IndexVersion{URLs: []string{strings.TrimPrefix(source, SourcePrefix)}}}}
	} else {
		l.once.Do(func() { l.idx, l.err = loadIndex(ctx, hc, repoURL) })
		if l.err != nil {
			return nil, l.err
		}
		vs := l.idx.Entries[name]
		if len(vs) == 0 {
			return nil, fmt.Errorf("operator %q: not in the index of KUDO repository %s (%w); it lists: %s", name, safeURL(repoURL), errdef.ErrNotFound, entryNames(l.idx))
		}
		seen := map[string]bool{}
		for _, v := range vs {
			t := v.Tag()
			if seen[t] || !validTag.MatchString(t) {
				continue
			}
			seen[t] = true
			r.versions = append(r.versions, &slot{iv: v, tag: t})
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.repos[source]; ok {
		return prev, nil
	}
	c.repos[source] = r
	return r, nil
}

func entryNames(idx *IndexFile) string {
	names := make([]string, 0, len(idx.Entries))
	for n, vs := range idx.Entries {
		if len(vs) > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 20 {
		return strings.Join(names[:20], ", ") + fmt.Sprintf(", … (%d in all)", len(names))
	}
	return strings.Join(names, ", ")
}

// loadIndex downloads and parses REPOURL/index.yaml
// (pkg/kudoctl/util/repo/repo.go DownloadIndexFile reads
// "index.yaml" below the repository URL).
func loadIndex(ctx context.Context, hc *http.Client, repoURL string) (*IndexFile, error) {
	u, err := resolveURL(repoURL, "index.yaml")
	if err != nil {
		return nil, fmt.Errorf("KUDO repository %s: %w", safeURL(repoURL), err)
	}
	data, err := get(ctx, hc, u, maxIndexSize)
	if err != nil {
		return nil, fmt.Errorf("KUDO repository %s: reading index.yaml: %w", safeURL(repoURL), err)
	}
	idx, err := ParseIndex(data)
	if err != nil {
		return nil, fmt.Errorf("KUDO repository %s: malformed index.yaml: %w", safeURL(repoURL), err)
	}
	return idx, nil
}

// Repository is one KUDO package of a repository (or one package tarball
// URL) seen as a read-only OCI repository. Artifacts are built on first
// use, once.
type Repository struct {
	hc       *http.Client
	repoURL  string
	name     string
	tarball  bool
	versions []*slot // newest first

	mu    sync.Mutex
	blobs map[digest.Digest][]byte
}

type slot struct {
	iv  *IndexVersion
	tag string // "" for a tarball URL until built

	mu       sync.Mutex
	manifest *ocispec.Descriptor
	err      error
}

var _ format.Repository = (*Repository)(nil)

func (r *Repository) source() string { return safeURL(r.repoURL) + "/" + r.name }

// Tags implements registry.TagLister: every version, newest first (a
// tarball URL's one version is downloaded to learn it).
func (r *Repository) Tags(ctx context.Context, last string, fn func(tags []string) error) error {
	var tags []string
	for _, v := range r.versions {
		if v.tag == "" {
			if _, err := r.build(ctx, v); err != nil {
				return err
			}
		}
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

// Resolve implements content.Resolver: a tag, a digest or TAG@DIGEST.
func (r *Repository) Resolve(ctx context.Context, reference string) (ocispec.Descriptor, error) {
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
		return r.findManifest(ctx, d)
	}
	s, err := r.slot(ctx, tag)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	desc, err := r.build(ctx, s)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	if dgst != "" && desc.Digest.String() != dgst {
		return ocispec.Descriptor{}, fmt.Errorf("operator %s: version %s is %s, not %s: %w", r.source(), tag, desc.Digest, dgst, errdef.ErrNotFound)
	}
	return desc, nil
}

// FetchReference implements registry.ReferenceFetcher.
func (r *Repository) FetchReference(ctx context.Context, reference string) (ocispec.Descriptor, io.ReadCloser, error) {
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

// Fetch implements content.Fetcher: a version's manifest, config or
// package layer, by digest.
func (r *Repository) Fetch(ctx context.Context, target ocispec.Descriptor) (io.ReadCloser, error) {
	b, err := r.blob(ctx, target.Digest)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != target.Size {
		return nil, fmt.Errorf("operator %s: %s has %d bytes, not %d: %w", r.source(), target.Digest, len(b), target.Size, errdef.ErrNotFound)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

// Exists implements content.ReadOnlyStorage.
func (r *Repository) Exists(ctx context.Context, target ocispec.Descriptor) (bool, error) {
	b, err := r.blob(ctx, target.Digest)
	if errors.Is(err, errdef.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return int64(len(b)) == target.Size, nil
}

func (r *Repository) slot(ctx context.Context, tag string) (*slot, error) {
	for _, v := range r.versions {
		if v.tag == "" {
			if _, err := r.build(ctx, v); err != nil {
				return nil, err
			}
		}
		if v.tag == tag {
			return v, nil
		}
	}
	return nil, fmt.Errorf("operator %s: version %s: %w", r.source(), tag, errdef.ErrNotFound)
}

func (r *Repository) stored(d digest.Digest) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.blobs[d]
	return b, ok
}

// blob returns blob d, building versions until one holds it: first the
// version whose index digest is d (its package layer), then all.
func (r *Repository) blob(ctx context.Context, d digest.Digest) ([]byte, error) {
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
	return nil, notFound(fmt.Sprintf("operator %s: %s", r.source(), d), failed)
}

func notFound(what string, failed error) error {
	if failed != nil {
		return fmt.Errorf("%s: %w (and %w)", what, errdef.ErrNotFound, failed)
	}
	return fmt.Errorf("%s: %w", what, errdef.ErrNotFound)
}

func (r *Repository) findManifest(ctx context.Context, d digest.Digest) (ocispec.Descriptor, error) {
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
	return ocispec.Descriptor{}, notFound(fmt.Sprintf("operator %s: no version is %s", r.source(), d), failed)
}

func (r *Repository) search(ctx context.Context, d digest.Digest) (failed, err error) {
	try := func(v *slot) bool {
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
			if indexDigest(v.iv) == d.Encoded() && try(v) {
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

// indexDigest is the sha256 hex an index entry records (KUDO writes the
// bare hex, pkg/kudoctl/files Sha256Sum), lower case.
func indexDigest(v *IndexVersion) string {
	return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(v.Digest), "sha256:"))
}

func (r *Repository) build(ctx context.Context, v *slot) (ocispec.Descriptor, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.manifest != nil {
		return *v.manifest, nil
	}
	if v.err != nil {
		return ocispec.Descriptor{}, v.err
	}
	blobs, desc, tag, err := r.synthesize(ctx, v.iv)
	if err != nil {
		if ctx.Err() == nil {
			v.err = err
		}
		return ocispec.Descriptor{}, err
	}
	r.mu.Lock()
	for d, b := range blobs {
		r.blobs[d] = b
	}
	r.mu.Unlock()
	v.tag = tag
	v.manifest = &desc
	return desc, nil
}

// synthesize downloads a version's tarball, checks it against the index
// digest, reads it, and builds its artifact. KUDO tries each of an
// entry's URLs in turn (pkg/kudoctl/util/repo/resolver_repo.go
// getPackageReaderByAPackageURL); so does ferry.
func (r *Repository) synthesize(ctx context.Context, iv *IndexVersion) (map[digest.Digest][]byte, ocispec.Descriptor, string, error) {
	what := fmt.Sprintf("operator %s", r.source())
	if !r.tarball {
		what = fmt.Sprintf("operator %s version %s", r.source(), iv.Tag())
	}
	if len(iv.URLs) == 0 {
		return nil, ocispec.Descriptor{}, "", fmt.Errorf("%s: the index lists no URL", what)
	}
	var data []byte
	var pkgURL string
	var lastErr error
	for _, u := range iv.URLs {
		full, err := resolveURL(r.repoURL, u)
		if err != nil {
			lastErr = fmt.Errorf("%s: %w", what, redact.Error(err))
			continue
		}
		b, err := get(ctx, r.hc, full, MaxPackageSize)
		if err != nil {
			lastErr = fmt.Errorf("%s: %w", what, err)
			continue
		}
		data, pkgURL = b, full
		break
	}
	if data == nil {
		return nil, ocispec.Descriptor{}, "", lastErr
	}
	sum := sha256.Sum256(data)
	got := hex.EncodeToString(sum[:])
	if want := indexDigest(iv); want != "" && want != got {
		return nil, ocispec.Descriptor{}, "", exitcode.With(exitcode.Mismatch, fmt.Errorf("%s: %s: %w: the index says sha256:%s, the download is sha256:%s", what, safeURL(pkgURL), ErrDigestMismatch, want, got))
	}
	p, err := LoadArchive(data)
	if err != nil {
		return nil, ocispec.Descriptor{}, "", fmt.Errorf("%s: %s: %w", what, safeURL(pkgURL), err)
	}
	o := p.Operator
	if !r.tarball && (o.Name != r.name || o.AppVersion != iv.AppVersion || o.OperatorVersion != iv.OperatorVersion) {
		return nil, ocispec.Descriptor{}, "", fmt.Errorf("%s: %s holds operator %s version %s", what, safeURL(pkgURL), o.Name, p.Version())
	}
	if !validTag.MatchString(p.Version()) {
		return nil, ocispec.Descriptor{}, "", fmt.Errorf("%s: version %q cannot be an OCI tag", what, p.Version())
	}
	repoURL := r.repoURL
	if r.tarball {
		repoURL = ""
	}
	blobs, desc, err := Artifact(data, Config{Name: o.Name, AppVersion: o.AppVersion, OperatorVersion: o.OperatorVersion, Repository: repoURL})
	if err != nil {
		return nil, ocispec.Descriptor{}, "", fmt.Errorf("%s: %w", what, err)
	}
	return blobs, desc, p.Version(), nil
}

// Config is the config blob of a package artifact (ConfigMediaType).
type Config struct {
	Name            string `json:"name"`
	AppVersion      string `json:"appVersion,omitempty"`
	OperatorVersion string `json:"operatorVersion"`
	// Repository is the repository URL the package was published in,
	// without the kudo+ prefix; the package's repository-name
	// dependencies are looked up there. Empty for a package read from a
	// tarball URL.
	Repository string `json:"repository,omitempty"`
}

// Artifact builds the OCI artifact of a package tarball: a manifest with
// artifactType ArtifactType, config cfg as JSON, and one layer holding
// data, byte for byte. The same inputs give the same manifest digest. It
// returns every blob by digest and the manifest's descriptor.
func Artifact(data []byte, cfg Config) (map[digest.Digest][]byte, ocispec.Descriptor, error) {
	blobs := map[digest.Digest][]byte{}
	add := func(mediaType string, b []byte) ocispec.Descriptor {
		d := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(b), Size: int64(len(b))}
		blobs[d.Digest] = b
		return d
	}
	cb, err := json.Marshal(cfg)
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	layer := add(PackageLayerMediaType, data)
	layer.Annotations = map[string]string{ocispec.AnnotationTitle: tarballFileName(cfg)}
	m := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactType,
		Config:       add(ConfigMediaType, cb),
		Layers:       []ocispec.Descriptor{layer},
		Annotations: map[string]string{
			ocispec.AnnotationTitle:   cfg.Name,
			ocispec.AnnotationVersion: versionTag(cfg.AppVersion, cfg.OperatorVersion),
		},
	}
	mb, err := json.Marshal(m)
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	return blobs, add(ocispec.MediaTypeImageManifest, mb), nil
}

// tarballFileName is KUDO's tarball name, NAME-APP_OPV.tgz or
// NAME-OPV.tgz (writer_tar.go packageVersionedName).
func tarballFileName(cfg Config) string {
	return cfg.Name + "-" + versionTag(cfg.AppVersion, cfg.OperatorVersion) + ".tgz"
}
