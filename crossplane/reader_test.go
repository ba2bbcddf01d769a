package crossplane_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/crossplane"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// readRepo opens repo again through a client of its own, for a Read
// whose requests a test counts or breaks: a client answers what it pushed
// or read itself from its run's cache (client/readcache.go).
func readRepo(t *testing.T, repo *remote.Repository) *remote.Repository {
	t.Helper()
	return registrytest.Repository(t, registrytest.Client(t), repo.Reference.Registry+"/"+repo.Reference.Repository)
}

func newRepo(t *testing.T, reg *registrytest.Registry, name string) *remote.Repository {
	t.Helper()
	return registrytest.Repository(t, registrytest.Client(t), reg.Host+"/"+name)
}

// fetchRoot fetches the manifest tagged tag, as the resolver does before
// asking a reader.
func fetchRoot(t *testing.T, repo *remote.Repository, tag string) (ocispec.Descriptor, []byte) {
	t.Helper()
	desc, rc, err := repo.FetchReference(context.Background(), tag)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return desc, b
}

// pushPlainIndex pushes an index over one ordinary image (an empty tar
// layer, no package.yaml) for platform linux/amd64 and tags it.
func pushPlainIndex(t *testing.T, repo oras.Target, tag string) {
	t.Helper()
	ctx := context.Background()
	layer := make([]byte, 1024) // an empty tar: two zero blocks
	ld, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageLayer, layer)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(ocispec.Image{Platform: ocispec.Platform{OS: "linux", Architecture: "amd64"}, RootFS: ocispec.RootFS{Type: "layers", DiffIDs: []digest.Digest{ld.Digest}}})
	cd, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageConfig, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest, Config: cd, Layers: []ocispec.Descriptor{ld}})
	md, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageManifest, m)
	if err != nil {
		t.Fatal(err)
	}
	md.Platform = &ocispec.Platform{OS: "linux", Architecture: "amd64"}
	idx, _ := json.Marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex, Manifests: []ocispec.Descriptor{md}})
	if _, err := oras.TagBytes(ctx, repo, ocispec.MediaTypeImageIndex, idx, tag); err != nil {
		t.Fatal(err)
	}
}

func TestReaderRegistry(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	provider := fixture.Xpkg{
		Kind:       "Provider",
		Name:       "provider-x",
		Crossplane: ">=v1.14.0",
		Replaces:   []string{reg.Host + "/old-org/provider-x"},
		DependsOn: []fixture.XpkgDependency{
			{Package: "xpkg.upbound.io/acme/function-a", APIVersion: "pkg.crossplane.io/v1", Kind: "Function", Version: ">=v0.1.0"},
			{Configuration: "acme/config-b", Version: "sha256:ecc25c121431dfc7058754427f97c034ecde26d4aafa0da16d258090e0443904"},
			{Function: "function-c", Version: "=v0.3.1"},
		},
		ExtraDocs: []string{"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: xs.example.com\n"},
	}
	wantProvider := &format.Metadata{
		Kind:       format.KindCrossplaneProvider,
		Name:       "provider-x",
		Attributes: map[string]string{"crossplane": ">=v1.14.0"},
		Replaces:   []string{reg.Host + "/old-org/provider-x"},
		Dependencies: []format.Dependency{
			{Name: "xpkg.upbound.io/acme/function-a", Ref: "xpkg.upbound.io/acme/function-a", Constraint: ">=v0.1.0"},
			{Name: "acme/config-b", Ref: "acme/config-b", Constraint: "sha256:ecc25c121431dfc7058754427f97c034ecde26d4aafa0da16d258090e0443904"},
			{Name: "function-c", Ref: "function-c", Constraint: "=v0.3.1"},
		},
	}
	with := func(f func(*fixture.Xpkg)) fixture.Xpkg {
		p := provider
		f(&p)
		return p
	}

	tests := []struct {
		name      string
		pkg       fixture.Xpkg
		plainIdx  bool // push a plain image index instead of pkg
		wantMatch bool // Match on the root manifest
		want      *format.Metadata
		wantErr   error  // Read error (errors.Is)
		wantReqs  int    // requests Read makes
		wantPlat  string // platform manifest Read must fetch, "os/arch"
	}{
		{name: "single image", pkg: provider, wantMatch: true, want: wantProvider, wantReqs: 1},
		{
			name: "index picks linux/amd64", wantMatch: true, want: wantProvider, wantReqs: 2, wantPlat: "linux/amd64",
			pkg: with(func(p *fixture.Xpkg) { p.Platforms = []string{"linux/arm64", "linux/amd64", "linux/s390x"} }),
		},
		{
			name: "index without amd64 picks the first", wantMatch: true, want: wantProvider, wantReqs: 2, wantPlat: "linux/arm64",
			pkg: with(func(p *fixture.Xpkg) { p.Platforms = []string{"linux/arm64", "linux/s390x"} }),
		},
		{
			name: "configuration v1alpha1", wantMatch: true, wantReqs: 1,
			pkg: fixture.Xpkg{Kind: "Configuration", APIVersion: "meta.pkg.crossplane.io/v1alpha1", Name: "cfg",
				DependsOn: []fixture.XpkgDependency{{Provider: "example.com/p", Version: "v0.4.0"}}},
			want: &format.Metadata{Kind: format.KindCrossplaneConfiguration, Name: "cfg",
				Dependencies: []format.Dependency{{Name: "example.com/p", Ref: "example.com/p", Constraint: "v0.4.0"}}},
		},
		{
			name: "function", wantMatch: true, wantReqs: 1,
			pkg:  fixture.Xpkg{Kind: "Function", APIVersion: "meta.pkg.crossplane.io/v1beta1", Name: "fn"},
			want: &format.Metadata{Kind: format.KindCrossplaneFunction, Name: "fn"},
		},
		{
			// Without the annotation a lone image is not claimed, so
			// plain images are never downloaded; Read still falls back
			// to flattening when asked (the provider has two layers: the
			// runtime layer is searched first, then package.yaml's).
			name: "unannotated image: no match, top-layer fallback", wantMatch: false, want: wantProvider, wantReqs: 1,
			pkg: with(func(p *fixture.Xpkg) { p.NoBaseAnnotation = true }),
		},
		{
			name: "unannotated index: top-layer fallback", wantMatch: true, want: wantProvider, wantReqs: 2, wantPlat: "linux/amd64",
			pkg: with(func(p *fixture.Xpkg) { p.NoBaseAnnotation = true; p.Platforms = []string{"linux/amd64", "linux/arm64"} }),
		},
		{name: "plain image index is not a package", plainIdx: true, wantMatch: true, wantErr: format.ErrNotPackage, wantReqs: 2, wantPlat: "linux/amd64"},
		{
			name: "bad package.yaml", wantMatch: true, wantErr: crossplane.ErrUnknownKind, wantReqs: 1,
			pkg: fixture.Xpkg{Name: "bad", PackageYAML: []byte("apiVersion: meta.pkg.crossplane.io/v1\nkind: Composition\nmetadata:\n  name: bad\n")},
		},
		{
			name: "no meta object", wantMatch: true, wantErr: crossplane.ErrNoMeta, wantReqs: 1,
			pkg: fixture.Xpkg{Name: "bad", PackageYAML: []byte("# empty\n")},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := newRepo(t, reg, "acme/pkg"+string(rune('a'+i)))
			tt.pkg.Tags = []string{"v1.0.0"}
			var want ocispec.Descriptor
			if tt.plainIdx {
				pushPlainIndex(t, repo, "v1.0.0")
			} else {
				var err error
				if want, err = fixture.PushXpkg(ctx, repo, tt.pkg); err != nil {
					t.Fatal(err)
				}
			}
			desc, manifest := fetchRoot(t, repo, "v1.0.0")
			if !tt.plainIdx && desc.Digest != want.Digest {
				t.Fatalf("tag resolves to %s, pushed %s", desc.Digest, want.Digest)
			}
			r := crossplane.Reader{}
			if got := r.Match(desc, manifest); got != tt.wantMatch {
				t.Errorf("Match = %v, want %v", got, tt.wantMatch)
			}

			reg.Reset()
			md, err := r.Read(ctx, readRepo(t, repo), desc, manifest)
			reqs := reg.Requests()
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Read error = %v, want %v", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("Read: %v", err)
			} else if !reflect.DeepEqual(md, tt.want) {
				t.Errorf("Read =\n%+v\nwant\n%+v", md, tt.want)
			}
			if len(reqs) != tt.wantReqs {
				t.Errorf("Read made %d requests, want %d: %+v", len(reqs), tt.wantReqs, reqs)
			}
			seen := map[string]bool{}
			for _, q := range reqs {
				if q.Method != "GET" || q.Status != 200 {
					t.Errorf("request %s %s -> %d, want GET 200", q.Method, q.Path, q.Status)
				}
				if seen[q.Path] {
					t.Errorf("%s fetched twice", q.Path)
				}
				seen[q.Path] = true
			}
			if tt.wantPlat != "" {
				var idx ocispec.Index
				if err := json.Unmarshal(manifest, &idx); err != nil {
					t.Fatal(err)
				}
				var platDigest string
				for _, m := range idx.Manifests {
					if m.Platform != nil && m.Platform.OS+"/"+m.Platform.Architecture == tt.wantPlat {
						platDigest = m.Digest.String()
					}
				}
				if platDigest == "" || len(reqs) == 0 || !strings.HasSuffix(reqs[0].Path, "/manifests/"+platDigest) {
					t.Errorf("first request %v, want the %s manifest %s", reqs, tt.wantPlat, platDigest)
				}
			}
		})
	}
}

func TestMatch(t *testing.T) {
	manifest := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	layer := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageLayerGzip, Digest: digest.FromString("l"), Size: 1}
	base := layer
	base.Annotations = map[string]string{crossplane.AnnotationKey: crossplane.AnnotationBase}
	img := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromString("m"), Size: 2}
	cnab := img
	cnab.Annotations = map[string]string{"io.cnab.manifest.type": "config"}
	tests := []struct {
		name      string
		mediaType string
		body      []byte
		want      bool
	}{
		{"annotated OCI image", ocispec.MediaTypeImageManifest, manifest(ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, Layers: []ocispec.Descriptor{layer, base}}), true},
		{"annotated Docker image", "application/vnd.docker.distribution.manifest.v2+json", manifest(ocispec.Manifest{Layers: []ocispec.Descriptor{base}}), true},
		{"media type only in the body", "", manifest(ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, Layers: []ocispec.Descriptor{base}}), true},
		{"plain image", ocispec.MediaTypeImageManifest, manifest(ocispec.Manifest{Layers: []ocispec.Descriptor{layer}}), false},
		{"plain index (decided by Read)", ocispec.MediaTypeImageIndex, manifest(ocispec.Index{Manifests: []ocispec.Descriptor{img}}), true},
		{"Docker manifest list", "application/vnd.docker.distribution.manifest.list.v2+json", manifest(ocispec.Index{Manifests: []ocispec.Descriptor{img}}), true},
		{"CNAB bundle index", ocispec.MediaTypeImageIndex, manifest(ocispec.Index{Manifests: []ocispec.Descriptor{cnab, img}}), false},
		{"artifact index", ocispec.MediaTypeImageIndex, manifest(ocispec.Index{ArtifactType: "application/vnd.example", Manifests: []ocispec.Descriptor{img}}), false},
		{"empty index", ocispec.MediaTypeImageIndex, manifest(ocispec.Index{}), false},
		{"helm chart", ocispec.MediaTypeImageManifest, manifest(ocispec.Manifest{Config: ocispec.Descriptor{MediaType: "application/vnd.cncf.helm.config.v1+json"}, Layers: []ocispec.Descriptor{layer}}), false},
		{"not JSON", ocispec.MediaTypeImageManifest, []byte("{"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := ocispec.Descriptor{MediaType: tt.mediaType, Digest: digest.FromBytes(tt.body), Size: int64(len(tt.body))}
			if got := (crossplane.Reader{}).Match(d, tt.body); got != tt.want {
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
		})
	}
}

// tarOf returns an uncompressed tar of name -> content.
func tarOf(t *testing.T, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := 0; i+1 < len(files); i += 2 {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: files[i], Mode: 0o644, Size: int64(len(files[i+1]))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstdOf(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadLayers pushes hand-built images (layer encodings the fixture
// writer does not produce) and reads them back.
func TestReadLayers(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	const pkgYAML = "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\n"
	base := map[string]string{crossplane.AnnotationKey: crossplane.AnnotationBase}
	type layer struct {
		mediaType   string
		data        []byte
		annotations map[string]string
	}
	tests := []struct {
		name     string
		layers   []layer
		wantName string
		wantErr  error
		wantReqs int
	}{
		{"zstd base layer", []layer{{ocispec.MediaTypeImageLayerZstd, zstdOf(t, tarOf(t, "package.yaml", pkgYAML)), base}}, "p", nil, 1},
		{"uncompressed base layer, leading slash", []layer{{ocispec.MediaTypeImageLayer, tarOf(t, "/package.yaml", pkgYAML), base}}, "p", nil, 1},
		{"base layer without package.yaml", []layer{{ocispec.MediaTypeImageLayer, tarOf(t, "other.yaml", pkgYAML), base}}, "", nil, 1},
		{"flattened: top layer wins", []layer{
			{ocispec.MediaTypeImageLayer, tarOf(t, "package.yaml", "not: this"), nil},
			{ocispec.MediaTypeImageLayer, tarOf(t, "package.yaml", pkgYAML), nil},
		}, "p", nil, 1},
		{"flattened: whiteout deletes package.yaml", []layer{
			{ocispec.MediaTypeImageLayer, tarOf(t, "package.yaml", pkgYAML), nil},
			{ocispec.MediaTypeImageLayer, tarOf(t, ".wh.package.yaml", ""), nil},
		}, "", format.ErrNotPackage, 1},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := newRepo(t, reg, fmt.Sprintf("layers/img%d", i))
			var descs []ocispec.Descriptor
			for _, l := range tt.layers {
				d, err := oras.PushBytes(ctx, repo, l.mediaType, l.data)
				if err != nil {
					t.Fatal(err)
				}
				d.Annotations = l.annotations
				descs = append(descs, d)
			}
			cd, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageConfig, []byte("{}"))
			if err != nil {
				t.Fatal(err)
			}
			m, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest, Config: cd, Layers: descs})
			desc, err := oras.PushBytes(ctx, repo, ocispec.MediaTypeImageManifest, m)
			if err != nil {
				t.Fatal(err)
			}
			reg.Reset()
			md, err := crossplane.Reader{}.Read(ctx, readRepo(t, repo), desc, m)
			if n := len(reg.Requests()); n != tt.wantReqs {
				t.Errorf("%d requests, want %d", n, tt.wantReqs)
			}
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
			case tt.wantName == "":
				if err == nil {
					t.Fatalf("read %+v, want an error", md)
				}
			case err != nil:
				t.Fatal(err)
			case md.Name != tt.wantName || md.Kind != format.KindCrossplaneProvider:
				t.Errorf("read %+v, want provider %q", md, tt.wantName)
			}
		})
	}
}
