package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
)

// TestImage builds the image from two stand-in binaries and reads it back
// as a runtime would: the tag names an index, each platform's manifest
// has a config that runs /usr/local/bin/ferry as the non-root user, and
// its one layer holds the binary and the files the Job needs. A second
// build gives the same digest.
func TestImage(t *testing.T) {
	dir := t.TempDir()
	amd := filepath.Join(dir, "ferry-amd64")
	arm := filepath.Join(dir, "ferry-arm64")
	os.WriteFile(amd, []byte("amd64 binary"), 0o755)
	os.WriteFile(arm, []byte("arm64 binary"), 0o755)
	certs := filepath.Join(dir, "ca.crt")
	os.WriteFile(certs, []byte("-----BEGIN CERTIFICATE-----\n"), 0o644)
	opts := imageOptions{Out: filepath.Join(dir, "layout"), Version: "v1.2.3", CACerts: certs,
		Binaries: []string{"linux/amd64=" + amd, "linux/arm64=" + arm}}
	d1, err := buildImage(opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Out = filepath.Join(dir, "layout2")
	d2, err := buildImage(opts)
	if err != nil {
		t.Fatal(err)
	}
	if d1 != d2 {
		t.Errorf("two builds of the same binaries: %s and %s", d1, d2)
	}

	ctx := context.Background()
	store, err := oci.New(filepath.Join(dir, "layout"))
	if err != nil {
		t.Fatal(err)
	}
	idxDesc, err := store.Resolve(ctx, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if idxDesc.Digest.String() != d1 || idxDesc.MediaType != ocispec.MediaTypeImageIndex {
		t.Fatalf("tag v1.2.3 is %s %s, want the index %s", idxDesc.MediaType, idxDesc.Digest, d1)
	}
	var idx ocispec.Index
	readJSON(t, store, idxDesc, &idx)
	want := map[string]string{"amd64": "amd64 binary", "arm64": "arm64 binary"}
	if len(idx.Manifests) != 2 {
		t.Fatalf("index has %d manifests, want 2", len(idx.Manifests))
	}
	for _, md := range idx.Manifests {
		if md.Platform == nil || md.Platform.OS != "linux" {
			t.Fatalf("manifest without a linux platform: %+v", md)
		}
		var m ocispec.Manifest
		readJSON(t, store, md, &m)
		var cfg ocispec.Image
		readJSON(t, store, m.Config, &cfg)
		if cfg.Architecture != md.Platform.Architecture || cfg.Config.User != "65532:65532" ||
			strings.Join(cfg.Config.Entrypoint, " ") != "/usr/local/bin/ferry" || cfg.Config.Labels[ocispec.AnnotationVersion] != "v1.2.3" {
			t.Errorf("%s config: %+v", md.Platform.Architecture, cfg)
		}
		if len(m.Layers) != 1 || len(cfg.RootFS.DiffIDs) != 1 {
			t.Fatalf("%d layers, %d diff_ids", len(m.Layers), len(cfg.RootFS.DiffIDs))
		}
		files := layerFiles(t, store, m.Layers[0])
		if files["usr/local/bin/ferry"] != want[md.Platform.Architecture] {
			t.Errorf("%s: /usr/local/bin/ferry holds %q", md.Platform.Architecture, files["usr/local/bin/ferry"])
		}
		for _, f := range []string{"etc/passwd", "etc/group", "etc/ssl/certs/ca-certificates.crt", "tmp/", "work/"} {
			if _, ok := files[f]; !ok {
				t.Errorf("%s: no %s in the layer", md.Platform.Architecture, f)
			}
		}
		if !strings.Contains(files["etc/passwd"], "nonroot:x:65532:65532") {
			t.Errorf("passwd: %q", files["etc/passwd"])
		}
	}
}

func readJSON(t *testing.T, store content.Fetcher, d ocispec.Descriptor, v any) {
	t.Helper()
	b, err := content.FetchAll(context.Background(), store, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func layerFiles(t *testing.T, store content.Fetcher, d ocispec.Descriptor) map[string]string {
	t.Helper()
	b, err := content.FetchAll(context.Background(), store, d)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		out[h.Name] = string(data)
	}
	return out
}

// TestSBOM writes the SBOM of this test binary, a Go binary like ferry:
// the document names the binary's SHA-256 and each linked module by its
// purl, with a DEPENDS_ON edge to it.
func TestSBOM(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sbom.json")
	if err := writeSBOM(os.Args[0], out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc spdxDocument
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SPDXVersion != "SPDX-2.3" || len(doc.Files) != 1 || len(doc.Files[0].Checksums[0].Value) != 64 {
		t.Fatalf("document: %s, files %+v", doc.SPDXVersion, doc.Files)
	}
	var oras *spdxPackage
	for i, p := range doc.Packages {
		if p.Name == "oras.land/oras-go/v2" {
			oras = &doc.Packages[i]
		}
	}
	if oras == nil || !strings.HasPrefix(oras.ExternalRefs[0].Locator, "pkg:golang/oras.land/oras-go/v2@v2.") {
		t.Fatalf("no oras-go module with its purl: %+v", oras)
	}
	found := false
	for _, r := range doc.Relationships {
		if r.Type == "DEPENDS_ON" && r.Related == oras.SPDXID {
			found = true
		}
	}
	if !found {
		t.Error("no DEPENDS_ON edge to oras-go")
	}
}
