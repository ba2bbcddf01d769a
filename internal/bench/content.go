// Package bench is the driver behind `make bench`: deterministic workload
// generators (PRODUCT.md's W1-W4), loopback registries (`ferry serve`
// subprocesses), a recording and delaying reverse proxy, the fault
// benchmark (first runs through internal/faultproxy), the peer tools'
// command lines, and the BENCHMARKS.md report. Nothing here is part of
// `make test`, and nothing here asserts a wall-clock time: timings are
// measured, compared with peer tools in the same run, and written down.
package bench

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Random returns a reader of size pseudo-random bytes determined by seed
// alone (ChaCha8 keyed with SHA-256 of seed). It holds no more than one
// small buffer, so it streams blobs of any size.
func Random(seed string, size int64) io.Reader {
	return io.LimitReader(rand.NewChaCha8(sha256.Sum256([]byte(seed))), size)
}

// Layer returns a reader of a real image layer: a gzip stream of a tar
// holding one file, "data/blob", of size bytes of Random(seed, size). The
// gzip stream uses stored (uncompressed) deflate blocks, so the layer is
// about size bytes long and cheap to make, and its headers carry no names
// or times, so the same seed and size always give the same bytes. The
// stream is produced by a goroutine as it is read; closing the reader
// stops it.
func Layer(seed string, size int64) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(writeLayer(pw, seed, size))
	}()
	return pr
}

func writeLayer(w io.Writer, seed string, size int64) error {
	zw, err := gzip.NewWriterLevel(w, gzip.NoCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg, Name: "data/blob", Mode: 0o644, Size: size,
		ModTime: time.Unix(0, 0), Format: tar.FormatPAX,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.Copy(tw, Random(seed, size)); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// LayerBytes returns Layer(seed, size) in memory, for small layers.
func LayerBytes(seed string, size int64) ([]byte, error) {
	r := Layer(seed, size)
	defer r.Close()
	return io.ReadAll(r)
}

// LayerDescriptor streams Layer(seed, size) once to compute its digest and
// length, without holding it in memory.
func LayerDescriptor(seed string, size int64) (ocispec.Descriptor, error) {
	r := Layer(seed, size)
	defer r.Close()
	h := digest.Canonical.Digester()
	n, err := io.Copy(h.Hash(), r)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("layer %q: %w", seed, err)
	}
	return ocispec.Descriptor{MediaType: ocispec.MediaTypeImageLayerGzip, Digest: h.Digest(), Size: n}, nil
}
