package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/faultproxy"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// The faults every registry in TestFaultsFirstRun sits behind: 10% of
// requests, every kind, stalls of 0.25 to 1.5 s against a read timeout of
// 1 s, so some stalls only slow a request and others outlast the timeout.
// (Stalls are waited out in real time: they set the test's length, the
// longest in make test, so they are as short as keeps both kinds.)
const (
	faultsRate        = 0.10
	faultsStallMin    = 250 * time.Millisecond
	faultsStallMax    = 1500 * time.Millisecond
	faultsReadTimeout = "1s"
)

// faultsLayers are the layer sizes of every image in the closure: large
// enough that a body cut short mid-transfer leaves part of a blob behind.
var faultsLayers = []int64{16 << 10, 128 << 10, 512 << 10}

// TestFaultsFirstRun runs the whole pipeline with every registry behind a
// fault-injecting proxy (500/502/503, 429 with Retry-After, resets, bodies
// cut short, stalls, 502 after writes the registry carried out), one seed
// per subtest: the first run of lock, mirror --to, verify --deep, mirror
// --to-archive, mirror --from-archive and install must each succeed, no
// blob in any registry or in the install may be corrupt, and verify --deep
// must pass afterwards through a clean path. Across the seeds the proxies
// must have injected every kind of fault.
func TestFaultsFirstRun(t *testing.T) {
	t.Parallel()
	seeds := []uint64{1, 2, 3, 4}
	var (
		mu    sync.Mutex
		total faultproxy.Stats
	)
	t.Run("seed", func(t *testing.T) {
		for _, seed := range seeds {
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				t.Parallel()
				faultsRun(t, seed, func(st faultproxy.Stats) {
					t.Logf("seed %d: %s", seed, st)
					mu.Lock()
					total = total.Add(st)
					mu.Unlock()
				})
			})
		}
	})
	t.Logf("all seeds: %s", total)
	for _, k := range faultproxy.AllKinds() {
		if total.ByKind[k] == 0 {
			t.Errorf("no %s fault was injected over %d seeds: the test does not exercise it (%s)", k, len(seeds), total)
		}
	}
	if total.Abandoned == 0 {
		t.Errorf("ferry waited out every stall: --read-timeout %s never fired (%s)", faultsReadTimeout, total)
	}
}

// faultsRun is one seed's pipeline. It reports the faults the proxies
// injected to done, also when the run fails.
func faultsRun(t *testing.T, seed uint64, done func(faultproxy.Stats)) {
	ctx := context.Background()
	src := registrytest.New(t)
	mirror := registrytest.New(t)
	private := registrytest.New(t)
	var proxies []*faultproxy.Proxy
	proxy := func(reg *registrytest.Registry, n uint64) *faultproxy.Proxy {
		p, err := faultproxy.Start(reg.Host, faultproxy.Options{
			Seed: seed*10 + n, Rate: faultsRate, RetryAfter: time.Second,
			StallMin: faultsStallMin, StallMax: faultsStallMax,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		proxies = append(proxies, p)
		return p
	}
	srcP := proxy(src, 1)
	mirrorP := proxy(mirror, 2)
	privateP := proxy(private, 3)
	defer func() {
		var injected faultproxy.Stats
		for _, p := range proxies {
			injected = injected.Add(p.Stats())
		}
		done(injected)
	}()

	// The closure, pushed straight into the source (no faults): app
	// depends on db (two versions, the range picks the higher) and cache;
	// every bundle has an invocation image and a component image of three
	// layers. References name the source through its proxy.
	c := e2eClient(t)
	push := func(b fixture.Bundle) {
		t.Helper()
		name := "faults/" + b.Name
		faultsPushBundle(t, ctx, e2eRepo(t, c, src.Host+"/"+name), srcP.Addr+"/"+name, b)
	}
	push(fixture.Bundle{Name: "db", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"server"}})
	push(fixture.Bundle{Name: "db", Version: "1.1.0", Tags: []string{"v1.1.0"}, Images: []string{"server"}})
	push(fixture.Bundle{Name: "cache", Version: "2.0.0", Tags: []string{"v2.0.0"}, Images: []string{"server"}})
	push(fixture.Bundle{Name: "app", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"web"}, Deps: []fixture.Dep{
		{Name: "db", Bundle: srcP.Addr + "/faults/db", Ranges: []string{"^1.0.0"}},
		{Name: "cache", Bundle: srcP.Addr + "/faults/cache:v2.0.0"},
	}})

	env := e2eEnv(t)
	env.WriteFile("ferry.yaml", fmt.Sprintf(`apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: %s/faults/app:v1.0.0
`, srcP.Addr))
	rt := []string{"--read-timeout", faultsReadTimeout}
	first := func(env *clitest.Env, args ...string) {
		t.Helper()
		start := time.Now()
		r := env.Run(append(args, rt...)...)
		if r.Code != 0 {
			t.Fatalf("seed %d: first run of ferry %s: exit %d after %s\nstdout:\n%s\nstderr:\n%s", seed, strings.Join(args, " "), r.Code, time.Since(start).Round(time.Millisecond), faultsTail(r.Stdout), faultsTail(r.Stderr))
		}
		t.Logf("seed %d: ferry %s: %s", seed, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	}
	first(env, "lock")
	l := e2eReadLock(t, env, "ferry.lock")
	if n := len(l.Resolved()); n != 3 {
		t.Fatalf("seed %d: the lock holds %d packages, want app, db and cache", seed, n)
	}
	if db := l.Package(srcP.Addr + "/faults/db"); db == nil || db.Version != "v1.1.0" {
		t.Fatalf("seed %d: db locked as %+v, want v1.1.0", seed, db)
	}
	first(env, "mirror", "--to", mirrorP.Addr+"/mirror", "-j", "4")
	first(env, "verify", "--deep")
	first(env, "mirror", "--to-archive", "closure.tar")

	air := clitest.New(t)
	if err := os.Rename(env.Path("closure.tar"), air.Path("closure.tar")); err != nil {
		t.Fatal(err)
	}
	first(air, "mirror", "--from-archive", "closure.tar", "--to", privateP.Addr+"/private", "-j", "4")
	first(air, "install", "--dest", "out")

	// Afterwards, through a clean path: every blob intact, and verify
	// --deep passes for both mirrors.
	for _, p := range proxies {
		p.SetRate(0)
	}
	for name, reg := range map[string]*registrytest.Registry{"source": src, "mirror": mirror, "private": private} {
		faultsCheckBlobs(t, name, filepath.Join(reg.Root, "docker", "registry", "v2", "blobs"), "data")
	}
	faultsCheckBlobs(t, "install", air.Path("out/blobs"), "")
	env.Expect(0, []string{"verify", "--deep"}, "re-hashed")
	air.Expect(0, []string{"verify", "--deep"}, "re-hashed")
	installed := e2eReadLock(t, air, "ferry.lock")
	e2eCheckInstall(t, air.Path("out"), installed, srcP.Addr)
}

// faultsPushBundle publishes b to repo in the cnab-to-oci layout, as
// fixture.PushBundle does, but with images of faultsLayers; name is the
// repository ("HOST/PATH") bundle.json's image references use.
func faultsPushBundle(t *testing.T, ctx context.Context, repo *remote.Repository, name string, b fixture.Bundle) {
	t.Helper()
	seed := strings.SplitN(name, "/", 2)[1] + "@" + b.Version
	inv, err := fixture.PushImage(ctx, repo, seed+"/invocation", faultsLayers...)
	if err != nil {
		t.Fatal(err)
	}
	components := map[string]ocispec.Descriptor{}
	for _, img := range b.Images {
		if components[img], err = fixture.PushImage(ctx, repo, seed+"/component/"+img, faultsLayers...); err != nil {
			t.Fatal(err)
		}
	}
	bundleJSON, err := b.BundleJSON(name, inv, components)
	if err != nil {
		t.Fatal(err)
	}
	pushJSON := func(mediaType string, v any) ocispec.Descriptor {
		data, err := fixture.CanonicalJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		return faultsPushBytes(t, ctx, repo, mediaType, data)
	}
	cfg := faultsPushBytes(t, ctx, repo, fixture.MediaTypeCNABConfig, bundleJSON)
	cm := pushJSON(ocispec.MediaTypeImageManifest, ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		Config: cfg, Layers: []ocispec.Descriptor{},
	})
	cm.Annotations = map[string]string{fixture.AnnotationManifestType: "config"}
	inv.Annotations = map[string]string{fixture.AnnotationManifestType: "invocation"}
	manifests := []ocispec.Descriptor{cm, inv}
	for _, img := range b.Images {
		d := components[img]
		d.Annotations = map[string]string{fixture.AnnotationManifestType: "component", fixture.AnnotationComponentName: img}
		manifests = append(manifests, d)
	}
	ix, err := fixture.CanonicalJSON(ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex, Manifests: manifests,
		Annotations: map[string]string{
			fixture.AnnotationRuntimeVersion: fixture.SchemaVersion,
			fixture.AnnotationArtifactType:   fixture.ArtifactTypeCNAB,
			ocispec.AnnotationTitle:          b.Name,
			ocispec.AnnotationVersion:        b.Version,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, Digest: digest.FromBytes(ix), Size: int64(len(ix))}
	for _, tag := range b.DefaultTags() {
		if err := repo.PushReference(ctx, d, strings.NewReader(string(ix)), tag); err != nil {
			t.Fatal(err)
		}
	}
}

func faultsPushBytes(t *testing.T, ctx context.Context, repo *remote.Repository, mediaType string, data []byte) ocispec.Descriptor {
	t.Helper()
	d := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(data), Size: int64(len(data))}
	if ok, err := repo.Exists(ctx, d); err != nil {
		t.Fatal(err)
	} else if !ok {
		if err := repo.Push(ctx, d, strings.NewReader(string(data))); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// faultsCheckBlobs hashes every blob under root, laid out as
// sha256/[XX/]HEX[/file], and fails the test for any whose content does
// not match its name. file is the name of the content file inside a
// blob's directory ("data" in a registry's storage), or empty when the
// blob is the file itself (an OCI layout).
func faultsCheckBlobs(t *testing.T, what, root, file string) {
	t.Helper()
	checked := 0
	err := filepath.WalkDir(filepath.Join(root, "sha256"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		want := d.Name()
		if file != "" {
			if d.Name() != file {
				return nil
			}
			want = filepath.Base(filepath.Dir(path))
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		checked++
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			t.Errorf("%s: blob sha256:%s holds content hashing to sha256:%s", what, want, got)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if checked == 0 {
		t.Errorf("%s: no blobs under %s", what, root)
	}
}

// faultsTail keeps the end of a long stderr, where the error is.
func faultsTail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}
