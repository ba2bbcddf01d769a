package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/serve"
)

// recorder remembers each request's method, path and status, and the
// OCI-Subject header of each answer.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	method, path string
	status       int
	ociSubject   string
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (rec *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		rec.mu.Lock()
		defer rec.mu.Unlock()
		rec.reqs = append(rec.reqs, recorded{r.Method, r.URL.Path, sw.status, w.Header().Get("OCI-Subject")})
	})
}

func (rec *recorder) all() []recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.reqs)
}

func startReferrersServer(t testing.TB, root string, rec *recorder) (*serve.Server, *remote.Repository) {
	t.Helper()
	opts := serve.Options{Root: root, Addr: "127.0.0.1:0"}
	if rec != nil {
		opts.Wrap = rec.wrap
	}
	srv, err := serve.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	repo, err := remote.NewRepository(srv.Addr + "/ref/app")
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	return srv, repo
}

// getReferrers fetches the referrers API raw and returns the index and the
// response headers.
func getReferrers(t testing.TB, srv *serve.Server, name string, subject digest.Digest, query string) (ocispec.Index, http.Header, []byte) {
	t.Helper()
	u := srv.URL() + "/v2/" + name + "/referrers/" + subject.String()
	if query != "" {
		u += "?" + query
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", u, resp.Status, buf.String())
	}
	var idx ocispec.Index
	if err := json.Unmarshal(buf.Bytes(), &idx); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return idx, resp.Header, buf.Bytes()
}

// TestReferrersAPI pins ferry serve's OCI 1.1 referrers API: the
// OCI-Subject header on a manifest PUT with a subject, the listing with
// artifactType taken from the manifest or its config's mediaType, the
// artifactType filter and its OCI-Filters-Applied header, an empty index
// for an unknown subject, a deleted referrer leaving the list, and the
// list read from storage after a restart. oras-go pushes and lists
// through the API natively: no referrers tag (sha256-HEX) is created and
// Repository.Referrers asks /referrers/.
func TestReferrersAPI(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	rec := &recorder{}
	srv, repo := startReferrersServer(t, root, rec)

	subject, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "application/vnd.example.app", oras.PackManifestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, subject, "v1"); err != nil {
		t.Fatal(err)
	}
	sig, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "application/vnd.example.sig", oras.PackManifestOptions{
		Subject:             &subject,
		ManifestAnnotations: map[string]string{"org.example.kind": "signature"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// An image manifest without artifactType: listed with its config's
	// mediaType.
	cfg := content.NewDescriptorFromBytes("application/vnd.example.sbom.config", []byte(`{"sbom":true}`))
	if err := repo.Push(ctx, cfg, bytes.NewReader([]byte(`{"sbom":true}`))); err != nil {
		t.Fatal(err)
	}
	sbom, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{Subject: &subject, ConfigDescriptor: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	// An index with a subject and an artifactType.
	idxBytes, err := json.Marshal(ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
		ArtifactType: "application/vnd.example.bundle", Subject: &subject, Manifests: []ocispec.Descriptor{sbom},
	})
	if err != nil {
		t.Fatal(err)
	}
	bundle := content.NewDescriptorFromBytes(ocispec.MediaTypeImageIndex, idxBytes)
	if err := repo.Push(ctx, bundle, bytes.NewReader(idxBytes)); err != nil {
		t.Fatal(err)
	}

	// OCI-Subject on each PUT of a manifest with a subject, not on others.
	for _, r := range rec.all() {
		if r.method != http.MethodPut || !strings.Contains(r.path, "/manifests/") {
			continue
		}
		want := subject.Digest.String()
		if strings.HasSuffix(r.path, subject.Digest.String()) || strings.HasSuffix(r.path, "/v1") {
			want = ""
		}
		if r.status != http.StatusCreated || r.ociSubject != want {
			t.Errorf("PUT %s: status %d, OCI-Subject %q, want 201 and %q", r.path, r.status, r.ociSubject, want)
		}
	}

	type listed struct{ Digest, ArtifactType, MediaType string }
	flatten := func(ds []ocispec.Descriptor) []listed {
		out := []listed{}
		for _, d := range ds {
			out = append(out, listed{d.Digest.String(), d.ArtifactType, d.MediaType})
		}
		slices.SortFunc(out, func(a, b listed) int { return strings.Compare(a.Digest, b.Digest) })
		return out
	}
	all := flatten([]ocispec.Descriptor{
		{Digest: sig.Digest, ArtifactType: "application/vnd.example.sig", MediaType: ocispec.MediaTypeImageManifest},
		{Digest: sbom.Digest, ArtifactType: "application/vnd.example.sbom.config", MediaType: ocispec.MediaTypeImageManifest},
		{Digest: bundle.Digest, ArtifactType: "application/vnd.example.bundle", MediaType: ocispec.MediaTypeImageIndex},
	})
	pick := func(at string) []listed {
		var out []listed
		for _, l := range all {
			if l.ArtifactType == at {
				out = append(out, l)
			}
		}
		return out
	}
	tests := []struct {
		name        string
		subject     digest.Digest
		query       string
		want        []listed
		wantFilters string
	}{
		{name: "all", subject: subject.Digest, want: all},
		{name: "artifactType of the manifest", subject: subject.Digest, query: "artifactType=application/vnd.example.sig", want: pick("application/vnd.example.sig"), wantFilters: "artifactType"},
		{name: "artifactType from the config", subject: subject.Digest, query: "artifactType=application/vnd.example.sbom.config", want: pick("application/vnd.example.sbom.config"), wantFilters: "artifactType"},
		{name: "artifactType of an index", subject: subject.Digest, query: "artifactType=application/vnd.example.bundle", want: pick("application/vnd.example.bundle"), wantFilters: "artifactType"},
		{name: "artifactType nobody has", subject: subject.Digest, query: "artifactType=application/vnd.example.none", want: []listed{}, wantFilters: "artifactType"},
		{name: "unknown subject", subject: digest.FromString("nothing"), want: []listed{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx, h, raw := getReferrers(t, srv, "ref/app", tt.subject, tt.query)
			if ct := h.Get("Content-Type"); ct != ocispec.MediaTypeImageIndex {
				t.Errorf("Content-Type %q", ct)
			}
			if f := h.Get("OCI-Filters-Applied"); f != tt.wantFilters {
				t.Errorf("OCI-Filters-Applied %q, want %q", f, tt.wantFilters)
			}
			if idx.SchemaVersion != 2 || idx.MediaType != ocispec.MediaTypeImageIndex || !bytes.Contains(raw, []byte(`"manifests":[`)) {
				t.Errorf("not an image index with a manifests list: %s", raw)
			}
			if got := flatten(idx.Manifests); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("referrers\n got %v\nwant %v", got, tt.want)
			}
		})
	}
	idx, _, _ := getReferrers(t, srv, "ref/app", subject.Digest, "artifactType=application/vnd.example.sig")
	if len(idx.Manifests) != 1 || idx.Manifests[0].Annotations["org.example.kind"] != "signature" || idx.Manifests[0].Size != sig.Size {
		t.Errorf("signature descriptor %+v: want its size %d and annotations", idx.Manifests, sig.Size)
	}

	// oras-go lists through the API, and never fell back to the
	// referrers tag schema when pushing.
	var viaORAS []ocispec.Descriptor
	if err := repo.Referrers(ctx, subject, "application/vnd.example.sig", func(ds []ocispec.Descriptor) error {
		viaORAS = append(viaORAS, ds...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(viaORAS) != 1 || viaORAS[0].Digest != sig.Digest {
		t.Errorf("oras Referrers: %v, want the signature", viaORAS)
	}
	asked := false
	for _, r := range rec.all() {
		if strings.Contains(r.path, "/referrers/") && r.status == http.StatusOK {
			asked = true
		}
		if strings.Contains(r.path, "/manifests/sha256-") {
			t.Errorf("%s %s: oras-go used the referrers tag schema", r.method, r.path)
		}
	}
	if !asked {
		t.Error("oras-go never asked /referrers/")
	}
	tags, err := registryTags(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tags, []string{"v1"}) {
		t.Errorf("tags %v, want only v1 (no referrers tag)", tags)
	}

	// A deleted referrer leaves the list.
	if err := repo.Delete(ctx, sig); err != nil {
		t.Fatal(err)
	}
	all = slices.DeleteFunc(all, func(l listed) bool { return l.Digest == sig.Digest.String() })
	if idx, _, _ := getReferrers(t, srv, "ref/app", subject.Digest, ""); !slices.Equal(flatten(idx.Manifests), all) {
		t.Errorf("after delete: %v, want %v", flatten(idx.Manifests), all)
	}

	// A restarted server lists what storage holds.
	_ = srv.Close()
	srv2, _ := startReferrersServer(t, root, nil)
	if idx, _, _ := getReferrers(t, srv2, "ref/app", subject.Digest, ""); !slices.Equal(flatten(idx.Manifests), all) {
		t.Errorf("after restart: %v, want %v", flatten(idx.Manifests), all)
	}
}

func registryTags(ctx context.Context, repo *remote.Repository) ([]string, error) {
	var tags []string
	err := repo.Tags(ctx, "", func(ts []string) error {
		tags = append(tags, ts...)
		return nil
	})
	return tags, err
}

// TestForeignLayersAccepted pins that a manifest naming a
// non-distributable layer by URL, never pushed, is accepted (image-spec
// layer.md; the conformance program's non-distributable-layers data).
func TestForeignLayersAccepted(t *testing.T) {
	ctx := context.Background()
	_, repo := startReferrersServer(t, t.TempDir(), nil)
	cfg := content.NewDescriptorFromBytes(ocispec.MediaTypeImageConfig, []byte(`{}`))
	if err := repo.Push(ctx, cfg, bytes.NewReader([]byte(`{}`))); err != nil {
		t.Fatal(err)
	}
	foreign := ocispec.Descriptor{
		MediaType: "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", //nolint:staticcheck // the deprecated type is the case
		Digest:    digest.FromString("never pushed"), Size: 12,
		URLs: []string{"https://store.example.com/blobs/sha256/" + digest.FromString("never pushed").Encoded()},
	}
	b, err := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest, Config: cfg, Layers: []ocispec.Descriptor{foreign}})
	if err != nil {
		t.Fatal(err)
	}
	m := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, b)
	if err := repo.PushReference(ctx, m, bytes.NewReader(b), "foreign"); err != nil {
		t.Fatalf("push a manifest with a foreign layer: %v", err)
	}
}

// BenchmarkReferrers lists the referrers of one subject in a repository
// of 1000 manifests, 100 of which refer to it: the first listing reads
// every manifest, later ones list the revisions directory and stat the
// referrers.
func BenchmarkReferrers(b *testing.B) {
	ctx := context.Background()
	srv, repo := startReferrersServer(b, b.TempDir(), nil)
	subject, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "application/vnd.example.app", oras.PackManifestOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 999 {
		opts := oras.PackManifestOptions{ManifestAnnotations: map[string]string{"i": fmt.Sprint(i)}}
		if i%10 == 0 {
			opts.Subject = &subject
		}
		if _, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "application/vnd.example.other", opts); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	idx, _, _ := getReferrers(b, srv, "ref/app", subject.Digest, "")
	first := time.Since(start)
	if len(idx.Manifests) != 100 {
		b.Fatalf("%d referrers, want 100", len(idx.Manifests))
	}
	for b.Loop() {
		getReferrers(b, srv, "ref/app", subject.Digest, "")
	}
	b.ReportMetric(float64(first.Microseconds()), "first-µs")
}
