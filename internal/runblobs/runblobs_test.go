package runblobs

import (
	"bytes"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// TestCache: only bytes that hash to the digest and match the size are
// kept, per source repository; large blobs are not kept; a nil cache
// holds nothing.
func TestCache(t *testing.T) {
	cfg := []byte(`{"created":"2025-01-01T00:00:00Z"}`)
	desc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageConfig, Digest: digest.FromBytes(cfg), Size: int64(len(cfg))}
	big := bytes.Repeat([]byte("x"), MaxBlob+1)
	bigDesc := ocispec.Descriptor{Digest: digest.FromBytes(big), Size: int64(len(big))}
	tests := []struct {
		name     string
		put      []byte
		putDesc  ocispec.Descriptor
		get      string // source asked
		wantKept bool
		wantHit  bool
	}{
		{"kept and answered", cfg, desc, "r/a", true, true},
		{"another source is not answered", cfg, desc, "r/b", true, false},
		{"bytes that do not hash to the digest", []byte(`{"created":"2025-01-02T00:00:00Z"}`), desc, "r/a", false, false},
		{"a size that disagrees", cfg, ocispec.Descriptor{Digest: desc.Digest, Size: desc.Size + 1}, "r/a", false, false},
		{"larger than MaxBlob", big, bigDesc, "r/a", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			if got := c.Put("r/a", tt.putDesc, tt.put); got != tt.wantKept {
				t.Errorf("Put = %v, want %v", got, tt.wantKept)
			}
			b, ok := c.Get(tt.get, tt.putDesc)
			if ok != tt.wantHit {
				t.Fatalf("Get hit = %v, want %v", ok, tt.wantHit)
			}
			if ok && !bytes.Equal(b, tt.put) {
				t.Errorf("Get = %q, want %q", b, tt.put)
			}
		})
	}
	var nilCache *Cache
	if nilCache.Put("r/a", desc, cfg) {
		t.Error("a nil cache kept a blob")
	}
	if _, ok := nilCache.Get("r/a", desc); ok {
		t.Error("a nil cache answered")
	}
}
