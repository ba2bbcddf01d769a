package kudo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"sigs.k8s.io/yaml"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/serve/formatrepo"
)

// RepoPath is the URL path below which `ferry serve` answers a KUDO
// repository: `kubectl kudo repo add mirror http://HOST:PORT/kudo`.
const RepoPath = "/kudo/"

// maxServedConfig bounds the package configs the repository reads.
const maxServedConfig = 1 << 20

// ErrNotLocked is returned (wrapped) for a package `ferry serve --lock`
// does not serve because the lock does not hold its manifest.
var ErrNotLocked = errors.New("not served: this server was started with a lock and serves only the KUDO operators the lock holds")

// RepoHandler answers a KUDO repository from the package artifacts a
// registry stores (see the package documentation):
//
//	GET /kudo/index.yaml                 every stored package version
//	GET /kudo/NAME-VERSION.tgz           the package tarball, digest-checked
//
// A package is an image manifest whose config media type is
// ConfigMediaType, in a repository named after the operator (…/NAME, as
// `ferry mirror` writes TO/kudo-operators/NAME) and tagged with its
// version (APPVERSION_OPERATORVERSION, or OPERATORVERSION alone). When
// several repositories hold one version, the first in catalog order
// answers (the walk is formatrepo.Artifacts').
//
// It is mounted in `ferry serve` before the registry starts, and bound to
// the registry's handler once it runs; it reads that handler in process,
// so it needs neither the network nor credentials of its own. It answers
// 503 until bound.
type RepoHandler = formatrepo.RepoHandler[*storedOperator]

// NewRepoHandler returns an unbound RepoHandler, for `ferry serve` to
// mount at RepoPath. Bind serves every stored version; BindLocked, for
// `ferry serve --lock`, only those whose manifest digest the lock holds
// among its packages of kind KindKudoOperator.
func NewRepoHandler() *RepoHandler {
	return formatrepo.NewRepoHandler(formatrepo.RepoConfig[*storedOperator]{
		Path: RepoPath, Kind: format.KindKudoOperator, Noun: "operator", NotLocked: ErrNotLocked, Format: operatorFormat{},
		Index: func(a *formatrepo.Artifacts[*storedOperator]) http.HandlerFunc {
			return (&operatorStore{a: a}).serveIndex
		},
		File: func(a *formatrepo.Artifacts[*storedOperator]) http.HandlerFunc {
			return (&operatorStore{a: a}).serveFile
		},
	})
}

// storedOperator is one package version a registry stores.
type storedOperator struct {
	cfg   Config
	layer ocispec.Descriptor
}

// operatorFormat is the KUDO package's formatrepo.ArtifactFormat.
type operatorFormat struct{}

// Decode reads a package artifact's manifest and config (Artifact writes
// them); the tarball is read only when it is downloaded.
func (operatorFormat) Decode(ctx context.Context, blobs content.Fetcher, _ ocispec.Descriptor, m *ocispec.Manifest) (*storedOperator, error) {
	if m.Config.MediaType != ConfigMediaType || m.Config.Size > maxServedConfig {
		return nil, formatrepo.ErrNotArtifact
	}
	o := &storedOperator{}
	for _, l := range m.Layers {
		if l.MediaType == PackageLayerMediaType {
			if o.layer.Digest != "" {
				return nil, formatrepo.ErrNotArtifact // more than one tarball
			}
			o.layer = l
		}
	}
	// The index's digest is the tarball's sha256 (KUDO writes no other).
	if o.layer.Digest.Validate() != nil || o.layer.Digest.Algorithm() != digest.SHA256 {
		return nil, formatrepo.ErrNotArtifact
	}
	cb, err := content.FetchAll(ctx, blobs, m.Config)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(cb, &o.cfg); err != nil || o.cfg.Name == "" || o.cfg.OperatorVersion == "" {
		return nil, formatrepo.ErrNotArtifact
	}
	return o, nil
}

// Name is the operator's name.
func (operatorFormat) Name(o *storedOperator) string { return o.cfg.Name }

// Tag is the package's version, APPVERSION_OPERATORVERSION.
func (operatorFormat) Tag(o *storedOperator) string {
	return versionTag(o.cfg.AppVersion, o.cfg.OperatorVersion)
}

// File is KUDO's tarball name, NAME-VERSION.tgz.
func (operatorFormat) File(o *storedOperator) string { return tarballFileName(o.cfg) }

// FileTag is the tag of a tarball name's version: the same string.
func (operatorFormat) FileTag(version string) string { return version }

// Describe names the package in messages.
func (f operatorFormat) Describe(o *storedOperator) string {
	return fmt.Sprintf("operator %s %s", o.cfg.Name, f.Tag(o))
}

// servedIndex is index.yaml as KUDO writes it: kudobuilder/kudo
// pkg/kudoctl/util/repo/index.go IndexFile (apiVersion "v1", as
// newIndexFile sets it), marshalled by IndexFile.Write with
// sigs.k8s.io/yaml.
type servedIndex struct {
	APIVersion string                      `json:"apiVersion"`
	Entries    map[string][]*servedVersion `json:"entries"`
	Generated  *time.Time                  `json:"generated"`
}

// servedVersion is index.go PackageVersion with its Metadata
// (pkg/kudoctl/util/repo/repo.go) inlined. Description and maintainers
// (omitempty there) are not written: they are in the tarball, which the
// index does not read.
type servedVersion struct {
	Name            string   `json:"name,omitempty"`
	OperatorVersion string   `json:"operatorVersion"`
	AppVersion      string   `json:"appVersion,omitempty"`
	URLs            []string `json:"urls"`
	Removed         bool     `json:"removed,omitempty"`
	Digest          string   `json:"digest,omitempty"`
}

// operatorStore answers the repository's requests.
type operatorStore struct {
	a *formatrepo.Artifacts[*storedOperator]
}

// serveIndex answers index.yaml. Each version's digest is its tarball's
// sha256 in bare hex, as KUDO computes it (pkg/kudoctl/files Sha256Sum,
// written by index.go ToPackageVersion), and each version lists one URL:
// the tarball below the URL the index was requested at, absolute, as
// `kubectl kudo repo index --url` writes it (ToPackageVersion), since
// KUDO's client downloads an entry's URLs as they are written, without
// resolving them against the repository (resolver_repo.go
// getPackageBytesByURL). Versions are sorted newest first, as
// IndexFile.WriteFile sorts them.
func (s *operatorStore) serveIndex(w http.ResponseWriter, r *http.Request) {
	ops, err := s.a.List(r.Context())
	if err != nil {
		http.Error(w, "listing operators: "+err.Error(), http.StatusBadGateway)
		return
	}
	base := requestBase(r)
	generated := time.Unix(0, 0).UTC()
	byName := map[string][]*IndexVersion{}
	served := map[*IndexVersion]*servedVersion{}
	for _, o := range ops {
		if o.Created.After(generated) {
			generated = o.Created
		}
		c := o.Entry.cfg
		iv := &IndexVersion{Name: c.Name, AppVersion: c.AppVersion, OperatorVersion: c.OperatorVersion}
		byName[c.Name] = append(byName[c.Name], iv)
		served[iv] = &servedVersion{
			Name:            c.Name,
			OperatorVersion: c.OperatorVersion,
			AppVersion:      c.AppVersion,
			URLs:            []string{base + tarballFileName(c)},
			Digest:          o.Entry.layer.Digest.Encoded(),
		}
	}
	idx := servedIndex{APIVersion: "v1", Entries: map[string][]*servedVersion{}, Generated: &generated}
	for name, vs := range byName {
		SortNewestFirst(vs)
		for _, iv := range vs {
			idx.Entries[name] = append(idx.Entries[name], served[iv])
		}
	}
	out, err := yaml.Marshal(idx)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	formatrepo.ServeBytes(w, r, "application/x-yaml", out)
}

// requestBase is the absolute URL of the folder r's path is in, by the
// scheme and host the client reached the server by.
func requestBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.Path[:strings.LastIndexByte(r.URL.Path, '/')+1]
}

// serveFile answers NAME-VERSION.tgz with the package tarball, checked
// against its digest while it is sent: a tarball whose stored bytes
// differ is cut off before its last byte.
func (s *operatorStore) serveFile(w http.ResponseWriter, r *http.Request) {
	s.a.ServeFile(w, r, r.PathValue("file"), func(o *storedOperator) (ocispec.Descriptor, bool) {
		return o.layer, true
	})
}
