package serve

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
)

// Serving blobs straight from the filesystem.
//
// distribution v3 serves every blob GET through a file reader that
// allocates, and zeroes, a 4 MiB buffer per request, whatever the blob's
// size (registry/storage/filereader.go fileReaderBufferSize, used by
// blobserver.go ServeBlob). A closure of a thousand small packages is a
// thousand such buffers: in the W2 benchmark the registry spent most of its
// CPU clearing them, more than the resolver it served. A registry serving
// many concurrent pulls holds 4 MiB per pull.
//
// blobFiles answers GET and HEAD of a blob itself when the repository
// links it, with the headers distribution sends (ServeBlob: ETag,
// Cache-Control, Docker-Content-Digest, Content-Type, Content-Length) and
// ranges through http.ServeContent, as distribution does, reading the file
// in place. Everything else (a blob the repository does not link, a
// malformed name, any other request) goes to distribution unchanged, so
// its answers and errors stay the registry's. It reads the filesystem
// driver's layout (registry/storage/paths.go): the repository's link at
// repositories/NAME/_layers/sha256/HEX/link holds the digest, the content
// is at blobs/sha256/HEX[:2]/HEX/data.

// blobPath matches /v2/NAME/blobs/sha256:HEX, NAME as the distribution
// spec's grammar has it (path components of lower-case alphanumerics
// separated by ".", "_", "__" or dashes), so no component is "." or "..".
var blobPath = regexp.MustCompile(`^/v2/([a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*)/blobs/(sha256:[a-f0-9]{64})$`)

// blobCacheControl is distribution's blobCacheControlMaxAge (a year).
var blobCacheControl = fmt.Sprintf("max-age=%.f", (365 * 24 * time.Hour).Seconds())

// blobFiles serves linked blobs of the registry stored under root from
// their files, and passes every other request to next.
type blobFiles struct {
	root string // the filesystem driver's rootdirectory
	next http.Handler
}

func (b blobFiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		b.next.ServeHTTP(w, r)
		return
	}
	m := blobPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		b.next.ServeHTTP(w, r)
		return
	}
	name, d := m[1], digest.Digest(m[2])
	f, size, ok := b.open(name, d)
	if !ok {
		b.next.ServeHTTP(w, r)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Docker-Distribution-Api-Version", "registry/2.0")
	h.Set("ETag", `"`+d.String()+`"`)
	h.Set("Cache-Control", blobCacheControl)
	h.Set("Docker-Content-Digest", d.String())
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", fmt.Sprint(size))
	http.ServeContent(w, r, d.String(), time.Time{}, f)
}

// open returns the content file of d when repository name links it.
func (b blobFiles) open(name string, d digest.Digest) (*os.File, int64, bool) {
	v2 := filepath.Join(b.root, "docker", "registry", "v2")
	hex := d.Encoded()
	link, err := os.ReadFile(filepath.Join(v2, "repositories", filepath.FromSlash(name), "_layers", "sha256", hex, "link"))
	if err != nil || strings.TrimSpace(string(link)) != d.String() {
		return nil, 0, false
	}
	f, err := os.Open(filepath.Join(v2, "blobs", "sha256", hex[:2], hex, "data"))
	if err != nil {
		return nil, 0, false
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, false
	}
	return f, st.Size(), true
}
