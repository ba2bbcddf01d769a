package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
)

// imageOptions says what buildImage writes.
type imageOptions struct {
	// Out is the OCI image layout directory (created, or added to).
	Out string
	// Version is the tag of the index in the layout, and the image's
	// org.opencontainers.image.version.
	Version string
	// CACerts is a CA bundle copied to /etc/ssl/certs/ca-certificates.crt;
	// empty: none.
	CACerts string
	// Binaries are OS/ARCH=PATH of static ferry binaries, one image each.
	Binaries []string
}

// epoch is the time of every file and of the image: SOURCE_DATE_EPOCH's
// when set (reproducible-builds.org), else the Unix epoch, so the same
// binaries always give the same digests.
func epoch() time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		var sec int64
		if _, err := fmt.Sscan(s, &sec); err == nil {
			return time.Unix(sec, 0).UTC()
		}
	}
	return time.Unix(0, 0).UTC()
}

// nonRoot is the user the image runs as (distroless's "nonroot").
const nonRoot = 65532

// buildImage writes an index over one image per binary into the layout
// opts.Out, tagged opts.Version, and returns the index's digest.
func buildImage(opts imageOptions) (string, error) {
	ctx := context.Background()
	store, err := oci.New(opts.Out)
	if err != nil {
		return "", err
	}
	var certs []byte
	if opts.CACerts != "" {
		if certs, err = os.ReadFile(opts.CACerts); err != nil {
			return "", fmt.Errorf("CA bundle: %w", err)
		}
	}
	var manifests []ocispec.Descriptor
	for _, b := range opts.Binaries {
		platform, path, ok := strings.Cut(b, "=")
		osName, arch, ok2 := strings.Cut(platform, "/")
		if !ok || !ok2 {
			return "", fmt.Errorf("%q: want OS/ARCH=BINARY", b)
		}
		bin, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		m, err := pushPlatformImage(ctx, store, &ocispec.Platform{OS: osName, Architecture: arch}, bin, certs, opts.Version)
		if err != nil {
			return "", fmt.Errorf("%s: %w", platform, err)
		}
		manifests = append(manifests, m)
	}
	index := ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageIndex,
		Manifests: manifests,
		Annotations: map[string]string{
			ocispec.AnnotationVersion: opts.Version,
			ocispec.AnnotationTitle:   "ferry",
		},
	}
	desc, err := pushJSON(ctx, store, ocispec.MediaTypeImageIndex, index)
	if err != nil {
		return "", err
	}
	if err := store.Tag(ctx, desc, opts.Version); err != nil {
		return "", err
	}
	return desc.Digest.String(), nil
}

// pushPlatformImage writes one image: a single layer holding the binary
// and the few files it needs, and a config that runs it as nonRoot.
func pushPlatformImage(ctx context.Context, store content.Storage, p *ocispec.Platform, bin, certs []byte, version string) (ocispec.Descriptor, error) {
	layer, diffID, err := rootfsLayer(bin, certs)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	layerDesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageLayerGzip, layer)
	if err := pushIfAbsent(ctx, store, layerDesc, layer); err != nil {
		return ocispec.Descriptor{}, err
	}
	created := epoch()
	env := []string{"PATH=/usr/local/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt", "HOME=/work", "DOCKER_CONFIG=/work/.docker"}
	config := ocispec.Image{
		Created:  &created,
		Platform: *p,
		Config: ocispec.ImageConfig{
			User:       fmt.Sprintf("%d:%d", nonRoot, nonRoot),
			Env:        env,
			Entrypoint: []string{"/usr/local/bin/ferry"},
			WorkingDir: "/work",
			Labels: map[string]string{
				ocispec.AnnotationVersion:  version,
				ocispec.AnnotationSource:   "https://github.com/ferryhq/ferry",
				ocispec.AnnotationLicenses: "Apache-2.0",
			},
		},
		RootFS:  ocispec.RootFS{Type: "layers", DiffIDs: []digest.Digest{diffID}},
		History: []ocispec.History{{Created: &created, CreatedBy: "ferry internal/cmd/release image", Comment: "static ferry binary, CA bundle, passwd"}},
	}
	configDesc, err := pushJSON(ctx, store, ocispec.MediaTypeImageConfig, config)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	m, err := pushJSON(ctx, store, ocispec.MediaTypeImageManifest, ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageManifest,
		Config:    configDesc,
		Layers:    []ocispec.Descriptor{layerDesc},
	})
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	m.Platform = p
	return m, nil
}

// rootfsLayer is the image's one layer, gzipped, and the digest of its
// uncompressed tar (the config's diff_id). Entries are written in a fixed
// order with fixed times, so the bytes depend on the inputs alone.
func rootfsLayer(bin, certs []byte) ([]byte, digest.Digest, error) {
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	mod := epoch()
	dir := func(name string, mode int64, uid int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Uid: uid, Gid: uid, ModTime: mod, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: mod, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	steps := []func() error{
		func() error { return dir("etc/", 0o755, 0) },
		func() error {
			return file("etc/passwd", 0o644, []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/work:/sbin/nologin\n", nonRoot, nonRoot)))
		},
		func() error {
			return file("etc/group", 0o644, []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", nonRoot)))
		},
		func() error { return dir("etc/ssl/", 0o755, 0) },
		func() error { return dir("etc/ssl/certs/", 0o755, 0) },
		func() error {
			if certs == nil {
				return nil
			}
			return file("etc/ssl/certs/ca-certificates.crt", 0o644, certs)
		},
		func() error { return dir("tmp/", 0o1777, 0) },
		func() error { return dir("usr/", 0o755, 0) },
		func() error { return dir("usr/local/", 0o755, 0) },
		func() error { return dir("usr/local/bin/", 0o755, 0) },
		func() error { return file("usr/local/bin/ferry", 0o755, bin) },
		func() error { return dir("work/", 0o755, nonRoot) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, "", err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	diffID := digest.FromBytes(tarBuf.Bytes())
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, "", err
	}
	if _, err := io.Copy(zw, &tarBuf); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return gz.Bytes(), diffID, nil
}

// pushJSON stores v as a blob of mediaType, unless it is there.
func pushJSON(ctx context.Context, store content.Storage, mediaType string, v any) (ocispec.Descriptor, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	d := content.NewDescriptorFromBytes(mediaType, b)
	return d, pushIfAbsent(ctx, store, d, b)
}

func pushIfAbsent(ctx context.Context, store content.Storage, d ocispec.Descriptor, b []byte) error {
	ok, err := store.Exists(ctx, d)
	if err != nil || ok {
		return err
	}
	return store.Push(ctx, d, bytes.NewReader(b))
}
