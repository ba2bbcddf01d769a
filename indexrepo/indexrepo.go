// Package indexrepo presents a package of a classic HTTP repository, an
// index.yaml listing each package's versions (download URLs and the
// archive's sha256 digest) next to the archives themselves, as a
// read-only OCI repository (format.Repository). Helm's chart repositories
// and KUDO's operator repositories are such repositories.
//
// The machinery is shared: one index read per repository URL (Cache), one
// tag per version, each version's artifact built lazily on first use
// (download, digest check against the index, then the format's own
// blobs), manifests and blobs found by digest by building versions, and a
// capped GET that never prints credentials. A format supplies only its
// rules (Rules): how to parse its index, how to build a version's
// artifact from the downloaded archive, its size caps and its wording.
package indexrepo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/lazyregexp"
	"github.com/ferryhq/ferry/redact"
)

// ErrHTTPNotFound is returned (wrapped) by Get for a 404 answer.
var ErrHTTPNotFound = errors.New("not found (HTTP 404)")

// Rules are what a format tells about its repositories. Noun, RepoNoun,
// ParseIndex, Build and ErrDigestMismatch are required.
type Rules struct {
	// Noun names a package in messages: "chart", "operator".
	Noun string
	// RepoNoun names a repository in messages: "chart repository".
	RepoNoun string
	// MaxIndexSize is the largest index.yaml read, in bytes.
	MaxIndexSize int64
	// MaxArchiveSize is the largest package archive read, in bytes.
	MaxArchiveSize int64
	// ParseIndex parses index.yaml. Its error is reported as a malformed
	// index of the repository.
	ParseIndex func(data []byte) (Index, error)
	// ResolveURL resolves an index entry's URL (and "index.yaml")
	// against the repository URL; nil is ResolveURL.
	ResolveURL func(repoURL, ref string) (string, error)
	// Build builds a version's artifact from its downloaded archive,
	// which already matches the index's digest. Its error is prefixed
	// with the package, version and repository.
	Build func(ctx context.Context, d *Download) (Artifact, error)
	// ErrDigestMismatch is wrapped by the error of an archive whose
	// sha256 is not the one the index records.
	ErrDigestMismatch error
	// HTTPNotFound is what the error of a 404 answer wraps; nil is
	// ErrHTTPNotFound.
	HTTPNotFound error
}

// Index is a parsed index.yaml: each package name's versions, newest
// first.
type Index map[string][]Version

// Version is one version of a package as the index lists it.
type Version struct {
	// Tag is the version's OCI tag; "" for an archive opened by its URL
	// (OpenArchive), whose tag Build tells.
	Tag string
	// Version is the version as the format writes it, which Resolve
	// accepts as well as Tag (a Helm version with "+", written "_" in its
	// tag), and messages show; "" when it is Tag or unknown.
	Version string
	// URLs are the archive's URLs, tried in turn; relative ones are
	// resolved against the repository URL (Rules.ResolveURL).
	URLs []string
	// Digest is the archive's sha256 the index records, hex, with or
	// without "sha256:"; "" when it records none.
	Digest string
	// Entry is the format's own index entry, handed back to Build.
	Entry any
}

// Download is a version's archive, downloaded and checked, as Build
// receives it.
type Download struct {
	// RepoURL is the repository's URL as given: it may hold credentials,
	// so messages name it through SafeURL.
	RepoURL string
	// SourceURL is the URL of the repository the package is published
	// in: RepoURL, or, for a mirror at RepoURL (OpenMirror), the
	// repository it serves. An artifact that names its repository names
	// this one, so it is the same wherever it was read.
	SourceURL string
	// Name is the package's name; for an archive opened by its URL, the
	// archive's file name.
	Name string
	// Version is the index's entry of the version.
	Version Version
	// Listed is false for an archive opened by its URL (OpenArchive).
	Listed bool
	// URL is the URL the archive was downloaded from.
	URL string
	// Data is the archive, byte for byte.
	Data []byte

	hc    *http.Client
	rules *Rules
}

// Get downloads u with the repository's client, at most max bytes (for a
// file next to the archive); a 404 answer wraps the rules' HTTPNotFound.
func (d *Download) Get(ctx context.Context, u string, max int64) ([]byte, error) {
	return get(ctx, d.hc, u, max, d.rules.httpNotFound())
}

// Artifact is the OCI artifact Build makes of a version.
type Artifact struct {
	// Blobs are the manifest, config and layers, by digest.
	Blobs map[digest.Digest][]byte
	// Manifest is the manifest's descriptor.
	Manifest ocispec.Descriptor
	// Tag is the version's tag, read from the archive; it is used only
	// for a version the index did not tell (OpenArchive).
	Tag string
}

func (r *Rules) resolveURL(repoURL, ref string) (string, error) {
	if r.ResolveURL != nil {
		return r.ResolveURL(repoURL, ref)
	}
	return ResolveURL(repoURL, ref)
}

func (r *Rules) httpNotFound() error {
	if r.HTTPNotFound != nil {
		return r.HTTPNotFound
	}
	return ErrHTTPNotFound
}

// SafeURL returns u without its userinfo, for messages.
func SafeURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return redact.String(u)
	}
	p.User = nil
	return p.String()
}

// ResolveURL resolves ref (an index entry's URL) against the repository
// URL, as a directory.
func ResolveURL(repoURL, ref string) (string, error) {
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

// Get downloads u, at most max bytes; a 404 answer wraps ErrHTTPNotFound.
// What is transient has been retried by hc (client.RetryPolicy in the
// run's transport).
func Get(ctx context.Context, hc *http.Client, u string, max int64) ([]byte, error) {
	return get(ctx, hc, u, max, ErrHTTPNotFound)
}

func get(ctx context.Context, hc *http.Client, u string, max int64, notFound error) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SafeURL(u), redact.Error(err))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, redact.Error(err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("GET %s: %w", SafeURL(u), notFound)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		// The credentials of a repository are the docker config's for
		// its host (client.Client HTTPClient).
		return nil, fmt.Errorf("GET %s: %s (a username and password for %s are read from the docker config: an auths entry or credential helper for that host in the docker config given, $DOCKER_CONFIG/config.json or ~/.docker/config.json)", SafeURL(u), resp.Status, req.URL.Host)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: %s", SafeURL(u), resp.Status)
	case resp.ContentLength > max:
		return nil, fmt.Errorf("GET %s: %d bytes, more than the %d allowed", SafeURL(u), resp.ContentLength, max)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", SafeURL(u), redact.Error(err))
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("GET %s: more than the %d bytes allowed", SafeURL(u), max)
	}
	return data, nil
}

// validTag is the OCI distribution spec's tag grammar.
var validTag = lazyregexp.New(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)

// Cache opens packages of classic HTTP repositories as Repositories. It
// reads each repository's index.yaml once and builds each version's
// artifact once; use one per run and per format (every call passes the
// same rules). It is safe for concurrent use; its zero value is ready.
type Cache struct {
	mu      sync.Mutex
	indexes map[string]*indexLoad
	repos   map[string]*Repository
}

type indexLoad struct {
	once sync.Once
	idx  Index
	err  error
}

// Open returns package name of the repository at repoURL: one tag per
// version its index lists (the first of a tag, and only valid OCI tags).
// It reads REPOURL/index.yaml once per repository URL and fails when the
// index is malformed or does not list name (errdef.ErrNotFound). A nil hc
// is http.DefaultClient.
func (c *Cache) Open(ctx context.Context, rules *Rules, repoURL, name string, hc *http.Client) (*Repository, error) {
	return c.OpenMirror(ctx, rules, repoURL, repoURL, name, hc)
}

// OpenMirror is Open for repoURL, a mirror serving the repository at
// sourceURL (the same index.yaml and archives): it reads repoURL alone,
// and Build sees sourceURL as the package's repository
// (Download.SourceURL).
func (c *Cache) OpenMirror(ctx context.Context, rules *Rules, sourceURL, repoURL, name string, hc *http.Client) (*Repository, error) {
	key := "index\x00" + repoURL + "\x00" + name + "\x00" + sourceURL
	if r := c.cached(key); r != nil {
		return r, nil
	}
	c.mu.Lock()
	l, ok := c.indexes[repoURL]
	if !ok {
		l = &indexLoad{}
		c.indexes[repoURL] = l
	}
	c.mu.Unlock()
	r := newRepository(rules, repoURL, name, hc)
	r.sourceURL = sourceURL
	l.once.Do(func() { l.idx, l.err = loadIndex(ctx, rules, r.hc, repoURL) })
	if l.err != nil {
		return nil, l.err
	}
	versions := l.idx[name]
	if len(versions) == 0 {
		return nil, fmt.Errorf("%s %q: not in the index of %s %s (%w); it lists: %s", rules.Noun, name, rules.RepoNoun, SafeURL(repoURL), errdef.ErrNotFound, names(l.idx))
	}
	seen := map[string]bool{}
	for _, v := range versions {
		if seen[v.Tag] || !validTag.MatchString(v.Tag) {
			continue
		}
		seen[v.Tag] = true
		r.versions = append(r.versions, &slot{v: v, tag: v.Tag})
	}
	return c.store(key, r), nil
}

// OpenArchive returns the archive at archiveURL as a repository of one
// version, whose tag building it tells (Artifact.Tag). repoURL is the
// archive's directory and name its file name, for messages; no index is
// read.
func (c *Cache) OpenArchive(rules *Rules, repoURL, name, archiveURL string, hc *http.Client) *Repository {
	key := "archive\x00" + archiveURL
	if r := c.cached(key); r != nil {
		return r
	}
	r := newRepository(rules, repoURL, name, hc)
	r.archive = true
	r.versions = []*slot{{v: Version{URLs: []string{archiveURL}}}}
	return c.store(key, r)
}

func newRepository(rules *Rules, repoURL, name string, hc *http.Client) *Repository {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Repository{rules: rules, hc: hc, repoURL: repoURL, sourceURL: repoURL, name: name, blobs: map[digest.Digest][]byte{}}
}

func (c *Cache) cached(key string) *Repository {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.repos == nil {
		c.repos = map[string]*Repository{}
		c.indexes = map[string]*indexLoad{}
	}
	return c.repos[key]
}

// store keeps r under key, unless another call stored one first.
func (c *Cache) store(key string, r *Repository) *Repository {
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.repos[key]; ok {
		return prev
	}
	c.repos[key] = r
	return r
}

// names lists an index's package names, sorted, the first 20 at most.
func names(idx Index) string {
	names := make([]string, 0, len(idx))
	for n, vs := range idx {
		if len(vs) > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	const most = 20
	switch {
	case len(names) == 0:
		return "none"
	case len(names) > most:
		return strings.Join(names[:most], ", ") + fmt.Sprintf(", … (%d in all)", len(names))
	}
	return strings.Join(names, ", ")
}

// loadIndex downloads and parses REPOURL/index.yaml.
func loadIndex(ctx context.Context, rules *Rules, hc *http.Client, repoURL string) (Index, error) {
	u, err := rules.resolveURL(repoURL, "index.yaml")
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", rules.RepoNoun, SafeURL(repoURL), redact.Error(err))
	}
	data, err := get(ctx, hc, u, rules.MaxIndexSize, rules.httpNotFound())
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading index.yaml: %w", rules.RepoNoun, SafeURL(repoURL), err)
	}
	idx, err := rules.ParseIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%s %s: malformed index.yaml: %w", rules.RepoNoun, SafeURL(repoURL), err)
	}
	return idx, nil
}

// Repository is one package of a classic HTTP repository (or one archive
// opened by its URL) seen as a read-only OCI repository: one tag per
// version, each resolving to the artifact the format's Build makes of the
// version's archive. Artifacts are built on first use, once.
type Repository struct {
	rules   *Rules
	hc      *http.Client
	repoURL string
	// sourceURL is the repository repoURL serves (see OpenMirror).
	sourceURL string
	name      string
	archive   bool    // opened by the archive's URL
	versions  []*slot // index order: newest first

	mu    sync.Mutex
	blobs map[digest.Digest][]byte // manifests, configs, layers built so far
}

// slot is one version and what building it gave.
type slot struct {
	v Version

	mu       sync.Mutex
	tag      string              // v.Tag, or the one building told
	manifest *ocispec.Descriptor // set once built
	err      error               // set when building failed: not retried in this run
}

var _ format.Repository = (*Repository)(nil)

// atMirror returns where u is read: for a mirror (OpenMirror), a URL
// below the source repository's URL is read at the same place below the
// mirror's, as a copy of the repository serves it (an index.yaml copied
// unchanged names the source's own URLs); any other URL as written.
func (r *Repository) atMirror(u string) string {
	if r.sourceURL == r.repoURL {
		return u
	}
	src := strings.TrimSuffix(r.sourceURL, "/") + "/"
	if rest, ok := strings.CutPrefix(u, src); ok {
		return strings.TrimSuffix(r.repoURL, "/") + "/" + rest
	}
	return u
}

// source returns REPOURL/NAME without userinfo, for messages.
func (r *Repository) source() string { return SafeURL(r.repoURL) + "/" + r.name }

// Tags implements registry.TagLister: every version's tag in index order
// (newest first), those after last when last is set. An archive opened by
// its URL is downloaded to learn its tag.
func (r *Repository) Tags(ctx context.Context, last string, fn func(tags []string) error) error {
	tags := make([]string, 0, len(r.versions))
	for _, v := range r.versions {
		t, err := r.tagOf(ctx, v)
		if err != nil {
			return err
		}
		tags = append(tags, t)
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

// Resolve implements content.Resolver: reference is a tag (or a version as
// the format writes it), a digest, or TAG@DIGEST (the tag is then checked
// against the digest; it saves building every version to find one digest).
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
		version := s.v.Version
		if version == "" {
			version = tag
		}
		return ocispec.Descriptor{}, fmt.Errorf("%s %s: version %s is %s, not %s: %w", r.rules.Noun, r.source(), version, desc.Digest, dgst, errdef.ErrNotFound)
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

// Fetch implements content.Fetcher: a manifest, config or layer of a
// version, by digest.
func (r *Repository) Fetch(ctx context.Context, target ocispec.Descriptor) (io.ReadCloser, error) {
	b, err := r.blob(ctx, target.Digest)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != target.Size {
		return nil, fmt.Errorf("%s %s: %s has %d bytes, not %d: %w", r.rules.Noun, r.source(), target.Digest, len(b), target.Size, errdef.ErrNotFound)
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

// tagOf returns v's tag, building v first when only building tells it.
func (r *Repository) tagOf(ctx context.Context, v *slot) (string, error) {
	v.mu.Lock()
	t := v.tag
	v.mu.Unlock()
	if t != "" {
		return t, nil
	}
	if _, err := r.build(ctx, v); err != nil {
		return "", err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.tag, nil
}

// slot returns the version whose tag (or version) is tag.
func (r *Repository) slot(ctx context.Context, tag string) (*slot, error) {
	for _, v := range r.versions {
		t, err := r.tagOf(ctx, v)
		if err != nil {
			return nil, err
		}
		if t == tag || v.v.Version != "" && v.v.Version == tag {
			return v, nil
		}
	}
	return nil, fmt.Errorf("%s %s: version %s: %w", r.rules.Noun, r.source(), tag, errdef.ErrNotFound)
}

// stored returns a blob built so far.
func (r *Repository) stored(d digest.Digest) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.blobs[d]
	return b, ok
}

// blob returns the blob d, building versions until one holds it (see
// search).
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
	return nil, notFound(fmt.Sprintf("%s %s: %s", r.rules.Noun, r.source(), d), failed)
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
	return ocispec.Descriptor{}, notFound(fmt.Sprintf("%s %s: no version is %s", r.rules.Noun, r.source(), d), failed)
}

// search builds versions until one of them holds d: first the version
// whose index digest is d (d is then its archive layer), then every
// version in index order. A version that fails to build is skipped;
// failed is the first such failure. err is only the context's.
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
			if indexDigest(v.v) == d.Encoded() && try(v) {
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
func indexDigest(v Version) string {
	return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(v.Digest), "sha256:"))
}

// build returns the manifest of version v, building it on first use; a
// failure is remembered and returned again.
func (r *Repository) build(ctx context.Context, v *slot) (ocispec.Descriptor, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.manifest != nil {
		return *v.manifest, nil
	}
	if v.err != nil {
		return ocispec.Descriptor{}, v.err
	}
	a, err := r.synthesize(ctx, v)
	if err != nil {
		if ctx.Err() == nil {
			// The run's client has retried what was transient.
			v.err = err
		}
		return ocispec.Descriptor{}, err
	}
	r.mu.Lock()
	for d, b := range a.Blobs {
		r.blobs[d] = b
	}
	r.mu.Unlock()
	if v.tag == "" {
		v.tag = a.Tag
	}
	v.manifest = &a.Manifest
	return a.Manifest, nil
}

// synthesize downloads version v's archive from the first of its URLs
// that answers, checks it against the index's digest and has the format
// build its artifact. v.mu is held.
func (r *Repository) synthesize(ctx context.Context, v *slot) (Artifact, error) {
	what := fmt.Sprintf("%s %s", r.rules.Noun, r.source())
	if version := v.v.Version; version != "" {
		what += " version " + version
	}
	if len(v.v.URLs) == 0 {
		return Artifact{}, fmt.Errorf("%s: the index lists no URL", what)
	}
	var data []byte
	var archiveURL string
	var lastErr error
	for _, u := range v.v.URLs {
		full, err := r.rules.resolveURL(r.repoURL, u)
		if err != nil {
			lastErr = fmt.Errorf("%s: %w", what, redact.Error(err))
			continue
		}
		full = r.atMirror(full)
		b, err := get(ctx, r.hc, full, r.rules.MaxArchiveSize, r.rules.httpNotFound())
		if err != nil {
			lastErr = fmt.Errorf("%s: %w", what, err)
			continue
		}
		data, archiveURL = b, full
		break
	}
	if data == nil {
		return Artifact{}, lastErr
	}
	sum := sha256.Sum256(data)
	got := hex.EncodeToString(sum[:])
	if want := indexDigest(v.v); want != "" && want != got {
		return Artifact{}, errkind.Mark(errkind.Mismatch, fmt.Errorf("%s: %s: %w: the index says sha256:%s, the download is sha256:%s", what, SafeURL(archiveURL), r.rules.ErrDigestMismatch, want, got))
	}
	a, err := r.rules.Build(ctx, &Download{RepoURL: r.repoURL, SourceURL: r.sourceURL, Name: r.name, Version: v.v, Listed: !r.archive, URL: archiveURL, Data: data, hc: r.hc, rules: r.rules})
	if err != nil {
		return Artifact{}, fmt.Errorf("%s: %w", what, err)
	}
	if v.tag == "" && !validTag.MatchString(a.Tag) {
		return Artifact{}, fmt.Errorf("%s: version %q cannot be an OCI tag", what, a.Tag)
	}
	return a, nil
}
