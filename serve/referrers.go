package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/ferryhq/ferry/internal/forked/distribution/registry/auth"
	"github.com/ferryhq/ferry/internal/lazyregexp"
	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// The OCI distribution spec v1.1 referrers API, which distribution v3
// lacks.
//
// distribution stores a manifest with a subject like any other, and its
// router has no /referrers/ route. referrers sits in front of it and
// answers, as the spec's "Listing Referrers" and "Pushing Manifests with
// Subject" sections (distribution-spec spec.md) have it:
//   - GET /v2/NAME/referrers/DIGEST: 200 with an image index
//     (application/vnd.oci.image.index.v1+json) whose manifests are the
//     descriptors of the repository's manifests whose subject is DIGEST,
//     each with the manifest's artifactType, or for an image manifest
//     without one its config's mediaType, and its annotations. Always
//     200, with an empty list when nothing refers to DIGEST, or when the
//     repository or DIGEST is unknown. ?artifactType=T keeps the
//     descriptors of that artifactType and answers
//     "OCI-Filters-Applied: artifactType".
//   - PUT /v2/NAME/manifests/REF of a manifest with a subject: on success
//     (201) the response carries "OCI-Subject: SUBJECT-DIGEST", telling the
//     client the registry keeps referrers itself, so it need not maintain
//     the referrers tag schema.
//
// The referrers of a repository come from its storage, not from the
// requests this server saw, so content written by another process or
// before a restart is listed: the filesystem driver's layout
// (registry/storage/paths.go) lists each manifest of a repository as a
// directory repositories/NAME/_manifests/revisions/sha256/HEX holding a
// link file. refIndex remembers, per repository, each revision it has read
// (its subject and descriptor); a request lists the revisions directory
// (names only) and reads only manifests it has not seen, then keeps the
// referrers whose link file still names them (a deleted manifest loses
// its link). A GET of referrers costs one directory listing and a stat
// per referrer, plus one read per manifest pushed since the last one.

// referrersPath matches /v2/NAME/referrers/DIGEST (any algorithm, so a
// sha512 subject gets an empty list rather than distribution's 404).
var referrersPath = lazyregexp.New(`^/v2/` + namePattern + `/referrers/([a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+)$`)

// referrers answers the referrers API and adds OCI-Subject to manifest
// PUTs, passing everything else to next.
type referrers struct {
	files storageFiles
	next  http.Handler
	// bearer, with token authentication, authorises referrers requests
	// (pull on the repository), which distribution's router never sees.
	bearer auth.AccessController

	mu    sync.Mutex
	repos map[string]*refIndex
}

// refIndex is what referrers knows of one repository's manifests.
type refIndex struct {
	// seen maps each revision read to its subject ("" for none) and
	// descriptor.
	seen map[digest.Digest]refEntry
}

type refEntry struct {
	subject digest.Digest
	desc    ocispec.Descriptor
}

func newReferrers(files storageFiles, next http.Handler, bearer auth.AccessController) *referrers {
	return &referrers{files: files, next: next, bearer: bearer, repos: map[string]*refIndex{}}
}

func (h *referrers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case (r.Method == http.MethodGet || r.Method == http.MethodHead) && strings.Contains(p, "/referrers/"):
		if m := referrersPath.FindStringSubmatch(p); m != nil {
			h.serveReferrers(w, r, m[1], digest.Digest(m[2]))
			return
		}
	case r.Method == http.MethodPut && strings.Contains(p, "/manifests/"):
		h.putManifest(w, r)
		return
	}
	h.next.ServeHTTP(w, r)
}

// putManifest passes a manifest PUT to next, adding OCI-Subject to its
// 201 when the manifest names a subject.
func (h *referrers) putManifest(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxManifestFile+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "MANIFEST_INVALID", "reading the manifest: "+err.Error())
		return
	}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	var m struct {
		Subject *ocispec.Descriptor `json:"subject"`
	}
	if len(body) <= maxManifestFile && json.Unmarshal(body, &m) == nil && m.Subject != nil && m.Subject.Digest != "" {
		w = &subjectWriter{ResponseWriter: w, subject: m.Subject.Digest.String()}
	}
	h.next.ServeHTTP(w, r2)
}

// subjectWriter sets OCI-Subject on a 201 answer.
type subjectWriter struct {
	http.ResponseWriter
	subject string
	wrote   bool
}

func (s *subjectWriter) WriteHeader(code int) {
	if !s.wrote && code == http.StatusCreated {
		s.Header().Set("OCI-Subject", s.subject)
	}
	s.wrote = true
	s.ResponseWriter.WriteHeader(code)
}

func (s *subjectWriter) Write(b []byte) (int, error) {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (s *subjectWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// serveReferrers answers GET /v2/NAME/referrers/SUBJECT.
func (h *referrers) serveReferrers(w http.ResponseWriter, r *http.Request, name string, subject digest.Digest) {
	if h.bearer != nil {
		_, err := h.bearer.Authorized(r, auth.Access{Resource: auth.Resource{Type: "repository", Name: name}, Action: "pull"})
		if err != nil {
			var ch auth.Challenge
			if errors.As(err, &ch) {
				ch.SetHeaders(r, w)
				writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", "authentication required")
				return
			}
			writeError(w, http.StatusInternalServerError, "UNKNOWN", "cannot check credentials")
			return
		}
	}
	descs, err := h.list(name, subject)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "UNKNOWN", "listing referrers: "+err.Error())
		return
	}
	if at, ok := r.URL.Query()["artifactType"]; ok && len(at) > 0 && at[0] != "" {
		kept := descs[:0]
		for _, d := range descs {
			if d.ArtifactType == at[0] {
				kept = append(kept, d)
			}
		}
		descs = kept
		w.Header().Set("OCI-Filters-Applied", "artifactType")
	}
	body, err := json.Marshal(ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageIndex,
		Manifests: descs,
	})
	if err != nil {
		writeError(w, http.StatusInternalServerError, "UNKNOWN", err.Error())
		return
	}
	hd := w.Header()
	hd.Set("Docker-Distribution-Api-Version", "registry/2.0")
	hd.Set("Content-Type", ocispec.MediaTypeImageIndex)
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// list returns the descriptors of repository name's manifests whose
// subject is subject, sorted by digest; never nil.
func (h *referrers) list(name string, subject digest.Digest) ([]ocispec.Descriptor, error) {
	dir := h.files.repo(name, "_manifests", "revisions", "sha256")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		// No such repository: nothing to remember either.
		h.mu.Lock()
		delete(h.repos, name)
		h.mu.Unlock()
		return []ocispec.Descriptor{}, nil
	}
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	idx := h.repos[name]
	if idx == nil {
		idx = &refIndex{seen: map[digest.Digest]refEntry{}}
		h.repos[name] = idx
	}
	present := make(map[digest.Digest]bool, len(entries))
	for _, e := range entries {
		d := digest.NewDigestFromEncoded(digest.SHA256, e.Name())
		if _, ok := idx.seen[d]; ok {
			present[d] = true // validated when first read
			continue
		}
		if d.Validate() != nil {
			continue
		}
		present[d] = true
		ent, ok := h.read(d)
		if !ok {
			continue // no link yet, or not a manifest: read again next time
		}
		idx.seen[d] = ent
	}
	for d := range idx.seen {
		if !present[d] {
			delete(idx.seen, d)
		}
	}
	descs := []ocispec.Descriptor{}
	for d, ent := range idx.seen {
		if ent.subject != subject {
			continue
		}
		// A deleted manifest keeps its directory but loses its link.
		if link, ok := readLink(h.files.repo(name, "_manifests", "revisions", "sha256", d.Encoded(), "link")); !ok || link != d {
			continue
		}
		descs = append(descs, ent.desc)
	}
	sort.Slice(descs, func(i, j int) bool { return descs[i].Digest < descs[j].Digest })
	return descs, nil
}

// read reads manifest d from the blob store and returns its subject and
// its descriptor as the referrers API lists it.
func (h *referrers) read(d digest.Digest) (refEntry, bool) {
	f, size, ok := h.files.blobFile(d)
	if !ok {
		return refEntry{}, false
	}
	defer f.Close()
	if size > maxManifestFile {
		return refEntry{subject: ""}, true // no manifest distribution accepts
	}
	content := make([]byte, size)
	if n, _ := f.ReadAt(content, 0); n != len(content) {
		return refEntry{}, false
	}
	var m struct {
		MediaType    string              `json:"mediaType"`
		ArtifactType string              `json:"artifactType"`
		Config       *ocispec.Descriptor `json:"config"`
		Subject      *ocispec.Descriptor `json:"subject"`
		Annotations  map[string]string   `json:"annotations"`
	}
	if json.Unmarshal(content, &m) != nil || m.Subject == nil {
		return refEntry{}, true // remembered as referring to nothing
	}
	at := m.ArtifactType
	if at == "" && m.MediaType == ocispec.MediaTypeImageManifest && m.Config != nil {
		// "If the artifactType is empty or missing in an image manifest,
		// the value of artifactType MUST be set to the config descriptor
		// mediaType value" (spec.md, Listing Referrers).
		at = m.Config.MediaType
	}
	return refEntry{
		subject: m.Subject.Digest,
		desc: ocispec.Descriptor{
			MediaType:    m.MediaType,
			ArtifactType: at,
			Digest:       d,
			Size:         size,
			Annotations:  m.Annotations,
		},
	}, true
}
