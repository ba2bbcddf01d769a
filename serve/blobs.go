package serve

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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
// storageFiles (files.go) answers GET and HEAD of a blob itself when the
// repository links it, with the headers distribution sends (ServeBlob: ETag,
// Cache-Control, Docker-Content-Digest, Content-Type, Content-Length) and
// ranges through http.ServeContent, as distribution does, reading the file
// in place. Everything else (a blob the repository does not link, a
// malformed name, any other request) goes to distribution unchanged, so
// its answers and errors stay the registry's. It reads the filesystem
// driver's layout (registry/storage/paths.go): the repository's link at
// repositories/NAME/_layers/sha256/HEX/link holds the digest, the content
// is at blobs/sha256/HEX[:2]/HEX/data.

// blobCacheControl is distribution's blobCacheControlMaxAge (a year:
// 365 * 24 * 3600 seconds), as registry/handlers/blobserver.go words it.
const blobCacheControl = "max-age=31536000"

// serveBlob answers a GET or HEAD of blob d of repository name from its
// file, and reports false, having written nothing, when the repository
// does not link it.
func (s storageFiles) serveBlob(w http.ResponseWriter, r *http.Request, name string, d digest.Digest) bool {
	f, size, ok := s.open(name, d)
	if !ok {
		return false
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
	return true
}

// open returns the content file of d when repository name links it.
func (s storageFiles) open(name string, d digest.Digest) (*os.File, int64, bool) {
	if link, ok := readLink(s.repo(name, "_layers", "sha256", d.Encoded(), "link")); !ok || link != d {
		return nil, 0, false
	}
	return s.blobFile(d)
}

// blobFile opens the content of d in the blob store: a regular file.
func (s storageFiles) blobFile(d digest.Digest) (*os.File, int64, bool) {
	hex := d.Encoded()
	f, err := os.Open(filepath.Join(s.v2(), "blobs", "sha256", hex[:2], hex, "data"))
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
