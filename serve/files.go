package serve

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/internal/lazyregexp"
)

// Answering the hottest reads from the storage's files.
//
// Resolving a closure is mostly small reads: for each package a tag list,
// a manifest or two and a small blob. distribution answers each through
// its whole stack: a repository and its middlewares set up per request, a
// notification event built for every manifest pulled, the manifest
// unmarshalled to learn its type, and a tag list made by walking every
// file under every tag's directory (registry/storage/tagstore.go List,
// with the filesystem driver's Walk, which stats each entry). On the W2
// benchmark that was most of the registry's CPU, on the 2 cores the
// resolver shares with it.
//
// storageFiles answers three reads itself, from the filesystem driver's
// layout (registry/storage/paths.go), with the status, headers and body
// distribution sends (TestStorageFiles compares them); any other request,
// and any case it does not take below, goes to distribution unchanged, so
// errors and everything unusual stay the registry's own:
//   - GET and HEAD of a blob the repository links (blobs.go);
//   - GET and HEAD of a manifest by tag or sha256 digest, as
//     handlers/manifests.go GetManifest, for OCI image manifests and
//     indexes that name their mediaType, without If-None-Match;
//   - GET of the whole tag list, with no query, as handlers/tags.go
//     GetTags.

// Repository names as the distribution spec's grammar has them (path
// components of lower-case alphanumerics separated by ".", "_", "__" or
// dashes), so no component is "." or ".."; tags as its tag grammar.
const (
	namePattern   = `([a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*)`
	digestPattern = `sha256:[a-f0-9]{64}`
	tagPattern    = `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`
)

var (
	// blobPath matches /v2/NAME/blobs/sha256:HEX.
	blobPath = lazyregexp.New(`^/v2/` + namePattern + `/blobs/(` + digestPattern + `)$`)
	// manifestPath matches /v2/NAME/manifests/TAG or .../sha256:HEX.
	manifestPath = lazyregexp.New(`^/v2/` + namePattern + `/manifests/(` + digestPattern + `|` + tagPattern + `)$`)
	// tagsPath matches /v2/NAME/tags/list.
	tagsPath = lazyregexp.New(`^/v2/` + namePattern + `/tags/list$`)
)

// maxManifestFile is the largest manifest storageFiles reads:
// distribution's own limit on a manifest PUT (handlers/manifests.go
// maxManifestBodySize). A larger file is left to distribution.
const maxManifestFile = 4 << 20

// storageFiles answers the reads above for the registry stored under root
// (the filesystem driver's rootdirectory) and passes every other request
// to next.
type storageFiles struct {
	root string
	next http.Handler
}

func (s storageFiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.serve(w, r) {
		return
	}
	s.next.ServeHTTP(w, r)
}

// serve answers r itself and reports true, or reports false having
// written nothing.
func (s storageFiles) serve(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p := r.URL.Path
	switch {
	case strings.Contains(p, "/blobs/"):
		if m := blobPath.FindStringSubmatch(p); m != nil {
			return s.serveBlob(w, r, m[1], digest.Digest(m[2]))
		}
	case strings.Contains(p, "/manifests/"):
		if m := manifestPath.FindStringSubmatch(p); m != nil {
			return s.serveManifest(w, r, m[1], m[2])
		}
	case strings.HasSuffix(p, "/tags/list"):
		if m := tagsPath.FindStringSubmatch(p); m != nil && r.Method == http.MethodGet && r.URL.RawQuery == "" {
			return s.serveTags(w, m[1])
		}
	}
	return false
}

// v2 is the filesystem driver's docker/registry/v2 directory.
func (s storageFiles) v2() string { return filepath.Join(s.root, "docker", "registry", "v2") }

// repo is repository name's directory.
func (s storageFiles) repo(name string, parts ...string) string {
	return filepath.Join(append([]string{s.v2(), "repositories", filepath.FromSlash(name)}, parts...)...)
}

// readLink reads a link file: a sha256 digest.
func readLink(path string) (digest.Digest, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	d, err := digest.Parse(strings.TrimSpace(string(b)))
	if err != nil || d.Algorithm() != digest.SHA256 {
		return "", false
	}
	return d, true
}

// serveManifest answers a manifest GET or HEAD as GetManifest does: the
// tag's current link names the digest, the repository's revision link
// must exist, and the content is read from the blob store. It takes only
// OCI image manifests and indexes whose mediaType field names them, which
// manifeststore.go Get unmarshals as ocischema types; their Payload is the
// stored bytes, with the mediaType as Content-Type. As in GetManifest, an
// image manifest is served only to a client that accepts its type, and
// an index whatever the Accept header says (GetManifest checks index
// support only for manifestlist's type, not ocischema's
// DeserializedImageIndex); a refusal is left to distribution.
func (s storageFiles) serveManifest(w http.ResponseWriter, r *http.Request, name, ref string) bool {
	if _, ok := r.Header["If-None-Match"]; ok {
		return false // GetManifest's etagMatch, left to it
	}
	d := digest.Digest(ref)
	if !strings.HasPrefix(ref, "sha256:") {
		var ok bool
		if d, ok = readLink(s.repo(name, "_manifests", "tags", ref, "current", "link")); !ok {
			return false
		}
	}
	if link, ok := readLink(s.repo(name, "_manifests", "revisions", "sha256", d.Encoded(), "link")); !ok || link != d {
		return false
	}
	f, size, ok := s.blobFile(d)
	if !ok {
		return false
	}
	defer f.Close()
	if size > maxManifestFile {
		return false
	}
	content := make([]byte, size)
	if n, err := f.ReadAt(content, 0); err != nil || n != len(content) {
		return false
	}
	var versioned struct {
		SchemaVersion int    `json:"schemaVersion"`
		MediaType     string `json:"mediaType"`
	}
	if json.Unmarshal(content, &versioned) != nil || versioned.SchemaVersion != 2 {
		return false
	}
	switch versioned.MediaType {
	case ocispec.MediaTypeImageManifest:
		if !accepts(r, ocispec.MediaTypeImageManifest) {
			return false
		}
	case ocispec.MediaTypeImageIndex:
	default:
		return false
	}
	h := w.Header()
	h.Set("Docker-Distribution-Api-Version", "registry/2.0")
	h.Set("Content-Type", versioned.MediaType)
	h.Set("Content-Length", fmt.Sprint(len(content)))
	h.Set("Docker-Content-Digest", d.String())
	h.Set("Etag", `"`+d.String()+`"`)
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return true
	}
	_, _ = w.Write(content)
	return true
}

// accepts reports whether the request's Accept headers name mediaType,
// parsed as GetManifest parses them: each header split on ",", each part
// read by mime.ParseMediaType, parameters (q=) ignored.
func accepts(r *http.Request, mediaType string) bool {
	for _, h := range r.Header["Accept"] {
		for part := range strings.SplitSeq(h, ",") {
			if t, _, err := mime.ParseMediaType(part); err == nil && t == mediaType {
				return true
			}
		}
	}
	return false
}

// serveTags answers a GET of a repository's whole tag list (no n, no
// last) as GetTags does: every entry of _manifests/tags, sorted, as
// {"name":NAME,"tags":[...]} with Content-Type application/json. A
// repository without that directory is left to distribution (its
// NAME_UNKNOWN).
func (s storageFiles) serveTags(w http.ResponseWriter, name string) bool {
	entries, err := os.ReadDir(s.repo(name, "_manifests", "tags"))
	if err != nil {
		return false
	}
	tags := make([]string, 0, len(entries))
	for _, e := range entries {
		tags = append(tags, e.Name())
	}
	sort.Strings(tags)
	h := w.Header()
	h.Set("Docker-Distribution-Api-Version", "registry/2.0")
	h.Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct {
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}{name, tags})
	return true
}
