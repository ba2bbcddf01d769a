package porter_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/porter"
)

// readRepo opens repo again through a client of its own, for a Read
// whose requests a test counts or breaks: a client answers what it pushed
// or read itself from its run's cache (client/readcache.go).
func readRepo(t *testing.T, repo *remote.Repository) *remote.Repository {
	t.Helper()
	return registrytest.Repository(t, registrytest.Client(t), repo.Reference.Registry+"/"+repo.Reference.Repository)
}

func testRepo(t *testing.T, reg *registrytest.Registry, path string) *remote.Repository {
	t.Helper()
	c := registrytest.Client(t)
	repo, err := c.Repository(reg.Host + "/" + path)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// fetchTag resolves and fetches the manifest tag names, as the resolver
// does before choosing a reader.
func fetchTag(t *testing.T, repo *remote.Repository, tag string) (ocispec.Descriptor, []byte) {
	t.Helper()
	desc, raw, err := oras.FetchBytes(context.Background(), repo, tag, oras.DefaultFetchBytesOptions)
	if err != nil {
		t.Fatal(err)
	}
	return desc, raw
}

func TestReaderRead(t *testing.T) {
	reg := registrytest.New(t)
	repo := testRepo(t, reg, "acme/app")
	ctx := context.Background()
	repoName := reg.Host + "/acme/app"
	b := fixture.Bundle{
		Name: "app", Version: "1.2.0", Tags: []string{"v1.2.0", "latest"},
		Deps: []fixture.Dep{
			{Name: "web", Bundle: reg.Host + "/acme/web:v1.0.0", Ranges: []string{"^1.0"}},
			{Name: "db", Bundle: "acme/db", Ranges: []string{"1.x", "^2.1"}, Prereleases: true},
		},
		DepsV2: []fixture.DepV2{
			{Name: "infra", Bundle: "infra:v1", Version: "1.x", Sharing: map[string]any{"mode": true, "group": map[string]any{"name": "env"}}},
			{Name: "svc", Bundle: reg.Host + "/acme/svc", Credentials: map[string]string{"c": "${bundle.dependencies.infra.outputs.conn}"}},
			{Name: "mysql", Interface: map[string]any{"id": "porter.sh/interfaces/mysql"}},
		},
		Images: []string{"redis", "nginx"},
		Mixins: map[string]string{"exec": "v1.2.3", "helm3": ""},
	}
	indexDesc, err := fixture.PushBundle(ctx, repo, repoName, b)
	if err != nil {
		t.Fatal(err)
	}
	desc, raw := fetchTag(t, repo, "v1.2.0")
	if desc.Digest != indexDesc.Digest {
		t.Fatalf("tag resolves to %s, PushBundle returned %s", desc.Digest, indexDesc.Digest)
	}
	var ix ocispec.Index
	if err := json.Unmarshal(raw, &ix); err != nil {
		t.Fatal(err)
	}

	var r porter.Reader
	if !r.Match(desc, raw) {
		t.Fatal("Match = false for a cnab-to-oci index")
	}
	reg.Reset()
	md, err := r.Read(ctx, readRepo(t, repo), desc, raw)
	if err != nil {
		t.Fatal(err)
	}

	// Exactly the config manifest and bundle.json, nothing else.
	cfgDigest := ix.Manifests[0].Digest
	var got []string
	for _, q := range reg.Requests() {
		got = append(got, q.Method+" "+q.Path)
	}
	var cfg ocispec.Manifest
	cfgRaw, err := content.FetchAll(ctx, repo, ix.Manifests[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(cfgRaw, &cfg); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /v2/acme/app/manifests/" + cfgDigest.String(),
		"GET /v2/acme/app/blobs/" + cfg.Config.Digest.String(),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	wantMD := &format.Metadata{
		Kind:            format.KindPorterBundle,
		Name:            "app",
		Version:         "1.2.0",
		TaggedByVersion: true,
		Dependencies: []format.Dependency{
			{Name: "web", Ref: reg.Host + "/acme/web:v1.0.0", Constraint: "^1.0"},
			{Name: "db", Ref: "acme/db", Constraint: "1.x || ^2.1", Prereleases: true},
			{Name: "infra", Ref: "infra:v1", Constraint: "1.x", SharingGroup: "env"},
			{Name: "mysql", Interface: true},
			{Name: "svc", Ref: reg.Host + "/acme/svc", After: []string{"infra"}},
		},
		Mixins: []format.Mixin{{Name: "exec", Version: "v1.2.3"}, {Name: "helm3"}},
		// The fixture declares no parameters, credentials or outputs.
		Data: &porter.Declarations{},
		Images: []format.Image{
			{Name: "invocation", Ref: repoName + "@" + ix.Manifests[1].Digest.String(), Descriptor: ix.Manifests[1]},
			{Name: "nginx", Ref: repoName + "@" + ix.Manifests[2].Digest.String(), Descriptor: ix.Manifests[2]},
			{Name: "redis", Ref: repoName + "@" + ix.Manifests[3].Digest.String(), Descriptor: ix.Manifests[3]},
		},
	}
	if len(md.Warnings) != 1 || !strings.Contains(md.Warnings[0], `mixin "helm3"`) {
		t.Errorf("warnings = %q, want one about helm3", md.Warnings)
	}
	md.Warnings = nil
	if !reflect.DeepEqual(md, wantMD) {
		t.Errorf("metadata =\n%+v\nwant\n%+v", md, wantMD)
	}
	for _, im := range md.Images {
		if im.Descriptor.MediaType != ocispec.MediaTypeImageManifest || im.Descriptor.Size == 0 {
			t.Errorf("image %s descriptor = %+v", im.Name, im.Descriptor)
		}
	}
	if n := ix.Manifests[2].Annotations[porter.AnnotationComponentName]; n != "nginx" {
		t.Errorf("components are not sorted: manifests[2] is %q", n)
	}
}

// pushRaw pushes data as mediaType and returns its descriptor.
func pushRaw(t *testing.T, repo oras.Target, mediaType string, data []byte) ocispec.Descriptor {
	t.Helper()
	d, err := oras.PushBytes(context.Background(), repo, mediaType, data)
	if err != nil {
		t.Fatalf("pushing %s: %v", mediaType, err)
	}
	return d
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pushLayout pushes a hand-built cnab-to-oci-like layout: config blob of
// configType holding bundleJSON, a manifest of manifestType over it (with
// the config as its only layer, cnab-to-oci's Docker fallback), and an
// index of indexType annotated as config. It returns the index descriptor
// and bytes.
func pushLayout(t *testing.T, repo oras.Target, indexType, manifestType, configType string, bundleJSON []byte) (ocispec.Descriptor, []byte, ocispec.Descriptor) {
	t.Helper()
	cfg := pushRaw(t, repo, configType, bundleJSON)
	cfg.MediaType = configType
	man := pushRaw(t, repo, manifestType, mustJSON(t, map[string]any{
		"schemaVersion": 2, "mediaType": manifestType, "config": cfg, "layers": []ocispec.Descriptor{cfg},
	}))
	man.Annotations = map[string]string{porter.AnnotationManifestType: porter.ManifestTypeConfig}
	ixRaw := mustJSON(t, ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: indexType, Manifests: []ocispec.Descriptor{man}})
	ix := pushRaw(t, repo, indexType, ixRaw)
	return ix, ixRaw, cfg
}

func TestReaderFallbacksAndErrors(t *testing.T) {
	reg := registrytest.New(t)
	repo := testRepo(t, reg, "acme/old")
	ctx := context.Background()
	good := []byte(`{"schemaVersion":"v1.0.0","name":"old","version":"0.1.0","invocationImages":[{"image":"r.io/old:v0.1.0","imageType":"docker"}],"custom":{"io.cnab.dependencies":{"requires":{"db":{"bundle":"r.io/db:v1"}}}}}`)
	tests := []struct {
		name                           string
		indexType, manifestType, cType string
		bundle                         []byte
		wantErr                        string
		notPackage                     bool
	}{
		{name: "docker manifest list, docker config", indexType: porter.MediaTypeDockerManifestList, manifestType: porter.MediaTypeDockerManifest, cType: porter.MediaTypeDockerConfig, bundle: good},
		{name: "oci index, oci image config", indexType: ocispec.MediaTypeImageIndex, manifestType: ocispec.MediaTypeImageManifest, cType: ocispec.MediaTypeImageConfig, bundle: good},
		{name: "malformed bundle.json", indexType: ocispec.MediaTypeImageIndex, manifestType: ocispec.MediaTypeImageManifest, cType: porter.MediaTypeCNABConfig, bundle: []byte(`{"name":"x",`), wantErr: "bundle.json in sha256:"},
		{name: "bundle.json without version", indexType: ocispec.MediaTypeImageIndex, manifestType: ocispec.MediaTypeImageManifest, cType: porter.MediaTypeCNABConfig, bundle: []byte(`{"name":"x"}`), wantErr: `bundle "x": no version`},
		{name: "not a cnab config", indexType: ocispec.MediaTypeImageIndex, manifestType: ocispec.MediaTypeImageManifest, cType: "application/vnd.example.config+json", bundle: good, wantErr: "is not a CNAB config", notPackage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			desc, raw, cfg := pushLayout(t, repo, tt.indexType, tt.manifestType, tt.cType, tt.bundle)
			var r porter.Reader
			if !r.Match(desc, raw) {
				t.Fatal("Match = false")
			}
			md, err := r.Read(ctx, readRepo(t, repo), desc, raw)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if errors.Is(err, format.ErrNotPackage) != tt.notPackage {
					t.Errorf("errors.Is(err, ErrNotPackage) = %v, want %v", !tt.notPackage, tt.notPackage)
				}
				if tt.wantErr == "bundle.json in sha256:" && !strings.Contains(err.Error(), cfg.Digest.String()) {
					t.Errorf("err = %v, want it to name %s", err, cfg.Digest)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if md.Name != "old" || md.Version != "0.1.0" || len(md.Dependencies) != 1 || md.Dependencies[0].Ref != "r.io/db:v1" {
				t.Errorf("metadata = %+v", md)
			}
			// No invocation entry in the index: the image is still listed.
			if len(md.Images) != 1 || md.Images[0].Name != "invocation" || md.Images[0].Ref != "r.io/old:v0.1.0" {
				t.Errorf("images = %+v", md.Images)
			}
		})
	}
}

func TestReaderFetchErrors(t *testing.T) {
	// A registry that loses the config manifest: Read names what failed.
	var lose atomic.Value // digest whose GETs fail
	lose.Store("")
	reg := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if l := lose.Load().(string); l != "" && strings.HasSuffix(r.URL.Path, l) {
				http.Error(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"gone"}]}`, http.StatusNotFound)
				return
			}
			next.ServeHTTP(w, r)
		})
	}))
	repo := testRepo(t, reg, "acme/app")
	ctx := context.Background()
	if _, err := fixture.PushBundle(ctx, repo, reg.Host+"/acme/app", fixture.Bundle{Name: "app", Version: "1.0.0"}); err != nil {
		t.Fatal(err)
	}
	desc, raw := fetchTag(t, repo, "1.0.0")
	var ix ocispec.Index
	if err := json.Unmarshal(raw, &ix); err != nil {
		t.Fatal(err)
	}
	lost := ix.Manifests[0].Digest.String()
	lose.Store(lost)
	_, err := porter.Reader{}.Read(ctx, readRepo(t, repo), desc, raw)
	if err == nil || !strings.Contains(err.Error(), "fetching config manifest "+lost) {
		t.Errorf("err = %v, want it to name the config manifest", err)
	}
}

func TestReaderMatch(t *testing.T) {
	configEntry := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromString("c"), Size: 1,
		Annotations: map[string]string{porter.AnnotationManifestType: porter.ManifestTypeConfig}}
	plainEntry := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromString("p"), Size: 1,
		Platform: &ocispec.Platform{OS: "linux", Architecture: "amd64"}}
	index := func(mediaType string, annotations map[string]string, entries ...ocispec.Descriptor) []byte {
		b, _ := json.Marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: mediaType, Manifests: entries, Annotations: annotations})
		return b
	}
	tests := []struct {
		name      string
		mediaType string
		raw       []byte
		want      bool
	}{
		{"oci index with config entry", ocispec.MediaTypeImageIndex, index(ocispec.MediaTypeImageIndex, nil, configEntry), true},
		{"config entry not first", ocispec.MediaTypeImageIndex, index(ocispec.MediaTypeImageIndex, nil, plainEntry, configEntry), true},
		{"docker list with config entry", porter.MediaTypeDockerManifestList, index(porter.MediaTypeDockerManifestList, nil, configEntry), true},
		{"media type only in the body", "", index(ocispec.MediaTypeImageIndex, nil, configEntry), true},
		{"cnab artifact type, no entry annotation", ocispec.MediaTypeImageIndex, index(ocispec.MediaTypeImageIndex, map[string]string{porter.AnnotationArtifactType: porter.ArtifactTypeCNAB}, plainEntry), true},
		{"multi-arch image index", ocispec.MediaTypeImageIndex, index(ocispec.MediaTypeImageIndex, nil, plainEntry), false},
		{"image manifest", ocispec.MediaTypeImageManifest, []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{},"layers":[]}`), false},
		{"empty index", ocispec.MediaTypeImageIndex, index(ocispec.MediaTypeImageIndex, map[string]string{porter.AnnotationArtifactType: porter.ArtifactTypeCNAB}), false},
		{"garbage", ocispec.MediaTypeImageIndex, []byte("not json"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			desc := ocispec.Descriptor{MediaType: tt.mediaType, Digest: digest.FromBytes(tt.raw), Size: int64(len(tt.raw))}
			if got := (porter.Reader{}).Match(desc, tt.raw); got != tt.want {
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestReaderSizeCaps pins that a config manifest or bundle.json stating
// more than its cap is refused before it is read.
func TestReaderSizeCaps(t *testing.T) {
	reg := registrytest.New(t)
	repo := testRepo(t, reg, "acme/big")
	ctx := context.Background()
	bundle := []byte(`{"schemaVersion":"v1.0.0","name":"big","version":"0.1.0","invocationImages":[{"image":"r.io/big:v0.1.0","imageType":"docker"}]}`)
	desc, raw, cfg := pushLayout(t, repo, ocispec.MediaTypeImageIndex, ocispec.MediaTypeImageManifest, porter.MediaTypeCNABConfig, bundle)
	tests := []struct {
		name     string
		cap      *int64
		wantPart string
	}{
		{name: "bundle.json", cap: &porter.MaxBundleSize, wantPart: "fetching bundle.json " + cfg.Digest.String()},
		{name: "config manifest", cap: &porter.MaxManifestSize, wantPart: "fetching config manifest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := *tt.cap
			*tt.cap = 16
			defer func() { *tt.cap = old }()
			_, err := porter.Reader{}.Read(ctx, readRepo(t, repo), desc, raw)
			if err == nil || !strings.Contains(err.Error(), tt.wantPart) || !strings.Contains(err.Error(), "over the 16-byte limit") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}
