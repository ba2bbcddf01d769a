// Package runblobs keeps the small blobs (image configs) that one ferry
// mirror run's resolution read from its sources, so that the copy after
// it does not read them again. A blob is kept only when its bytes hash to
// its digest and match its size, so what the cache answers is exactly
// what the source would send (content addressing).
//
// The cache lives for one mirror run and is handed to the copy's source
// reads alone: verification (ferry verify, --deep) never sees it, since
// it must read every blob from the registry it checks.
package runblobs

import (
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Bounds: a blob larger than MaxBlob is not kept, and the cache stops
// growing at MaxTotal bytes.
const (
	MaxBlob  = 64 << 10
	MaxTotal = 16 << 20
)

// Cache holds blobs by source repository and digest. The zero value is
// not usable; a nil *Cache keeps and answers nothing.
type Cache struct {
	mu   sync.Mutex
	m    map[key][]byte
	size int64
}

type key struct {
	source string
	digest digest.Digest
}

// New returns an empty cache.
func New() *Cache { return &Cache{m: map[key][]byte{}} }

// Put keeps data as desc's content read from source, when it is small
// enough, matches desc's size and hashes to its digest; otherwise it
// keeps nothing. It reports whether data was kept (or already held).
func (c *Cache) Put(source string, desc ocispec.Descriptor, data []byte) bool {
	if c == nil || int64(len(data)) != desc.Size || desc.Size > MaxBlob || desc.Digest.Validate() != nil {
		return false
	}
	if desc.Digest.Algorithm().FromBytes(data) != desc.Digest {
		return false
	}
	k := key{source, desc.Digest}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok {
		return true
	}
	if c.size+desc.Size > MaxTotal {
		return false
	}
	c.m[k] = append([]byte(nil), data...)
	c.size += desc.Size
	return true
}

// Get returns desc's content as read from source, if the cache holds it.
// The bytes are shared: callers must not change them.
func (c *Cache) Get(source string, desc ocispec.Descriptor) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[key{source, desc.Digest}]
	if !ok || int64(len(b)) != desc.Size {
		return nil, false
	}
	return b, true
}
