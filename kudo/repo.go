package kudo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"go.yaml.in/yaml/v3"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/indexrepo"
	"github.com/ferryhq/ferry/internal/lazyregexp"
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
var tarballVersion = lazyregexp.New(`-[0-9][^/]*$`)

func tarballName(file string) string {
	file = strings.TrimSuffix(strings.TrimSuffix(file, ".tgz"), ".tar.gz")
	return tarballVersion.ReplaceAllString(file, "")
}

// RepoCache opens KUDO repository packages as read-only OCI repositories
// (see Open). It reads each repository's index.yaml once per process and
// builds each version's artifact once. Safe for concurrent use; its zero
// value is ready.
type RepoCache struct{ cache indexrepo.Cache }

// NewRepoCache returns an empty RepoCache.
func NewRepoCache() *RepoCache { return &RepoCache{} }

// Repository is one KUDO package of a repository (or one package tarball
// URL) seen as a read-only OCI repository (see RepoCache.Open).
type Repository = indexrepo.Repository

// Open returns source ("kudo+https://REPO/NAME", or a tarball URL with
// the kudo+ prefix) as a read-only repository with one tag per version,
// APPVERSION_OPERATORVERSION, each resolving to an artifact holding the
// version's exact tarball (see the package documentation for its media
// types). It reads REPO/index.yaml once per repository URL and fails when
// the index does not list NAME; a tarball URL's one version is learnt by
// downloading it.
func (c *RepoCache) Open(source string, hc *http.Client) (format.Repository, error) {
	repoURL, name, tarball, ok := SplitSource(source)
	if !ok {
		return nil, fmt.Errorf("%s: not a KUDO package source (want kudo+https://REPOSITORY/NAME)", indexrepo.SafeURL(source))
	}
	if tarball {
		return c.cache.OpenArchive(repoRules(), repoURL, name, strings.TrimPrefix(source, SourcePrefix), hc), nil
	}
	r, err := c.cache.Open(context.Background(), repoRules(), repoURL, name, hc)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// OpenMirror is Open for location, a mirror of source's repository (the
// same index.yaml and tarballs, ferry.yaml `mirrors:`): it reads location
// alone, and each artifact's config names source's repository, as Open of
// source would build it, so its digest and the repository its
// dependencies are looked up in do not depend on where it was read.
func (c *RepoCache) OpenMirror(source, location string, hc *http.Client) (format.Repository, error) {
	srcURL, _, srcTarball, ok := SplitSource(source)
	repoURL, name, tarball, ok2 := SplitSource(location)
	if !ok || !ok2 || tarball || srcTarball {
		return c.Open(location, hc)
	}
	r, err := c.cache.OpenMirror(context.Background(), repoRules(), srcURL, repoURL, name, hc)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// repoRules returns a KUDO repository's rules. index.yaml is read below
// the repository URL (pkg/kudoctl/util/repo/repo.go DownloadIndexFile).
// A function: a package-level Rules naming other variables would be built
// by an initialiser at every start.
func repoRules() *indexrepo.Rules {
	return &indexrepo.Rules{
		Noun:              "operator",
		RepoNoun:          "KUDO repository",
		MaxIndexSize:      maxIndexSize,
		MaxArchiveSize:    MaxPackageSize,
		ParseIndex:        parseIndex,
		Build:             buildPackage,
		ErrDigestMismatch: ErrDigestMismatch,
		HTTPNotFound:      errdef.ErrNotFound,
	}
}

// parseIndex parses index.yaml (ParseIndex) into each package's versions,
// newest first. KUDO tries each of an entry's URLs in turn
// (pkg/kudoctl/util/repo/resolver_repo.go getPackageReaderByAPackageURL);
// so does ferry. KUDO writes the digest as bare hex (pkg/kudoctl/files
// Sha256Sum).
func parseIndex(data []byte) (indexrepo.Index, error) {
	idx, err := ParseIndex(data)
	if err != nil {
		return nil, err
	}
	out := indexrepo.Index{}
	for name, vs := range idx.Entries {
		for _, v := range vs {
			out[name] = append(out[name], indexrepo.Version{Tag: v.Tag(), Version: v.Tag(), URLs: v.URLs, Digest: v.Digest, Entry: v})
		}
	}
	return out, nil
}

// buildPackage reads a version's tarball, checks that it is the package
// and version the index says, and builds its artifact (Artifact).
func buildPackage(_ context.Context, d *indexrepo.Download) (indexrepo.Artifact, error) {
	p, err := LoadArchive(d.Data)
	if err != nil {
		return indexrepo.Artifact{}, fmt.Errorf("%s: %w", indexrepo.SafeURL(d.URL), err)
	}
	o := p.Operator
	repoURL := ""
	if d.Listed {
		iv := d.Version.Entry.(*IndexVersion)
		if o.Name != d.Name || o.AppVersion != iv.AppVersion || o.OperatorVersion != iv.OperatorVersion {
			return indexrepo.Artifact{}, errkind.Markf(errkind.Mismatch, "%s holds operator %s version %s, but the index lists it as %s version %s: "+
				"an older release may have been moved under a newer version; refusing it",
				indexrepo.SafeURL(d.URL), o.Name, p.Version(), d.Name, versionTag(iv.AppVersion, iv.OperatorVersion))
		}
		repoURL = d.SourceURL
	}
	blobs, desc, err := Artifact(d.Data, Config{Name: o.Name, AppVersion: o.AppVersion, OperatorVersion: o.OperatorVersion, Repository: repoURL})
	if err != nil {
		return indexrepo.Artifact{}, err
	}
	return indexrepo.Artifact{Blobs: blobs, Manifest: desc, Tag: p.Version()}, nil
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
