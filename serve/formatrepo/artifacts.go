// Package formatrepo is what a package format uses to answer a protocol
// of its own in `ferry serve` (a Helm chart repository, a KUDO
// repository, Porter's mixin feed) from the OCI artifacts the served
// registry stores: it reads the registry's handler in process
// (HandlerTransport), lists and decodes a format's artifacts (Artifacts)
// and answers a classic index-plus-archives repository (RepoHandler).
//
// It is apart from package serve, which runs the registry itself
// (distribution), so that a format links neither the registry server nor
// its dependencies.
package formatrepo

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
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/lock"
)

// maxServedManifest bounds the manifests an Artifacts reads.
const maxServedManifest = 4 << 20

// ErrNotArtifact is returned (wrapped) by an ArtifactFormat's Decode for a
// manifest that is not one of the format's artifacts: the walk skips it.
var ErrNotArtifact = errors.New("not an artifact of this format")

// ArtifactFormat is what a format supplies to Artifacts to answer a
// repository protocol of its own (a Helm chart repository, a KUDO
// repository) from the artifacts a registry stores: each artifact E is
// stored in a repository named after it (…/NAME) under a tag its version
// gives, and is answered as a file NAME-VERSION.tgz.
type ArtifactFormat[E any] interface {
	// Decode reads the artifact whose image manifest m (desc) blobs
	// holds; ErrNotArtifact (wrapped) when it is not one of the
	// format's.
	Decode(ctx context.Context, blobs content.Fetcher, desc ocispec.Descriptor, m *ocispec.Manifest) (E, error)
	// Name is the artifact's name: the last element of the repository
	// that stores it.
	Name(e E) string
	// Tag is the tag the artifact is stored under.
	Tag(e E) string
	// File is the file name the artifact is answered as; the first
	// repository in catalog order answers a file several hold.
	File(e E) string
	// FileTag returns the tag of a file's VERSION (the part of
	// NAME-VERSION.tgz between NAME- and .tgz).
	FileTag(version string) string
	// Describe names the artifact in messages ("chart nginx 1.0.0").
	Describe(e E) string
}

// Stored is one artifact a registry stores.
type Stored[E any] struct {
	// Repo and Tag are where it was found.
	Repo, Tag string
	// Manifest is its manifest's descriptor.
	Manifest ocispec.Descriptor
	// Created is the manifest's org.opencontainers.image.created
	// annotation, UTC; zero when it has none.
	Created time.Time
	// Entry is what the format decoded.
	Entry E
}

// ArtifactOptions configure NewArtifacts.
type ArtifactOptions struct {
	// Noun names the artifacts in log lines ("chart", "operator").
	Noun string
	// Locked, when not nil, are the only manifest digests served
	// (`ferry serve --lock`; see LockedDigests).
	Locked map[digest.Digest]bool
	// NotLocked is the error (wrapped) for an artifact Locked leaves out;
	// it should say so, naming --lock.
	NotLocked error
	// Log receives a line for each artifact Locked leaves out and each
	// download cut off; nil discards them.
	Log func(format string, args ...any)
}

// Artifacts reads the artifacts of one format that a registry stores, in
// process (through HandlerTransport: neither the network nor credentials
// of its own), for a format's repository protocol. The walk is: the
// catalog, sorted; each repository's tags; each tag's image manifest,
// read once per digest (content-addressed, so cached for the process);
// the format's Decode; the artifact listed only when stored in a
// repository named after it under its own tag and, with Locked, when its
// manifest digest is locked; the first repository in catalog order
// answering a file several hold.
type Artifacts[E any] struct {
	reg  *remote.Registry
	f    ArtifactFormat[E]
	opts ArtifactOptions

	mu    sync.Mutex
	cache map[digest.Digest]*Stored[E] // by manifest digest; Repo and Tag unset
}

// NewArtifacts reads registry (an OCI distribution handler such as
// Server.Registry) for format f.
func NewArtifacts[E any](registry http.Handler, f ArtifactFormat[E], opts ArtifactOptions) (*Artifacts[E], error) {
	reg, err := remote.NewRegistry("ferry.local")
	if err != nil {
		return nil, err
	}
	reg.PlainHTTP = true
	reg.Client = &http.Client{Transport: HandlerTransport(registry)}
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	if opts.NotLocked == nil {
		opts.NotLocked = errors.New("not served: this server was started with a lock and serves only what the lock holds")
	}
	return &Artifacts[E]{reg: reg, f: f, opts: opts, cache: map[digest.Digest]*Stored[E]{}}, nil
}

// LockedDigests returns the manifest digests of l's packages of kind, for
// ArtifactOptions.Locked: a manifest digest pins an artifact's config and
// layers, so where in the registry a locked artifact is stored does not
// matter. An empty (not nil) set for a nil lock.
func LockedDigests(l *lock.Lock, kind string) (map[digest.Digest]bool, error) {
	locked := map[digest.Digest]bool{}
	if l == nil {
		return locked, nil
	}
	for _, p := range l.Packages {
		if p.Kind != kind || p.Digest == "" {
			continue
		}
		d, err := digest.Parse(p.Digest)
		if err != nil {
			return nil, fmt.Errorf("lock: %s %s: %w", kind, p.Source, err)
		}
		locked[d] = true
	}
	return locked, nil
}

// repositories returns the registry's repositories, sorted.
func (a *Artifacts[E]) repositories(ctx context.Context) ([]string, error) {
	var repos []string
	err := a.reg.Repositories(ctx, "", func(list []string) error {
		repos = append(repos, list...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing repositories: %w", err)
	}
	sort.Strings(repos)
	return repos, nil
}

// read returns the artifact repoName holds under tag; ErrNotArtifact
// (wrapped) when it is something else, a not-found error when there is
// no such tag.
func (a *Artifacts[E]) read(ctx context.Context, repoName, tag string) (*Stored[E], error) {
	r, err := a.reg.Repository(ctx, repoName)
	if err != nil {
		return nil, err
	}
	desc, err := r.Resolve(ctx, tag)
	if err != nil {
		return nil, err
	}
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return nil, ErrNotArtifact
	}
	a.mu.Lock()
	c, ok := a.cache[desc.Digest]
	a.mu.Unlock()
	if !ok {
		if desc.Size > maxServedManifest {
			return nil, ErrNotArtifact
		}
		raw, err := content.FetchAll(ctx, r, desc) // checks the digest
		if err != nil {
			return nil, err
		}
		var m ocispec.Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, ErrNotArtifact
		}
		e, err := a.f.Decode(ctx, r.Blobs(), desc, &m)
		if err != nil {
			return nil, err
		}
		c = &Stored[E]{Manifest: desc, Entry: e}
		if t, err := time.Parse(time.RFC3339, m.Annotations[ocispec.AnnotationCreated]); err == nil {
			c.Created = t.UTC()
		}
		a.mu.Lock()
		a.cache[desc.Digest] = c
		a.mu.Unlock()
	}
	cc := *c
	cc.Repo, cc.Tag = repoName, tag
	return &cc, nil
}

// servable reports whether s is one the repository lists: stored in a
// repository named after it and under its own tag (ErrNotArtifact
// otherwise), and locked when Locked is set (NotLocked otherwise).
func (a *Artifacts[E]) servable(s *Stored[E]) error {
	if path.Base(s.Repo) != a.f.Name(s.Entry) || a.f.Tag(s.Entry) != s.Tag {
		return ErrNotArtifact
	}
	if a.opts.Locked != nil && !a.opts.Locked[s.Manifest.Digest] {
		return fmt.Errorf("%s (%s:%s@%s) is %w", a.f.Describe(s.Entry), s.Repo, s.Tag, s.Manifest.Digest, a.opts.NotLocked)
	}
	return nil
}

// why is servable's NotLocked error without NotLocked's own text, for
// log lines: "chart nginx 1.0.0 (REPO:TAG@DIGEST)".
func (a *Artifacts[E]) why(err error) string {
	return strings.TrimSuffix(err.Error(), " is "+a.opts.NotLocked.Error())
}

// List returns every artifact the repository serves, in catalog and tag
// order, the first repository in catalog order for a file several hold.
// Artifacts Locked leaves out are logged.
func (a *Artifacts[E]) List(ctx context.Context) ([]*Stored[E], error) {
	repos, err := a.repositories(ctx)
	if err != nil {
		return nil, err
	}
	var out []*Stored[E]
	seen := map[string]bool{}
	for _, repoName := range repos {
		r, err := a.reg.Repository(ctx, repoName)
		if err != nil {
			return nil, err
		}
		tags, err := client.ListTags(ctx, r)
		if IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing tags of %s: %w", repoName, err)
		}
		for _, tag := range tags {
			s, err := a.read(ctx, repoName, tag)
			if errors.Is(err, ErrNotArtifact) || IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("%s:%s: %w", repoName, tag, err)
			}
			if err := a.servable(s); err != nil {
				if errors.Is(err, a.opts.NotLocked) {
					a.opts.Log("%s index: leaving out %s", a.opts.Noun, a.why(err))
				}
				continue
			}
			if f := a.f.File(s.Entry); !seen[f] {
				seen[f] = true
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// Find returns the artifact answered as file (NAME-VERSION.tgz): NAME is
// the last element of a repository, FileTag(VERSION) its tag. It fails
// with NotLocked (wrapped) when Locked leaves the artifact out, and with
// errdef.ErrNotFound when no repository holds it.
func (a *Artifacts[E]) Find(ctx context.Context, file string) (*Stored[E], error) {
	version, ok := strings.CutSuffix(file, ".tgz")
	if !ok {
		return nil, errdef.ErrNotFound
	}
	repos, err := a.repositories(ctx)
	if err != nil {
		return nil, err
	}
	var refused error
	for _, repoName := range repos {
		v, ok := strings.CutPrefix(version, path.Base(repoName)+"-")
		if !ok {
			continue
		}
		tag := a.f.FileTag(v)
		s, err := a.read(ctx, repoName, tag)
		if errors.Is(err, ErrNotArtifact) || IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%s: %w", repoName, tag, err)
		}
		if err := a.servable(s); err != nil {
			if errors.Is(err, a.opts.NotLocked) && refused == nil {
				refused = err
			}
			continue
		}
		if a.f.File(s.Entry) != file {
			continue
		}
		return s, nil
	}
	if refused != nil {
		return nil, refused
	}
	return nil, errdef.ErrNotFound
}

// ServeFile answers file (NAME-VERSION.tgz, as Find reads it) with the
// layer that layer picks from its artifact (false: 404), checked against
// its digest while it is sent: a layer whose stored bytes differ is cut
// off before its last byte, the connection aborted and a line logged. An
// artifact Locked leaves out is answered 404 saying why, and logged.
func (a *Artifacts[E]) ServeFile(w http.ResponseWriter, r *http.Request, file string, layer func(e E) (ocispec.Descriptor, bool)) {
	s, err := a.Find(r.Context(), file)
	switch {
	case errors.Is(err, a.opts.NotLocked):
		a.opts.Log("%s download refused: %s", a.opts.Noun, a.why(err))
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	case IsNotFound(err):
		http.NotFound(w, r)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	desc, ok := layer(s.Entry)
	if !ok {
		http.NotFound(w, r)
		return
	}
	rr, err := a.reg.Repository(r.Context(), s.Repo)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	rc, err := rr.Blobs().Fetch(r.Context(), desc)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(desc.Size, 10))
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(w, VerifiedReader(rc, desc.Digest, desc.Size)); err != nil {
		a.opts.Log("%s download cut off: %s %s: %v", a.opts.Noun, s.Repo, path.Base(r.URL.Path), err)
		// The status is sent; cut the connection so that the client sees
		// a truncated download rather than a complete one.
		panic(http.ErrAbortHandler)
	}
}

// ServeBytes answers b (an index) with its type and length; nothing for
// HEAD.
func ServeBytes(w http.ResponseWriter, r *http.Request, contentType string, b []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(b)
}

// IsNotFound reports whether err says that a repository, tag or blob does
// not exist.
func IsNotFound(err error) bool {
	if errors.Is(err, errdef.ErrNotFound) {
		return true
	}
	var er *errcode.ErrorResponse
	return errors.As(err, &er) && er.StatusCode == http.StatusNotFound
}

// Deferred is an http.Handler that `ferry serve` mounts before the
// registry starts and sets once it runs (a format's repository handler
// reads the registry in process). It answers 503 until set. Its zero
// value is ready.
type Deferred struct {
	h atomic.Pointer[http.Handler]
}

// Set makes d answer with h.
func (d *Deferred) Set(h http.Handler) { d.h.Store(&h) }

// ServeHTTP implements http.Handler.
func (d *Deferred) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := d.h.Load()
	if h == nil {
		http.Error(w, "the registry is starting", http.StatusServiceUnavailable)
		return
	}
	(*h).ServeHTTP(w, r)
}
