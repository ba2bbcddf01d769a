package main

import (
	"context"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/cosigntest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/serve"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/trust"
)

// sigLayout is one layout the real cosign writes a signature in, on one
// kind of registry.
type sigLayout struct {
	name   string
	cosign func(testing.TB) *cosigntest.Cosign
	// sign are extra `cosign sign` flags.
	sign []string
	// registry starts a source or mirror registry and returns its host.
	registry func(t testing.TB) string
	// kind is the lock.Signature kind the signature is recorded as.
	kind string
	// listed is the artifactType the registry's referrer listing (the
	// referrers API, or the tag-schema fallback index cosign wrote) gives
	// the bundle; empty for the classic layout.
	listed string
	// native: cosign must use the referrers API itself, writing no
	// referrers tag (sha256-HEX) beside the subject.
	native bool
}

func distributionHost(t testing.TB) string { return registrytest.New(t).Host }

// sigLayouts are the layouts of observations 1 and 2 of issue 28: the
// classic .sig tag; a Sigstore bundle listed by the referrers API; and a
// bundle listed by the referrers tag-schema fallback index cosign writes
// on a registry without the API (distribution), with the bundle's
// artifactType (cosign v3, go-containerregistry ≥ v0.21.6) or with the
// config's application/vnd.oci.empty.v1+json (cosign v2
// --new-bundle-format, go-containerregistry v0.20).
var sigLayouts = []sigLayout{
	{name: "classic .sig (cosign v2)", cosign: cosigntest.V2, registry: distributionHost, kind: trust.KindSig},
	{name: "bundle, tag-schema fallback listing the empty type (cosign v2 --new-bundle-format)", cosign: cosigntest.V2, sign: []string{"--new-bundle-format"},
		registry: distributionHost, kind: trust.KindReferrer, listed: signature.MediaTypeEmpty},
	{name: "bundle, tag-schema fallback (cosign v3)", cosign: cosigntest.V3, registry: distributionHost, kind: trust.KindReferrer, listed: cosigntest.BundleMediaType},
	{name: "bundle, referrers API (cosign v3)", cosign: cosigntest.V3, registry: registrytest.NewReferrersAPI, kind: trust.KindReferrer, listed: signature.MediaTypeEmpty},
	// ferry serve's referrers API lists a manifest with its own
	// artifactType, as the distribution spec says (issue 32).
	{name: "bundle, referrers API of ferry serve (cosign v3)", cosign: cosigntest.V3, registry: ferryServeHost, kind: trust.KindReferrer, listed: cosigntest.BundleMediaType, native: true},
}

// ferryServeHost starts the embedded registry (package serve) on
// 127.0.0.1 and returns its host.
func ferryServeHost(t testing.TB) string {
	t.Helper()
	srv, err := serve.Start(context.Background(), serve.Options{Root: t.TempDir(), Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv.Addr
}

// TestE2ESignatureLayouts: for every layout cosign signs in, a package
// signed by the trusted key passes lock, mirror (to a registry, and
// through an archive), verify and install under
// a required rule (--verify-key), as `cosign verify` passes it at the
// source and at the mirror; one signed by another key fails each, as
// cosign fails it. A lock written before the package was signed
// (`signatures: []`) gains, at mirror, the signature the rule verified at
// the source, so verify and install find it in the mirror; a signed lock,
// which cannot be rewritten, is refused naming ferry lock.
func TestE2ESignatureLayouts(t *testing.T) {
	t.Parallel()
	for _, tc := range sigLayouts {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testSignatureLayout(t, tc)
		})
	}
}

func testSignatureLayout(t *testing.T, tc sigLayout) {
	ctx := context.Background()
	cs := tc.cosign(t)
	src, mirror := tc.registry(t), tc.registry(t)
	env := clitest.New(t)
	env.Vars = append(env.Vars, signature.PasswordEnv+"="+cosigntest.Password)
	key, pub := cs.GenerateKeyPair(t)
	otherKey, _ := cs.GenerateKeyPair(t)

	c := registrytest.Client(t)
	app, rogue := src+"/acme/app", src+"/acme/rogue"
	digests := map[string]digest.Digest{}
	for _, name := range []string{app, rogue} {
		desc, err := fixture.PushBundle(ctx, registrytest.Repository(t, c, name), name, fixture.Bundle{
			Name: name[strings.LastIndex(name, "/")+1:], Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"web"},
		})
		if err != nil {
			t.Fatal(err)
		}
		digests[name] = desc.Digest
	}
	appRef, rogueRef := app+":v1.0.0", rogue+":v1.0.0"
	pinned := func(repo, name string) string { return repo + "@" + digests[name].String() }

	// Observation 3: locks written before the package is signed record
	// `signatures: []`.
	env.MustRun("lock", "--lock", "pre.lock", appRef)
	env.MustRun("lock", "--lock", "pre-signed.lock", appRef, "--sign-key", key)
	if s := e2eReadLock(t, env, "pre.lock").Package(app).Signatures; s == nil || len(s) != 0 {
		t.Fatalf("a lock written before signing records %+v, want signatures: []", s)
	}

	cs.SignImage(t, key, pinned(app, app), tc.sign...)
	cs.SignImage(t, otherKey, pinned(rogue, rogue), tc.sign...)
	checkListed(t, c, app, digests[app], tc.listed)
	if tc.native {
		tags, err := client.ListTags(ctx, registrytest.Repository(t, c, app))
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range tags {
			if tag == "sha256-"+digests[app].Encoded() {
				t.Fatalf("cosign wrote the referrers tag %s: it did not use the referrers API", tag)
			}
		}
	}

	// The oracle at the source.
	if err := cs.VerifyImage(t, pub, pinned(app, app)); err != nil {
		t.Fatalf("cosign verify rejects the signed package at its source: %v", err)
	}
	if err := cs.VerifyImage(t, pub, pinned(rogue, rogue)); err == nil {
		t.Fatal("cosign verify accepts the package signed by another key")
	}

	required := []string{"--verify-key", pub}
	// Each stage runs in order on what the one before left; clitest.Env
	// fails the layout's test, so stages are not subtests.
	stage := func(name string, run func()) {
		t.Helper()
		t.Logf("stage: %s", name)
		run()
	}
	mirrored := func(prefix, name string) string {
		return mirror + "/" + prefix + strings.TrimPrefix(name, src)
	}

	stage("lock", func() {
		env.MustRun(append([]string{"lock", "--lock", "ok.lock", appRef}, required...)...)
		sigs := e2eReadLock(t, env, "ok.lock").Package(app).Signatures
		if len(sigs) != 1 || sigs[0].Kind != tc.kind || sigs[0].Rule != "--verify-key" || sigs[0].Subject != digests[app].String() {
			t.Fatalf("the lock records %+v, want one %s verified by --verify-key", sigs, tc.kind)
		}
		if tc.kind == trust.KindReferrer && sigs[0].ArtifactType != cosigntest.BundleMediaType {
			t.Errorf("the referrer is recorded with artifactType %q, want the bundle's own %s", sigs[0].ArtifactType, cosigntest.BundleMediaType)
		}
		env.Expect(3, append([]string{"lock", "--lock", "rogue.lock", rogueRef}, required...), `trust rule "--verify-key"`, "no signature of "+digests[rogue].String()+" verifies")
	})
	stage("mirror", func() {
		env.MustRun(append([]string{"mirror", "--lock", "ok.lock", "--to", mirror + "/m"}, required...)...)
		if err := cs.VerifyImage(t, pub, pinned(mirrored("m", app), app)); err != nil {
			t.Fatalf("cosign verify rejects the mirrored package: %v", err)
		}
		// Another key: refused before anything is copied.
		env.MustRun("lock", "--lock", "rogue.lock", rogueRef)
		env.Expect(3, append([]string{"mirror", "--lock", "rogue.lock", "--to", mirror + "/r"}, required...), `trust rule "--verify-key"`, "no signature of "+digests[rogue].String()+" verifies")
		// Carried without a policy, it is in the mirror for the far side.
		env.MustRun("mirror", "--lock", "rogue.lock", "--to", mirror+"/r")
		if err := cs.VerifyImage(t, pub, pinned(mirrored("r", rogue), rogue)); err == nil {
			t.Fatal("cosign verify accepts the mirrored package signed by another key")
		}
	})
	stage("verify", func() {
		env.Expect(0, append([]string{"verify", "--lock", "ok.lock"}, required...), "1 signatures")
		env.Expect(3, append([]string{"verify", "--lock", "rogue.lock"}, required...), `trust rule "--verify-key"`)
	})
	stage("install", func() {
		env.MustRun(append([]string{"install", "--lock", "ok.lock", "--dest", "out"}, required...)...)
		env.Expect(3, append([]string{"install", "--lock", "rogue.lock", "--dest", "rogue-out"}, required...), "refusing to install", `trust rule "--verify-key"`)
		e2eAbsent(t, env.Path("rogue-out"))
	})
	stage("archive out and in", func() {
		env.MustRun(append([]string{"mirror", "--lock", "ok.lock", "--to-archive", "c.tar"}, required...)...)
		env.MustRun("mirror", "--from-archive", "c.tar", "--lock", "a.lock", "--to", mirror+"/a")
		if err := cs.VerifyImage(t, pub, pinned(mirrored("a", app), app)); err != nil {
			t.Fatalf("cosign verify rejects the package imported from the archive: %v", err)
		}
		env.Expect(0, append([]string{"verify", "--lock", "a.lock"}, required...), "1 signatures")
		env.MustRun(append([]string{"install", "--lock", "a.lock", "--dest", "a-out"}, required...)...)
	})
	stage("lock written before signing", func() {
		env.Expect(0, append([]string{"mirror", "--lock", "pre.lock", "--to", mirror + "/pre"}, required...), "pre.lock did not record", "recorded and copied")
		sigs := e2eReadLock(t, env, "pre.lock").Package(app).Signatures
		if len(sigs) != 1 || sigs[0].Kind != tc.kind || sigs[0].Rule != "--verify-key" {
			t.Fatalf("after mirror the lock records %+v, want the %s the rule verified", sigs, tc.kind)
		}
		if err := cs.VerifyImage(t, pub, pinned(mirrored("pre", app), app)); err != nil {
			t.Fatalf("cosign verify rejects the package mirrored with a lock written before signing: %v", err)
		}
		env.Expect(0, append([]string{"verify", "--lock", "pre.lock"}, required...), "1 signatures")
		env.MustRun(append([]string{"install", "--lock", "pre.lock", "--dest", "pre-out"}, required...)...)

		// A signed lock is never rewritten: refused before anything is
		// copied, naming ferry lock.
		before := env.ReadFile("pre-signed.lock")
		env.Expect(3, append([]string{"mirror", "--lock", "pre-signed.lock", "--to", mirror + "/pres"}, required...), "is signed and does not record 1 signatures", "run ferry lock --sign-key")
		if env.ReadFile("pre-signed.lock") != before {
			t.Error("the signed lock changed")
		}
		if _, err := registrytest.Repository(t, c, mirrored("pres", app)).Resolve(ctx, digests[app].String()); err == nil {
			t.Error("the refused run copied the package")
		}
		// ferry lock, run again, records it.
		env.MustRun(append([]string{"lock", "--lock", "pre-signed.lock", appRef, "--sign-key", key}, required...)...)
		env.MustRun(append([]string{"mirror", "--lock", "pre-signed.lock", "--to", mirror + "/pres"}, required...)...)
		env.Expect(0, append([]string{"verify", "--lock", "pre-signed.lock"}, required...), "1 signatures")
	})
}

// checkListed asserts that the source lists the bundle referrer of d
// (through the referrers API, or the tag-schema fallback index cosign
// wrote) with the artifactType the layout is about: cosign's own write,
// read with oras-go, not ferry.
func checkListed(t *testing.T, c *client.Client, name string, d digest.Digest, want string) {
	t.Helper()
	if want == "" {
		return
	}
	repo := registrytest.Repository(t, c, name)
	var got []string
	err := repo.Referrers(context.Background(), ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: d}, "", func(refs []ocispec.Descriptor) error {
		for _, r := range refs {
			got = append(got, r.ArtifactType)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("%s lists the referrers of %s with artifact types %q, want one %s", name, d, got, want)
	}
}
