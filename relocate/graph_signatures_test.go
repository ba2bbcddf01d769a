package relocate_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

// artifactTypeBundle is a Sigstore bundle's artifact type, as cosign v3
// attaches it as a referrer.
const artifactTypeBundle = "application/vnd.dev.sigstore.bundle.v0.3+json"

// attachedTo is what a test attached to one manifest of a package's graph
// at the source: a cosign signature tag and a referrer.
type attachedTo struct {
	source   string
	what     string
	subject  ocispec.Descriptor
	sig      ocispec.Descriptor
	referrer ocispec.Descriptor
}

// signedGraph is a source registry holding a Porter bundle (index, config
// manifest, invocation image, component image) and a multi-platform
// Crossplane package, whose invocation image, component image, a platform
// manifest and the bundle's index each carry a cosign signature and a
// Sigstore bundle referrer.
type signedGraph struct {
	src, mirror *registrytest.Registry
	c           *client.Client
	l           *lock.Lock
	attached    []attachedTo
	signer      *fixture.Cosign
}

func newSignedGraph(t *testing.T) *signedGraph {
	t.Helper()
	ctx := context.Background()
	g := &signedGraph{src: registrytest.New(t), mirror: registrytest.New(t), c: registrytest.Client(t)}
	signer, err := fixture.NewCosignECDSA()
	if err != nil {
		t.Fatal(err)
	}
	g.signer = signer
	h := g.src.Host
	app, prov := h+"/p/app", h+"/p/prov"
	appRepo := registrytest.Repository(t, g.c, app)
	provRepo := registrytest.Repository(t, g.c, prov)
	appRoot, err := fixture.PushBundle(ctx, appRepo, app, fixture.Bundle{Name: "app", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"web"}})
	if err != nil {
		t.Fatal(err)
	}
	provRoot, err := fixture.PushXpkg(ctx, provRepo, fixture.Xpkg{Kind: "Provider", Name: "prov", Tags: []string{"v1.0.0"}, Platforms: []string{"linux/amd64", "linux/arm64"}})
	if err != nil {
		t.Fatal(err)
	}
	g.l = &lock.Lock{APIVersion: lock.APIVersion, Kind: lock.Kind, Inputs: "sha256:inputs", Packages: []lock.Package{
		{Source: app, Version: "v1.0.0", Digest: appRoot.Digest.String(), MediaType: appRoot.MediaType, Size: appRoot.Size},
		{Source: prov, Version: "v1.0.0", Digest: provRoot.Digest.String(), MediaType: provRoot.MediaType, Size: provRoot.Size},
	}}
	appIndex := readIndex(t, appRepo, appRoot)
	provIndex := readIndex(t, provRepo, provRoot)
	byType := func(typ string) ocispec.Descriptor {
		for _, m := range appIndex.Manifests {
			if m.Annotations[fixture.AnnotationManifestType] == typ {
				return ocispec.Descriptor{MediaType: m.MediaType, Digest: m.Digest, Size: m.Size}
			}
		}
		t.Fatalf("bundle has no %s manifest", typ)
		return ocispec.Descriptor{}
	}
	platform := provIndex.Manifests[0]
	for _, s := range []struct {
		source, what string
		repo         oras.Target
		subject      ocispec.Descriptor
	}{
		{app, "bundle index", appRepo, appRoot},
		{app, "invocation image", appRepo, byType("invocation")},
		{app, "component image", appRepo, byType("component")},
		{prov, "platform manifest", provRepo, ocispec.Descriptor{MediaType: platform.MediaType, Digest: platform.Digest, Size: platform.Size}},
	} {
		sig, err := signer.SignImage(ctx, s.repo, s.source, s.subject.Digest)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := oras.PackManifest(ctx, s.repo, oras.PackManifestVersion1_1, artifactTypeBundle, oras.PackManifestOptions{
			Subject:             &s.subject,
			ManifestAnnotations: map[string]string{"dev.ferry.test": s.what},
		})
		if err != nil {
			t.Fatal(err)
		}
		g.attached = append(g.attached, attachedTo{source: s.source, what: s.what, subject: s.subject, sig: sig, referrer: ref})
	}
	return g
}

// lockSignatures records in g's lock the signatures attached at the
// source, as `ferry lock` does.
func (g *signedGraph) lockSignatures() {
	for i := range g.l.Packages {
		p := &g.l.Packages[i]
		p.Signatures = []lock.Signature{}
		for _, a := range g.attached {
			if a.source != p.Source {
				continue
			}
			p.Signatures = append(p.Signatures,
				lock.Signature{Subject: a.subject.Digest.String(), Kind: "sig", Digest: a.sig.Digest.String(), MediaType: a.sig.MediaType, Size: a.sig.Size},
				lock.Signature{Subject: a.subject.Digest.String(), Kind: "referrer", Digest: a.referrer.Digest.String(), MediaType: a.referrer.MediaType, Size: a.referrer.Size, ArtifactType: artifactTypeBundle})
		}
	}
}

func readIndex(t *testing.T, f content.Fetcher, desc ocispec.Descriptor) ocispec.Index {
	t.Helper()
	raw, err := content.FetchAll(context.Background(), f, desc)
	if err != nil {
		t.Fatal(err)
	}
	var idx ocispec.Index
	if err := json.Unmarshal(raw, &idx); err != nil {
		t.Fatal(err)
	}
	return idx
}

func cosignTag(d digest.Digest, kind string) string {
	return d.Algorithm().String() + "-" + d.Encoded() + "." + kind
}

func referrers(t *testing.T, c *client.Client, repo string, subject ocispec.Descriptor) []digest.Digest {
	t.Helper()
	r := registrytest.Repository(t, c, repo)
	var out []digest.Digest
	err := r.Referrers(context.Background(), subject, "", func(page []ocispec.Descriptor) error {
		for _, d := range page {
			out = append(out, d.Digest)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errdef.ErrNotFound) {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// checkMirror asserts that every manifest signed at the source has, in
// the mirror laid out by to, its signature tag (listed among the mirror
// repository's tags) and its referrer.
func (g *signedGraph) checkMirror(t *testing.T, to relocate.Mapping) {
	t.Helper()
	ctx := context.Background()
	tags := map[string][]string{}
	for _, a := range g.attached {
		repo := to.Repo(a.source)
		if tags[repo] == nil {
			var err error
			if tags[repo], err = client.ListTags(ctx, registrytest.Repository(t, g.c, repo)); err != nil {
				t.Fatal(err)
			}
		}
		tag := cosignTag(a.subject.Digest, "sig")
		if !slices.Contains(tags[repo], tag) {
			t.Errorf("%s: the mirror's tags %v lack the signature tag %s", a.what, tags[repo], tag)
		} else if d, err := registrytest.Repository(t, g.c, repo).Resolve(ctx, tag); err != nil || d.Digest != a.sig.Digest {
			t.Errorf("%s: %s in the mirror is %v (%v), want %s", a.what, tag, d.Digest, err, a.sig.Digest)
		}
		if got := referrers(t, g.c, repo, a.subject); !slices.Equal(got, []digest.Digest{a.referrer.Digest}) {
			t.Errorf("%s: referrers in the mirror %v, want [%s]", a.what, got, a.referrer.Digest)
		}
	}
}

// TestGraphSignaturesTravel: the signatures and referrers of every signed
// manifest of a package's graph (index, invocation and component images,
// a platform manifest) reach the mirror, by --to and by --to-archive then
// --from-archive alike.
func TestGraphSignaturesTravel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		locked bool
		copy   func(t *testing.T, g *signedGraph, to relocate.Mapping) *relocate.Report
	}{
		{name: "to registry", copy: mirrorTo},
		{name: "archive", copy: viaArchive},
		{name: "to registry, locked signatures", locked: true, copy: mirrorTo},
		{name: "archive, locked signatures", locked: true, copy: viaArchive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newSignedGraph(t)
			if tc.locked {
				g.lockSignatures()
			}
			to, err := relocate.ParseMapping(g.mirror.Host + "/m")
			if err != nil {
				t.Fatal(err)
			}
			g.src.Reset()
			rep := tc.copy(t, g, to)
			g.checkMirror(t, to)
			checkCounts(t, rep, len(g.attached))
			// One tag listing per package answers which cosign tags
			// exist: no request for a tag the source does not hold.
			lists := 0
			for _, r := range g.src.Requests() {
				if strings.HasSuffix(r.Path, "/tags/list") {
					lists++
				}
				if strings.HasSuffix(r.Path, ".att") || strings.HasSuffix(r.Path, ".sbom") {
					t.Errorf("asked the source for %s %s", r.Method, r.Path)
				}
			}
			t.Logf("%d requests to the source, %d of them tag listings", len(g.src.Requests()), lists)
			if lists != len(g.l.Packages) {
				t.Errorf("%d tag listings at the source, want %d (one per package)", lists, len(g.l.Packages))
			}
			// Again, into the mirror that now holds every graph: the
			// manifests of the skipped graphs are read back from the
			// mirror and their signatures found all the same.
			checkCounts(t, tc.copy(t, g, to), len(g.attached))
		})
	}
}

// checkCounts asserts that rep copied n signature tags and n referrers
// and ignored nothing.
func checkCounts(t *testing.T, rep *relocate.Report, n int) {
	t.Helper()
	var sigs, refs int
	for _, p := range rep.Packages {
		sigs += len(p.Signatures)
		refs += len(p.Referrers)
		if len(p.Ignored) > 0 {
			t.Errorf("%s: ignored %v", p.Source, p.Ignored)
		}
	}
	if sigs != n || refs != n {
		t.Errorf("report: %d signatures and %d referrers, want %d each", sigs, refs, n)
	}
	if len(rep.Ignored) > 0 {
		t.Errorf("report ignored %v", rep.Ignored)
	}
}

func mirrorTo(t *testing.T, g *signedGraph, to relocate.Mapping) *relocate.Report {
	t.Helper()
	rep, err := relocate.Mirror(context.Background(), g.l, relocate.Options{Source: g.c, To: to, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func viaArchive(t *testing.T, g *signedGraph, to relocate.Mapping) *relocate.Report {
	t.Helper()
	path := filepath.Join(t.TempDir(), "closure.tar")
	if _, err := relocate.ToArchive(context.Background(), g.l, path, relocate.Options{Source: g.c, Concurrency: 2}, nil); err != nil {
		t.Fatal(err)
	}
	_, rep, err := relocate.FromArchive(context.Background(), path, relocate.Options{Source: g.c, To: to, Concurrency: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestImportPushesOnlyLocked: an archive into which an attestation, a
// referrer, a tag and a repository were injected after it was written.
// With a lock that names its signatures, the import pushes none of them
// and reports each; with a lock written before signatures were recorded,
// the injected attestation and referrer of the package's manifests are
// copied as found (as before), and the other repository still is not.
func TestImportPushesOnlyLocked(t *testing.T) {
	for _, tc := range []struct {
		name         string
		locked       bool
		wantInjected bool
	}{
		{name: "lock names signatures", locked: true, wantInjected: false},
		{name: "lock without signatures", locked: false, wantInjected: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			g := newSignedGraph(t)
			if tc.locked {
				g.lockSignatures()
			}
			app := g.l.Packages[0]
			root := app.Descriptor()
			path := filepath.Join(t.TempDir(), "closure.tar")
			if _, err := relocate.ToArchive(ctx, g.l, path, relocate.Options{Source: g.c, Concurrency: 2}, nil); err != nil {
				t.Fatal(err)
			}
			var att, injectedRef ocispec.Descriptor
			evil := g.src.Host + "/p/evil:v1"
			editArchive(t, path, func(store *oci.Store) {
				var err error
				att, err = oras.PackManifest(ctx, store, oras.PackManifestVersion1_1, "application/vnd.dsse.envelope.v1+json", oras.PackManifestOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := store.Tag(ctx, att, app.Source+":"+cosignTag(root.Digest, "att")); err != nil {
					t.Fatal(err)
				}
				injectedRef, err = oras.PackManifest(ctx, store, oras.PackManifestVersion1_1, "application/spdx+json", oras.PackManifestOptions{Subject: &root})
				if err != nil {
					t.Fatal(err)
				}
				img, err := fixture.PushImage(ctx, store, "evil")
				if err != nil {
					t.Fatal(err)
				}
				if err := store.Tag(ctx, img, evil); err != nil {
					t.Fatal(err)
				}
				if err := store.Tag(ctx, root, app.Source+":latest"); err != nil {
					t.Fatal(err)
				}
			})
			to, err := relocate.ParseMapping(g.mirror.Host + "/m")
			if err != nil {
				t.Fatal(err)
			}
			_, rep, err := relocate.FromArchive(ctx, path, relocate.Options{Source: g.c, To: to, Concurrency: 2}, nil)
			if err != nil {
				t.Fatal(err)
			}
			g.checkMirrorLocked(t, to, tc.wantInjected)
			mirrorApp := registrytest.Repository(t, g.c, to.Repo(app.Source))
			_, err = mirrorApp.Resolve(ctx, cosignTag(root.Digest, "att"))
			if gotAtt := err == nil; gotAtt != tc.wantInjected {
				t.Errorf("injected .att in the mirror: %v (%v), want %v", gotAtt, err, tc.wantInjected)
			}
			gotRefs := referrers(t, g.c, to.Repo(app.Source), root)
			if got := slices.Contains(gotRefs, injectedRef.Digest); got != tc.wantInjected {
				t.Errorf("injected referrer in the mirror: %v (%v), want %v", got, gotRefs, tc.wantInjected)
			}
			if _, err := mirrorApp.Resolve(ctx, "latest"); !errors.Is(err, errdef.ErrNotFound) {
				t.Errorf("injected tag latest in the mirror: %v", err)
			}
			if _, err := registrytest.Repository(t, g.c, to.Repo(g.src.Host+"/p/evil")).Resolve(ctx, "v1"); !errors.Is(err, errdef.ErrNotFound) {
				t.Errorf("injected repository in the mirror: %v", err)
			}
			for _, want := range []string{evil, app.Source + ":latest"} {
				if !slices.Contains(rep.Ignored, want) {
					t.Errorf("report's ignored %v lacks %s", rep.Ignored, want)
				}
			}
			var ignored []string
			for _, p := range rep.Packages {
				ignored = append(ignored, p.Ignored...)
			}
			reported := func(d digest.Digest) bool {
				return slices.ContainsFunc(ignored, func(s string) bool { return strings.Contains(s, d.String()) })
			}
			if reported(att.Digest) == tc.wantInjected || reported(injectedRef.Digest) == tc.wantInjected {
				t.Errorf("packages' ignored %v: .att %s reported %v, referrer %s reported %v; want %v", ignored, att.Digest, reported(att.Digest), injectedRef.Digest, reported(injectedRef.Digest), !tc.wantInjected)
			}
		})
	}
}

// checkMirrorLocked is checkMirror, allowing the bundle index one more
// referrer when injected content was expected to travel.
func (g *signedGraph) checkMirrorLocked(t *testing.T, to relocate.Mapping, injected bool) {
	t.Helper()
	if !injected {
		g.checkMirror(t, to)
		return
	}
	for _, a := range g.attached {
		if got := referrers(t, g.c, to.Repo(a.source), a.subject); !slices.Contains(got, a.referrer.Digest) {
			t.Errorf("%s: referrers in the mirror %v lack %s", a.what, got, a.referrer.Digest)
		}
	}
}

// TestMirrorPushesOnlyLocked: mirroring from a registry with a lock that
// names its signatures leaves behind an attestation added at the source
// since, and reports it.
func TestMirrorPushesOnlyLocked(t *testing.T) {
	ctx := context.Background()
	g := newSignedGraph(t)
	g.lockSignatures()
	app := g.l.Packages[0]
	root := app.Descriptor()
	repo := registrytest.Repository(t, g.c, app.Source)
	att, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "application/vnd.dsse.envelope.v1+json", oras.PackManifestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	attTag := cosignTag(root.Digest, "att")
	if err := repo.Tag(ctx, att, attTag); err != nil {
		t.Fatal(err)
	}
	to, err := relocate.ParseMapping(g.mirror.Host + "/m")
	if err != nil {
		t.Fatal(err)
	}
	rep := mirrorTo(t, g, to)
	g.checkMirror(t, to)
	if _, err := registrytest.Repository(t, g.c, to.Repo(app.Source)).Resolve(ctx, attTag); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("unlocked .att in the mirror: %v", err)
	}
	want := app.Source + ":" + attTag + " (" + att.Digest.String() + ")"
	var ignored []string
	for _, p := range rep.Packages {
		ignored = append(ignored, p.Ignored...)
	}
	if !slices.Equal(ignored, []string{want}) {
		t.Errorf("ignored %v, want [%s]", ignored, want)
	}
}

// editArchive changes the archive at path through fixture.EditArchive.
func editArchive(t *testing.T, path string, edit func(*oci.Store)) {
	t.Helper()
	if err := fixture.EditArchive(path, func(s *oci.Store) error { edit(s); return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestAttached: Attached finds, for every signed manifest of each
// package's graph, the signature and the referrer attached at the source:
// what `ferry lock` records so that a mirror carries it.
func TestAttached(t *testing.T) {
	ctx := context.Background()
	g := newSignedGraph(t)
	g.lockSignatures()
	for _, p := range g.l.Packages {
		got, err := relocate.Attached(ctx, registrytest.Repository(t, g.c, p.Source), p.Descriptor(), 2)
		if err != nil {
			t.Fatal(err)
		}
		key := func(s lock.Signature) string {
			return s.Subject + " " + s.Kind + " " + s.Digest + " " + s.MediaType
		}
		var gotKeys, wantKeys []string
		for _, s := range got {
			gotKeys = append(gotKeys, key(s))
		}
		for _, s := range p.Signatures {
			wantKeys = append(wantKeys, key(s))
		}
		slices.Sort(gotKeys)
		slices.Sort(wantKeys)
		if !slices.Equal(gotKeys, wantKeys) {
			t.Errorf("%s: Attached\n%v\nwant\n%v", p.Source, gotKeys, wantKeys)
		}
	}
}
