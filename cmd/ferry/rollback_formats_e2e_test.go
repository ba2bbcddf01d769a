package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/kudo"
)

// pushDatedImage pushes a one-layer image whose config records created
// and whose manifest carries annotations, tagged tags.
func pushDatedImage(t *testing.T, repo *remote.Repository, seed string, created time.Time, annotations map[string]string, tags ...string) ocispec.Descriptor {
	t.Helper()
	ctx := context.Background()
	push := func(mt string, b []byte) ocispec.Descriptor {
		d := ocispec.Descriptor{MediaType: mt, Digest: digest.FromBytes(b), Size: int64(len(b))}
		if exists, err := repo.Exists(ctx, d); err != nil {
			t.Fatal(err)
		} else if !exists {
			if err := repo.Push(ctx, d, bytes.NewReader(b)); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	layer := push(ocispec.MediaTypeImageLayer, []byte("layer of "+seed))
	cfg, err := fixture.CanonicalJSON(ocispec.Image{
		Created:  &created,
		Platform: ocispec.Platform{Architecture: "amd64", OS: "linux"},
		RootFS:   ocispec.RootFS{Type: "layers", DiffIDs: []digest.Digest{layer.Digest}},
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := fixture.CanonicalJSON(ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		Config: push(ocispec.MediaTypeImageConfig, cfg), Layers: []ocispec.Descriptor{layer}, Annotations: annotations,
	})
	if err != nil {
		t.Fatal(err)
	}
	desc := push(ocispec.MediaTypeImageManifest, m)
	for _, tag := range tags {
		if err := repo.Tag(ctx, desc, tag); err != nil {
			t.Fatal(err)
		}
	}
	return desc
}

// TestE2ERollbackEveryFormat: `ferry lock` refuses, with exit 3 naming
// both versions (or both tags and digests), a version tag whose digest is
// an older release of the same package, in every format: a Crossplane
// xpkg and an image whose digest is also the lower tag's, an image whose
// signed org.opencontainers.image.version annotation names an older
// version, an image built before the lower patch release of its minor
// line, a KUDO operator artifact tagged with versions its operator.yaml
// does not declare, and a KUDO repository whose index lists a version
// whose tarball holds another. Honest releases, a patch of an older line
// built later, and tags that are not versions lock.
func TestE2ERollbackEveryFormat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := registrytest.New(t)
	h := src.Host
	c := registrytest.Client(t)
	repo := func(name string) *remote.Repository { return registrytest.Repository(t, c, h+"/"+name) }
	xpkg := func(name, crossplane string, tags ...string) {
		t.Helper()
		if _, err := fixture.PushXpkg(ctx, repo("xp/"+name), fixture.Xpkg{Name: name, Kind: "Configuration", Crossplane: crossplane, Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	// Crossplane: v1.0.0 moved under v1.1.0; honest releases apart.
	xpkg("moved", ">=v1.14.0", "v1.0.0", "v1.1.0")
	xpkg("honest", ">=v1.14.0", "v1.0.0")
	xpkg("honest", ">=v1.15.0", "v1.1.0")
	day := func(d int) time.Time { return time.Date(2025, 1, d, 0, 0, 0, 0, time.UTC) }
	// Images.
	pushDatedImage(t, repo("img/moved"), "moved", day(1), nil, "1.0.0", "1.1.0")
	pushDatedImage(t, repo("img/annotated"), "annotated-1.0", day(1), map[string]string{ocispec.AnnotationVersion: "1.0.0"}, "1.0.0", "1.1.0", "latest")
	pushDatedImage(t, repo("img/dated"), "dated-1.2.0", day(10), nil, "1.2.0")
	pushDatedImage(t, repo("img/dated"), "dated-1.2.0-again", day(2), nil, "1.2.1")
	pushDatedImage(t, repo("img/backport"), "backport-1.1.0", day(2), nil, "1.1.0")
	pushDatedImage(t, repo("img/backport"), "backport-1.0.5", day(10), nil, "1.0.5")
	pushDatedImage(t, repo("img/honest"), "honest-1.0.0", day(1), map[string]string{ocispec.AnnotationVersion: "1.0.0"}, "1.0.0")
	pushDatedImage(t, repo("img/honest"), "honest-1.1.0", day(2), map[string]string{ocispec.AnnotationVersion: "v1.1.0"}, "1.1.0")
	// KUDO: the 0.1.0 artifact also tagged 0.2.0 in a registry.
	zk := kudoE2EOperator{name: "zk", app: "3.6.2", opv: "0.1.0"}
	blobs, zkDesc, err := kudo.Artifact(kudoE2ETarball(t, zk), kudo.Config{Name: "zk", AppVersion: "3.6.2", OperatorVersion: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	kr := repo("kudo/zk")
	for d, b := range blobs { // the manifest last
		if d != zkDesc.Digest {
			if err := kr.Push(ctx, ocispec.Descriptor{MediaType: "application/octet-stream", Digest: d, Size: int64(len(b))}, bytes.NewReader(b)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := kr.Push(ctx, zkDesc, bytes.NewReader(blobs[zkDesc.Digest])); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"3.6.2_0.1.0", "3.6.2_0.2.0"} {
		if err := kr.Tag(ctx, zkDesc, tag); err != nil {
			t.Fatal(err)
		}
	}
	// KUDO repository: index version 0.2.0 whose tarball is 0.1.0's.
	krepo := newKudoE2ERepo(t, []kudoE2EOperator{zk})
	krepo.publish(t, func(idx *kudo.IndexFile) {
		old := *idx.Entries["zk"][0]
		old.OperatorVersion = "0.2.0"
		idx.Entries["zk"] = append(idx.Entries["zk"], &old)
	})

	// Porter: bundle 1.0.0 also tagged v1.1.0.
	e2ePush(t, h, map[string][]fixture.Bundle{"porter/moved": {{Name: "moved", Version: "1.0.0", Tags: []string{"v1.0.0", "v1.1.0"}}}})
	// Helm: chart 1.0.0 also tagged 1.1.0.
	tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "moved", Version: "1.0.0"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := charttest.PushChart(tgz, h+"/charts", day(1)); err != nil {
		t.Fatal(err)
	}
	chartRepo := repo("charts/moved")
	chartDesc, err := chartRepo.Resolve(ctx, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := chartRepo.Tag(ctx, chartDesc, "1.1.0"); err != nil {
		t.Fatal(err)
	}
	// A classic Helm repository whose index lists 1.1.0 at 1.0.0's
	// archive (its digest too).
	tgz110, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "moved", Version: "1.1.0"}))
	if err != nil {
		t.Fatal(err)
	}
	classic := newChartRepoServer(t)
	classic.publish(t, map[string][]byte{"moved-1.0.0.tgz": tgz, "moved-1.1.0.tgz": tgz110})
	classic.set("moved-1.1.0.tgz", tgz)
	classic.set("index.yaml", []byte(strings.ReplaceAll(string(classic.files["index.yaml"]), digest.FromBytes(tgz110).Encoded(), digest.FromBytes(tgz).Encoded())))
	// Mixins: a feed whose v1.1.0 links v1.0.0's binaries.
	mixinFeed := func(links110 string) string {
		return `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><category term="exec"/>` +
			`<entry><id>exec/v1.0.0</id><updated>2025-01-01T00:00:00Z</updated><category term="exec"/><content>v1.0.0</content>` +
			`<link rel="download" href="https://cdn.example/mixins/v1.0.0/exec-linux-amd64"/></entry>` +
			`<entry><id>exec/v1.1.0</id><updated>2025-02-01T00:00:00Z</updated><category term="exec"/><content>v1.1.0</content>` +
			`<link rel="download" href="https://cdn.example/mixins/` + links110 + `/exec-linux-amd64"/></entry></feed>`
	}
	mixinYAML := `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
mixins:
  - name: exec
    version: 1.x
    feed: file://FEED
platforms: [linux/amd64]
`

	tests := []struct {
		name string
		args []string
		yaml string // ferry.yaml, when the roots are not arguments
		feed string // feed.xml beside it, named file://FEED in yaml
		code int
		want []string
	}{
		{name: "crossplane: a tag moved to an older release", args: []string{h + "/xp/moved:v1.1.0"}, code: 3,
			want: []string{h + "/xp/moved:v1.1.0", "tag v1.1.0 (sha256:", "older release than v1.0.0", "it is the digest tagged v1.0.0"}},
		{name: "crossplane: a range reaches the moved tag", args: []string{h + "/xp/moved", "--version", "^1.0"}, code: 3,
			want: []string{"older release than v1.0.0"}},
		{name: "crossplane: honest releases", args: []string{h + "/xp/honest", "--version", "^1.0"}},
		{name: "image: a range reaches a tag moved to an older release", args: []string{h + "/img/moved", "--version", "^1.0"}, code: 3,
			want: []string{"tag 1.1.0", "older release than 1.0.0", "it is the digest tagged 1.0.0"}},
		{name: "image: a signed version annotation names an older version", args: []string{h + "/img/annotated:1.1.0"}, code: 3,
			want: []string{h + "/img/annotated:1.1.0", "names version 1.1.0", "declares version 1.0.0"}},
		{name: "image: a tag that is no version", args: []string{h + "/img/annotated:latest"}},
		{name: "image: built before the lower patch release", args: []string{h + "/img/dated", "--version", "~1.2"}, code: 3,
			want: []string{"tag 1.2.1", "older release than 1.2.0", "created 2025-01-02T00:00:00Z, before 1.2.0", "created 2025-01-10T00:00:00Z"}},
		{name: "image: a patch of an older line built later", args: []string{h + "/img/backport", "--version", "^1.0"}},
		{name: "image: honest releases, annotated", args: []string{h + "/img/honest", "--version", "^1.0"}},
		{name: "porter: a tag moved to an older release", args: []string{h + "/porter/moved:v1.1.0"}, code: 3,
			want: []string{h + "/porter/moved:v1.1.0", "names version 1.1.0", "declares version 1.0.0"}},
		{name: "helm: a tag moved to an older release", args: []string{"oci://" + h + "/charts/moved:1.1.0"}, code: 3,
			want: []string{"names version 1.1.0", "declares version 1.0.0"}},
		{name: "helm: an honest tag", args: []string{"oci://" + h + "/charts/moved:1.0.0"}},
		{name: "helm: a classic repository version whose archive is an older release", code: 3,
			yaml: "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\ncharts:\n  - repo: " + classic.srv.URL + "\n    name: moved\n    version: 1.1.0\n",
			want: []string{"holds chart moved version 1.0.0", "lists it as moved version 1.1.0"}},
		{name: "mixin: a version linking an older release's binaries", code: 3, yaml: mixinYAML, feed: mixinFeed("v1.0.0"),
			want: []string{"mixin exec version v1.1.0 is an older release (v1.0.0)", "names version v1.0.0"}},
		{name: "kudo: an artifact tagged with another operator version", args: []string{h + "/kudo/zk:3.6.2_0.2.0"}, code: 3,
			want: []string{"names version 3.6.2+0.2.0", "declares version 3.6.2_0.1.0"}},
		{name: "kudo: an honest tag", args: []string{h + "/kudo/zk:3.6.2_0.1.0"}},
		{name: "kudo: a repository version whose tarball is another", code: 3, yaml: fmt.Sprintf(`apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
operators:
  - package: zk
    repo: test
    operatorVersion: 0.2.0
kudo:
  repositories: {test: %q}
`, krepo.URL), want: []string{"holds operator zk version 3.6.2_0.1.0", "lists it as zk version 3.6.2_0.2.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := clitest.New(t)
			if tt.feed != "" {
				env.WriteFile("feed.xml", tt.feed)
			}
			if tt.yaml != "" {
				env.WriteFile("ferry.yaml", strings.ReplaceAll(tt.yaml, "FEED", env.Path("feed.xml")))
			}
			env.Expect(tt.code, append([]string{"lock"}, tt.args...), tt.want...)
			if tt.code != 0 {
				e2eAbsent(t, env.Path("ferry.lock"))
			}
		})
	}
}

// TestE2EDiffRollback: `ferry diff` lists a version moved up onto the
// digest the older version had (an older release under a newer tag, in a
// lock written elsewhere) first, as "! ROLLBACK", with a warning, and
// under "replaced" with op "rollback" in -o json.
func TestE2EDiffRollback(t *testing.T) {
	t.Parallel()
	src := registrytest.New(t)
	h := src.Host
	e2ePush(t, h, map[string][]fixture.Bundle{"dr/web": {e2eBundle("web", "1.0.0")}, "dr/db": {e2eBundle("db", "1.0.0"), e2eBundle("db", "1.1.0")}})
	env := e2eEnv(t)
	env.MustRun("lock", h+"/dr/web:v1.0.0", h+"/dr/db:v1.0.0", "--lock", "old.lock")
	env.MustRun("lock", h+"/dr/web:v1.0.0", h+"/dr/db:v1.1.0", "--lock", "new.lock")
	// The same web digest recorded as v1.1.0.
	env.WriteFile("new.lock", strings.ReplaceAll(env.ReadFile("new.lock"), "/dr/web:v1.0.0", "/dr/web:v1.1.0"))
	env.WriteFile("new.lock", strings.Replace(env.ReadFile("new.lock"), "version: v1.0.0", "version: v1.1.0", 1))
	r := env.Expect(0, []string{"diff", "old.lock", "new.lock"}, "! ROLLBACK package "+h+"/dr/web v1.0.0 -> v1.1.0", "an older release under a newer tag")
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "! ROLLBACK") || !strings.HasPrefix(lines[1], "~ package "+h+"/dr/db v1.0.0 -> v1.1.0") {
		t.Fatalf("stdout:\n%s", r.Stdout)
	}
	if !strings.Contains(r.Stderr, "WARNING: 1 version(s) moved up onto the digest they had") {
		t.Errorf("stderr:\n%s", r.Stderr)
	}
	j := env.Expect(0, []string{"diff", "old.lock", "new.lock", "-o", "json"})
	if !strings.Contains(j.Stdout, `"op": "rollback"`) {
		t.Errorf("-o json:\n%s", j.Stdout)
	}
}
