package kudo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/resolve"
)

func tagsOf(t *testing.T, r format.Repository) []string {
	t.Helper()
	var out []string
	if err := r.Tags(context.Background(), "", func(tags []string) error { out = append(out, tags...); return nil }); err != nil {
		t.Fatalf("Tags: %v", err)
	}
	return out
}

// readTag resolves tag in r, checks the format claims it, and reads it.
func readTag(t *testing.T, f Format, r format.Repository, tag string) (ocispec.Descriptor, []byte, *format.Metadata) {
	t.Helper()
	ctx := context.Background()
	desc, rc, err := r.FetchReference(ctx, tag)
	if err != nil {
		t.Fatalf("FetchReference %s: %v", tag, err)
	}
	defer rc.Close()
	manifest, err := content.ReadAll(rc, desc)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Match(desc, manifest) {
		t.Fatalf("Match refuses the artifact of %s: %s", tag, manifest)
	}
	meta, err := f.Read(ctx, r, desc, manifest)
	if err != nil {
		t.Fatalf("Read %s: %v", tag, err)
	}
	return desc, manifest, meta
}

// TestKafkaZookeeper follows the KEP's example through a repository:
// index read once, tags APP_OPV newest first, the artifact holding the
// exact tarball, the dependency on zookeeper in the same repository,
// the images with params.yaml's defaults, and the artifact unchanged
// once copied to a registry.
func TestKafkaZookeeper(t *testing.T) {
	repo := newRepo(t, []fixture{
		kafka("2.4.0", "1.2.0", TaskSpec{Package: "zookeeper"}),
		kafka("2.5.0", "1.3.1", TaskSpec{Package: "zookeeper"}),
		zookeeper("3.4.14", "0.2.0"),
		zookeeper("3.4.14", "0.3.0"),
		zookeeper("3.6.2", "0.1.0"),
	}, nil)
	f := New()
	kafkaSrc := Source(repo.URL, "kafka")
	if !f.Owns(kafkaSrc) || f.Owns(strings.TrimPrefix(kafkaSrc, SourcePrefix)) {
		t.Fatalf("Owns(%s) should hold only with the kudo+ prefix", kafkaSrc)
	}
	if got := f.MirrorPath(kafkaSrc); got != "kudo-operators/kafka" {
		t.Fatalf("MirrorPath = %q", got)
	}
	r, err := f.Open(kafkaSrc, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	tags := tagsOf(t, r)
	if want := []string{"2.5.0_1.3.1", "2.4.0_1.2.0"}; !slices.Equal(tags, want) {
		t.Fatalf("tags = %v, want %v", tags, want)
	}
	tag, err := Pick([]resolve.Request{{From: "root"}}, tags)
	if err != nil || tag != "2.5.0_1.3.1" {
		t.Fatalf("Pick = %q, %v", tag, err)
	}
	desc, manifest, meta := readTag(t, f, r, tag)
	if meta.Kind != format.KindKudoOperator || meta.Name != "kafka" || meta.Version != "2.5.0_1.3.1" {
		t.Fatalf("metadata = %+v", meta)
	}
	zkSrc := Source(repo.URL, "zookeeper")
	wantDeps := []format.Dependency{
		{Name: "zookeeper-operator", Ref: zkSrc},
		{Name: "kafka/statefulset.yaml", Ref: "docker.io/mesosphere/kafka:2.5.0-1.3.1", Kind: format.KindImage},
	}
	if !equalDeps(meta.Dependencies, wantDeps) {
		t.Fatalf("dependencies = %+v\nwant %+v", meta.Dependencies, wantDeps)
	}
	// The layer is the repository's tarball, byte for byte, whose
	// sha256 is the index's digest.
	var m ocispec.Manifest
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	if m.ArtifactType != ArtifactType || m.Config.MediaType != ConfigMediaType || len(m.Layers) != 1 || m.Layers[0].MediaType != PackageLayerMediaType {
		t.Fatalf("manifest = %s", manifest)
	}
	want := repo.tarballOf("kafka", "2.5.0_1.3.1")
	if m.Layers[0].Digest != digest.FromBytes(want) {
		t.Fatalf("layer %s is not the tarball %s", m.Layers[0].Digest, digest.FromBytes(want))
	}
	// The dependency is read through the same cache: index.yaml once.
	zr, err := f.Open(zkSrc, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	zt := tagsOf(t, zr)
	if want := []string{"3.6.2_0.1.0", "3.4.14_0.3.0", "3.4.14_0.2.0"}; !slices.Equal(zt, want) {
		t.Fatalf("zookeeper tags = %v, want %v (KUDO's order: appVersion, then operatorVersion)", zt, want)
	}
	_, _, zmeta := readTag(t, f, zr, "3.4.14_0.3.0")
	wantZK := []format.Dependency{
		{Name: "zookeeper/validation.yaml", Ref: "docker.io/bitnami/kubectl:1.29", Kind: format.KindImage},
		{Name: "zookeeper/statefulset.yaml", Ref: "docker.io/library/busybox:1.36", Kind: format.KindImage},
		{Name: "zookeeper/statefulset.yaml", Ref: "docker.io/library/zookeeper:3.4.14", Kind: format.KindImage},
	}
	if !equalDeps(zmeta.Dependencies, wantZK) {
		t.Fatalf("zookeeper dependencies = %+v\nwant %+v", zmeta.Dependencies, wantZK)
	}
	if len(zmeta.Warnings) != 1 || !strings.Contains(zmeta.Warnings[0], "validation.yaml") {
		t.Fatalf("warnings = %q, want one for validation.yaml read without rendering", zmeta.Warnings)
	}
	if n := repo.count("/v1/index.yaml"); n != 1 {
		t.Fatalf("index.yaml read %d times, want 1", n)
	}
	// Another run builds the same artifact.
	r2, err := New().Open(kafkaSrc, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := r2.Resolve(context.Background(), tag)
	if err != nil || d2.Digest != desc.Digest {
		t.Fatalf("second run: %s, %v; want %s", d2.Digest, err, desc.Digest)
	}
	// Copied to a registry, the artifact reads the same, repository
	// dependencies included.
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	dst := registrytest.Repository(t, c, reg.Host+"/mirror/kudo-operators/kafka")
	got, err := oras.Copy(context.Background(), r, tag, dst, tag, oras.DefaultCopyOptions)
	if err != nil {
		t.Fatalf("oras.Copy: %v", err)
	}
	if got.Digest != desc.Digest {
		t.Fatalf("copied %s, want %s", got.Digest, desc.Digest)
	}
	_, _, mmeta := readTag(t, f, dst, tag)
	if !equalDeps(mmeta.Dependencies, wantDeps) {
		t.Fatalf("from the registry: %+v", mmeta.Dependencies)
	}
}

func equalDeps(a, b []format.Dependency) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Ref != b[i].Ref || a[i].Constraint != b[i].Constraint || a[i].Kind != b[i].Kind {
			return false
		}
	}
	return true
}

// TestDependencyVersions maps a task's appVersion and operatorVersion
// to what Pick chooses, as `kubectl kudo install` does.
func TestDependencyVersions(t *testing.T) {
	tags := []string{"3.4.14_0.2.0", "3.6.2_0.1.0", "3.4.14_0.3.0", "0.9.0"}
	for _, tc := range []struct {
		name     string
		spec     TaskSpec
		wantRef  string
		wantCons string
		pick     string
		err      string
	}{
		{name: "newest", spec: TaskSpec{Package: "zookeeper"}, pick: "3.6.2_0.1.0"},
		{name: "app version", spec: TaskSpec{Package: "zookeeper", AppVersion: "3.4.14"}, wantCons: "appVersion=3.4.14", pick: "3.4.14_0.3.0"},
		{name: "operator version", spec: TaskSpec{Package: "zookeeper", OperatorVersion: "0.2.0"}, wantCons: "operatorVersion=0.2.0", pick: "3.4.14_0.2.0"},
		{name: "both", spec: TaskSpec{Package: "zookeeper", AppVersion: "3.4.14", OperatorVersion: "0.2.0"}, wantRef: ":3.4.14_0.2.0", pick: "3.4.14_0.2.0"},
		{name: "no app version", spec: TaskSpec{Package: "zookeeper", OperatorVersion: "0.9.0"}, wantCons: "operatorVersion=0.9.0", pick: "0.9.0"},
		{name: "missing", spec: TaskSpec{Package: "zookeeper", AppVersion: "9.9.9"}, wantCons: "appVersion=9.9.9", err: "no operator version matches: parent asks appVersion=9.9.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, cons := versionedRef("kudo+https://repo.example/v1/zookeeper", tc.spec.AppVersion, tc.spec.OperatorVersion)
			if ref != "kudo+https://repo.example/v1/zookeeper"+tc.wantRef || cons != tc.wantCons {
				t.Fatalf("versionedRef = %q, %q", ref, cons)
			}
			req := resolve.Request{From: "parent", Constraint: cons}
			if i := strings.LastIndexByte(ref, ':'); tc.wantRef != "" {
				req.Tag = ref[i+1:]
			}
			got, err := Pick([]resolve.Request{req}, tags)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Pick error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.pick {
				t.Fatalf("Pick = %q, %v; want %q", got, err, tc.pick)
			}
		})
	}
}

// TestRepositoryErrors: an unknown package name, a tarball whose digest
// differs from the index, a malformed operator.yaml in a repository.
func TestRepositoryErrors(t *testing.T) {
	zk := zookeeper("3.4.14", "0.3.0")
	bad := zookeeper("3.4.14", "0.4.0")
	bad.rawOperator = "name: zookeeper\noperatorVersion: [not, a, string\n"
	repo := newRepo(t, []fixture{zk, bad, kafka("2.5.0", "1.3.1", TaskSpec{Package: "zookeeper"})}, func(idx *IndexFile) {
		for _, v := range idx.Entries["kafka"] {
			v.Digest = hex.EncodeToString(make([]byte, sha256.Size))
		}
	})
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		source string
		tag    string
		want   []string
		is     error
		code   int
	}{
		{name: "unknown package", source: Source(repo.URL, "zookeper"), want: []string{`operator "zookeper": not in the index`, "it lists: kafka, zookeeper"}, is: errdef.ErrNotFound},
		{name: "digest mismatch", source: Source(repo.URL, "kafka"), tag: "2.5.0_1.3.1", want: []string{"kafka version 2.5.0_1.3.1", "the index says sha256:0000"}, is: ErrDigestMismatch, code: exitcode.Mismatch},
		{name: "malformed operator.yaml", source: Source(repo.URL, "zookeeper"), tag: "3.4.14_0.4.0", want: []string{"zookeeper version 3.4.14_0.4.0", "operator.yaml"}, is: ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New().Open(tc.source, http.DefaultClient)
			if err == nil {
				_, err = r.Resolve(ctx, tc.tag)
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			if tc.code != 0 && exitcode.Of(err) != tc.code {
				t.Errorf("exit code %d, want %d", exitcode.Of(err), tc.code)
			}
		})
	}
	// The good version of a package with a bad one still reads.
	r, err := New().Open(Source(repo.URL, "zookeeper"), http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Resolve(ctx, "3.4.14_0.3.0"); err != nil {
		t.Fatal(err)
	}
}

// TestTarballURL opens a package given by its tarball's URL: one
// version, learnt from its operator.yaml, and a repository dependency
// looked up in the default repository.
func TestTarballURL(t *testing.T) {
	repo := newRepo(t, []fixture{kafka("2.5.0", "1.3.1", TaskSpec{Package: "zookeeper", OperatorVersion: "0.3.0"})}, nil)
	f := New()
	src := SourcePrefix + repo.URL + "/kafka-2.5.0_1.3.1.tgz"
	if got := f.MirrorPath(src); got != "kudo-operators/kafka" {
		t.Fatalf("MirrorPath = %q", got)
	}
	r, err := f.Open(src, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	if tags := tagsOf(t, r); !slices.Equal(tags, []string{"2.5.0_1.3.1"}) {
		t.Fatalf("tags = %v", tags)
	}
	_, _, meta := readTag(t, f, r, "2.5.0_1.3.1")
	if d := meta.Dependencies[0]; d.Ref != Source(CommunityURL, "zookeeper") || d.Constraint != "operatorVersion=0.3.0" {
		t.Fatalf("dependency = %+v", d)
	}
	if n := repo.count("/v1/index.yaml"); n != 0 {
		t.Fatalf("index.yaml read %d times for a tarball URL", n)
	}
}
