package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
	"github.com/ferryhq/ferry/relocate"
)

// e2eEnv returns a CLI environment whose default mixin feed is a local
// test feed (bundles of the catalog declare mixins), one platform only.
func e2eEnv(t *testing.T) *clitest.Env {
	t.Helper()
	env := clitest.New(t)
	feed := mixintest.NewFeed(t, mixintest.Options{Platforms: []string{"linux/amd64"}})
	env.Vars = append(env.Vars, mixin.FeedEnv+"="+feed.URL)
	return env
}

// e2eClient returns a registry client with no credentials.
func e2eClient(t *testing.T) *client.Client {
	t.Helper()
	c := registrytest.Client(t)
	return c
}

func e2eRepo(t *testing.T, c *client.Client, name string) *remote.Repository {
	t.Helper()
	r, err := c.Repository(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// e2eSeed starts a "public" registry with the standard catalog.
func e2eSeed(t *testing.T) (*registrytest.Registry, *fixture.Catalog) {
	t.Helper()
	reg := registrytest.New(t)
	cat, err := fixture.Seed(context.Background(), e2eClient(t), reg.Host)
	if err != nil {
		t.Fatal(err)
	}
	return reg, cat
}

// e2ePush publishes bundles; each key is a repository path under host.
func e2ePush(t *testing.T, host string, bundles map[string][]fixture.Bundle) {
	t.Helper()
	c := e2eClient(t)
	for path, bs := range bundles {
		for _, b := range bs {
			if _, err := fixture.PushBundle(context.Background(), e2eRepo(t, c, host+"/"+path), host+"/"+path, b); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func e2eBundle(name, version string, deps ...fixture.Dep) fixture.Bundle {
	return fixture.Bundle{Name: name, Version: version, Tags: []string{"v" + version}, Deps: deps}
}

// e2ePushRaw publishes a bundle in the cnab-to-oci layout with the given
// bundle.json bytes as its config blob and inv as its invocation image
// (already in repo), tagged tag. It returns the index descriptor.
func e2ePushRaw(t *testing.T, repo *remote.Repository, tag string, bundleJSON []byte, inv ocispec.Descriptor) ocispec.Descriptor {
	t.Helper()
	ctx := context.Background()
	push := func(mediaType string, data []byte) ocispec.Descriptor {
		d := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(data), Size: int64(len(data))}
		if ok, _ := repo.Exists(ctx, d); !ok {
			if err := repo.Push(ctx, d, bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	marshal := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cfg := push(fixture.MediaTypeCNABConfig, bundleJSON)
	cm := push(ocispec.MediaTypeImageManifest, marshal(ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		Config: cfg, Layers: []ocispec.Descriptor{},
	}))
	cm.Annotations = map[string]string{fixture.AnnotationManifestType: "config"}
	inv.Annotations = map[string]string{fixture.AnnotationManifestType: "invocation"}
	ix := marshal(ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
		Manifests:   []ocispec.Descriptor{cm, inv},
		Annotations: map[string]string{fixture.AnnotationArtifactType: fixture.ArtifactTypeCNAB},
	})
	d := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, Digest: digest.FromBytes(ix), Size: int64(len(ix))}
	if err := repo.PushReference(ctx, d, bytes.NewReader(ix), tag); err != nil {
		t.Fatal(err)
	}
	return d
}

func e2eReadLock(t *testing.T, env *clitest.Env, name string) *lock.Lock {
	t.Helper()
	l, err := lock.Parse([]byte(env.ReadFile(name)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return l
}

func e2eAbsent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s exists after a failure (stat: %v)", path, err)
	}
}

// e2eRequestLog records every request's method, path and query.
type e2eRequestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *e2eRequestLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		q, err := url.QueryUnescape(r.URL.RawQuery)
		if err != nil {
			q = r.URL.RawQuery
		}
		l.reqs = append(l.reqs, r.Method+" "+r.URL.Path+"?"+q)
		l.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (l *e2eRequestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.reqs...)
}

// e2eWrites returns the PUT, POST, PATCH and DELETE requests reg received.
func e2eWrites(reg *registrytest.Registry) []string {
	var out []string
	for _, r := range reg.Requests() {
		switch r.Method {
		case http.MethodPut, http.MethodPost, http.MethodPatch, http.MethodDelete:
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// e2eBlobPath is where a registry's filesystem storage keeps a blob.
func e2eBlobPath(reg *registrytest.Registry, d digest.Digest) string {
	hex := d.Encoded()
	return filepath.Join(reg.Root, "docker", "registry", "v2", "blobs", d.Algorithm().String(), hex[:2], hex, "data")
}

// e2eTamper rewrites a blob in reg's storage: flipping its first byte
// (same size) or appending a byte.
func e2eTamper(t *testing.T, reg *registrytest.Registry, d digest.Digest, sameSize bool) {
	t.Helper()
	p := e2eBlobPath(reg, d)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if sameSize {
		b[0] ^= 0xff
	} else {
		b = append(b, '!')
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// e2eLayer returns the first layer of the image desc in repo.
func e2eLayer(t *testing.T, repo *remote.Repository, desc ocispec.Descriptor) ocispec.Descriptor {
	t.Helper()
	raw, err := content.FetchAll(context.Background(), repo, desc)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) == 0 {
		t.Fatalf("%s has no layers", desc.Digest)
	}
	return m.Layers[0]
}

// e2eMirrored builds the standard mirrored world: the catalog's diamond and
// v2 closures, and the interface bundle with its `use`, locked and
// mirrored with the CLI.
type e2eMirrored struct {
	env    *clitest.Env
	src    *registrytest.Registry
	mirror *registrytest.Registry
	cat    *fixture.Catalog
	to     string
	lock   *lock.Lock
}

func newE2EMirrored(t *testing.T, mirrorOpts ...registrytest.Option) *e2eMirrored {
	t.Helper()
	src, cat := e2eSeed(t)
	mirror := registrytest.New(t, mirrorOpts...)
	env := e2eEnv(t)
	w := &e2eMirrored{env: env, src: src, mirror: mirror, cat: cat, to: mirror.Host + "/mirror"}
	env.WriteFile("ferry.yaml", fmt.Sprintf(`apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: %s
  - ref: %s/fixtures/v2/env
    version: "^1.0"
  - ref: %s
use:
  mysql: %s
mirror:
  to: %s
`, cat.Diamond, src.Host, cat.Interface, cat.InterfaceImpl, w.to))
	env.MustRun("lock")
	env.MustRun("mirror", "-j", "2")
	w.lock = e2eReadLock(t, env, "ferry.lock")
	return w
}

// TestE2EPipeline runs resolve, lock, mirror, verify and install through
// the ferry binary, the public registry stopped before install.
func TestE2EPipeline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, cat := e2eSeed(t)
	mirror := registrytest.New(t)
	h := src.Host
	env := e2eEnv(t)
	to := mirror.Host + "/mirror"
	env.WriteFile("ferry.yaml", fmt.Sprintf(`apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: %s
  - ref: %s/fixtures/v2/env
    version: "^1.0"
  - ref: %s
use:
  mysql: %s
`, cat.Diamond, h, cat.Interface, cat.InterfaceImpl))

	// resolve: every output format.
	r := env.MustRun("resolve")
	for _, w := range []string{h + "/fixtures/diamond/db:1.2.1_build.5", h + "/fixtures/v2/infra:v1.1.0", h + "/fixtures/iface/mysql:v5.7.1"} {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("resolve tree lacks %s:\n%s", w, r.Stdout)
		}
	}
	plan := strings.Split(strings.TrimSpace(env.MustRun("resolve", "-o", "plan").Stdout), "\n")
	if len(plan) != 9 {
		t.Fatalf("plan has %d steps, want 9:\n%s", len(plan), strings.Join(plan, "\n"))
	}
	var planOrder []string
	for _, line := range plan {
		f := strings.Fields(line)
		planOrder = append(planOrder, strings.SplitN(strings.TrimPrefix(f[2], h+"/fixtures/"), ":", 2)[0])
	}
	before := func(a, b string) {
		if slices.Index(planOrder, a) > slices.Index(planOrder, b) {
			t.Errorf("plan puts %s after %s: %v", a, b, planOrder)
		}
	}
	before("diamond/db", "diamond/web")
	before("diamond/db", "diamond/api")
	before("diamond/web", "diamond/app")
	before("v2/infra", "v2/app")
	before("v2/app", "v2/env")
	before("iface/mysql", "iface/app")
	var rep struct {
		Packages []struct{ Source, Version string }
	}
	if err := json.Unmarshal([]byte(env.MustRun("resolve", "-o", "json").Stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Packages) != 9 {
		t.Errorf("json lists %d packages", len(rep.Packages))
	}
	if dot := env.MustRun("resolve", "-o", "dot").Stdout; !strings.HasPrefix(dot, "digraph") {
		t.Errorf("dot output:\n%s", dot)
	}
	env.Expect(2, []string{"resolve", "-o", "yaml"}, "-o yaml")

	// lock: byte-identical on a second run.
	env.MustRun("lock")
	first := env.ReadFile("ferry.lock")
	env.MustRun("lock")
	if second := env.ReadFile("ferry.lock"); second != first {
		t.Fatalf("second lock differs:\n%s\n---\n%s", first, second)
	}
	l := e2eReadLock(t, env, "ferry.lock")
	if l.APIVersion != lock.APIVersion || l.Kind != lock.Kind || !strings.HasPrefix(l.Inputs, "sha256:") {
		t.Errorf("lock header: %s %s %s", l.APIVersion, l.Kind, l.Inputs)
	}
	db := l.Package(h + "/fixtures/diamond/db")
	if db == nil || db.Version != "1.2.1_build.5" || db.Kind != "porter.bundle" || db.MediaType != ocispec.MediaTypeImageIndex || db.Size == 0 {
		t.Fatalf("db locked as %+v", db)
	}
	app := l.Package(h + "/fixtures/diamond/app")
	if len(app.Dependencies) != 2 || app.Dependencies[0].Resolved == "" || len(app.Images) != 3 {
		t.Errorf("app locked as %+v", app)
	}
	// Verify before mirroring: the lock records no mirror.
	env.Expect(3, []string{"verify"}, "not-mirrored")

	// mirror: digests kept, tags copied, mirror locations in the lock.
	out := env.MustRun("mirror", "--to", to, "-j", "3", "-o", "json")
	var mrep relocate.Report
	if err := json.Unmarshal([]byte(out.Stdout), &mrep); err != nil {
		t.Fatalf("%v\n%s", err, out.Stdout)
	}
	if len(mrep.Packages) != 9 || mrep.To != to {
		t.Fatalf("mirror report: %+v", mrep)
	}
	l = e2eReadLock(t, env, "ferry.lock")
	c := e2eClient(t)
	for _, p := range l.Resolved() {
		wantMirror := to + strings.TrimPrefix(p.Source, h)
		if p.Mirror != wantMirror {
			t.Errorf("%s: lock mirror %q, want %q", p.Source, p.Mirror, wantMirror)
		}
		mr := e2eRepo(t, c, wantMirror)
		got, err := mr.Resolve(ctx, p.Version)
		if err != nil {
			t.Errorf("%s: tag %s not in the mirror: %v", p.Source, p.Version, err)
			continue
		}
		srcDesc, err := e2eRepo(t, c, p.Source).Resolve(ctx, p.Version)
		if err != nil {
			t.Fatal(err)
		}
		if got.Digest != srcDesc.Digest || got.Digest.String() != p.Digest {
			t.Errorf("%s: mirror digest %s, source %s, lock %s", p.Source, got.Digest, srcDesc.Digest, p.Digest)
		}
		for _, im := range p.Images {
			if ok, err := mr.Exists(ctx, ocispec.Descriptor{MediaType: im.MediaType, Digest: digest.Digest(im.Digest), Size: im.Size}); !ok {
				t.Errorf("%s: image %s not mirrored: %v", p.Source, im.Name, err)
			}
		}
	}
	// A re-run copies nothing.
	mirror.Reset()
	out = env.MustRun("mirror", "--to", to, "-o", "json")
	if err := json.Unmarshal([]byte(out.Stdout), &mrep); err != nil {
		t.Fatal(err)
	}
	for _, p := range mrep.Packages {
		if p.Copied != 0 || p.Skipped == 0 || p.Bytes != 0 {
			t.Errorf("re-run %s: copied %d, skipped %d, bytes %d", p.Source, p.Copied, p.Skipped, p.Bytes)
		}
	}
	for _, w := range e2eWrites(mirror) {
		t.Errorf("re-run wrote to the mirror: %s", w)
	}
	if got := env.ReadFile("ferry.lock"); got == first {
		t.Errorf("mirror did not record mirror locations")
	}

	// verify: clean mirror.
	env.Expect(0, []string{"verify"}, "verified 9 packages")
	env.Expect(0, []string{"verify", "--deep"}, "re-hashed")
	var vrep verifyJSON
	if err := json.Unmarshal([]byte(env.MustRun("verify", "-o", "json").Stdout), &vrep); err != nil {
		t.Fatal(err)
	}
	if !vrep.OK || len(vrep.Problems) != 0 || vrep.Counts.Packages != 9 || vrep.Counts.Blobs == 0 {
		t.Errorf("verify json: %+v", vrep)
	}

	// install: only the mirror.
	src.Stop()
	env.MustRun("install", "--dest", "install")
	e2eCheckInstall(t, env.Path("install"), l, h)

	// why and diff read the lock alone.
	why := env.MustRun("why", "db").Stdout
	for _, w := range []string{
		h + "/fixtures/diamond/app:v1.0.0 -> " + h + "/fixtures/diamond/web:1.1.0 -> " + h + "/fixtures/diamond/db:1.2.1_build.5",
		h + "/fixtures/diamond/app:v1.0.0 -> " + h + "/fixtures/diamond/api:1.0.1 -> " + h + "/fixtures/diamond/db:1.2.1_build.5",
	} {
		if !strings.Contains(why, w) {
			t.Errorf("why db lacks %q:\n%s", w, why)
		}
	}
	env.Expect(1, []string{"why", "app"}, "matches several packages")
	env.Expect(1, []string{"why", "nope"}, "no package in the lock")
	env.WriteFile("old.lock", first)
	if d := env.MustRun("diff", "old.lock", "ferry.lock").Stdout; d != "" {
		t.Errorf("mirroring changed versions or digests:\n%s", d)
	}
}

// e2eCheckInstall checks an install directory against the lock: an OCI
// layout holding every package, a relocation map covering every original
// reference, and plan.json in dependency order.
func e2eCheckInstall(t *testing.T, dir string, l *lock.Lock, srcHost string) {
	t.Helper()
	for _, f := range []string{"oci-layout", "index.json", install.PlanFile, install.RelocationFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("install lacks %s: %v", f, err)
		}
	}
	var ix ocispec.Index
	e2eJSONFile(t, filepath.Join(dir, "index.json"), &ix)
	inLayout := map[string]bool{}
	for _, m := range ix.Manifests {
		inLayout[m.Digest.String()] = true
	}
	var reloc map[string]string
	e2eJSONFile(t, filepath.Join(dir, install.RelocationFile), &reloc)
	for _, p := range l.Resolved() {
		if !inLayout[p.Digest] {
			t.Errorf("%s@%s is not in the layout's index.json", p.Source, p.Digest)
		}
		if _, err := os.Stat(filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(p.Digest, "sha256:"))); err != nil {
			t.Errorf("%s: blob missing from the layout: %v", p.Source, err)
		}
		want := p.Mirror + "@" + p.Digest
		for _, k := range []string{p.Source + ":" + p.Version, p.Source + "@" + p.Digest} {
			if reloc[k] != want {
				t.Errorf("relocation[%s] = %q, want %q", k, reloc[k], want)
			}
		}
		if p.Ref != "" && reloc[p.Ref] != want {
			t.Errorf("relocation[%s] (as declared) = %q, want %q", p.Ref, reloc[p.Ref], want)
		}
		for _, im := range p.Images {
			if got := reloc[im.Ref]; got != p.Mirror+"@"+im.Digest {
				t.Errorf("relocation[%s] (image %s of %s) = %q, want %s@%s", im.Ref, im.Name, p.Source, got, p.Mirror, im.Digest)
			}
		}
		for _, d := range p.Dependencies {
			target, dg, _ := strings.Cut(d.Resolved, "@")
			tp := l.Package(target)
			if got := reloc[d.Ref]; d.Ref != "" && got != tp.Mirror+"@"+dg {
				t.Errorf("relocation[%s] (dependency %s of %s) = %q, want %s@%s", d.Ref, d.Name, p.Source, got, tp.Mirror, dg)
			}
		}
	}
	for k, v := range reloc {
		if strings.Contains(v, srcHost) {
			t.Errorf("relocation[%s] = %s points at the source registry", k, v)
		}
	}
	var plan install.Plan
	e2eJSONFile(t, filepath.Join(dir, install.PlanFile), &plan)
	if len(plan.Steps) != len(l.Resolved()) {
		t.Fatalf("plan has %d steps, lock %d packages", len(plan.Steps), len(l.Resolved()))
	}
	pos := map[string]int{}
	for i, st := range plan.Steps {
		if st.Order != i+1 {
			t.Errorf("step %d has order %d", i, st.Order)
		}
		pos[st.Source] = i
	}
	for _, st := range plan.Steps {
		for _, d := range st.Dependencies {
			if pos[d] > pos[st.Source] {
				t.Errorf("plan installs %s before its dependency %s", st.Source, d)
			}
		}
	}
	// Porter v2 wiring: infra before app.
	if pos[srcHost+"/fixtures/v2/infra"] > pos[srcHost+"/fixtures/v2/app"] {
		t.Errorf("plan installs v2/app before v2/infra, whose outputs it uses")
	}
}

func e2eJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
