package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/cosigntest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestE2ENestedPolicy: a trust rule checks every signed manifest of a
// package's graph, as `cosign verify REPO@DIGEST` checks that manifest
// (issue 28, observation 8). A Porter bundle whose index is signed by the
// trusted key but whose invocation image is signed by another key fails
// lock, mirror (before anything is copied), verify and install with exit
// 3 naming the invocation image, as the real cosign rejects that image;
// with the invocation image signed by the trusted key, every stage passes
// and the mirror holds both signatures, which cosign accepts there.
func TestE2ENestedPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cosign func(testing.TB) *cosigntest.Cosign
	}{
		{name: "classic .sig (cosign v2)", cosign: cosigntest.V2},
		{name: "bundle, tag-schema fallback (cosign v3)", cosign: cosigntest.V3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testNestedPolicy(t, tc.cosign(t))
		})
	}
}

func testNestedPolicy(t *testing.T, cs *cosigntest.Cosign) {
	ctx := context.Background()
	src, mirror := distributionHost(t), distributionHost(t)
	env := clitest.New(t)
	key, pub := cs.GenerateKeyPair(t)
	otherKey, _ := cs.GenerateKeyPair(t)

	c := registrytest.Client(t)
	good, bad := src+"/acme/good", src+"/acme/bad"
	roots, invocations := map[string]digest.Digest{}, map[string]digest.Digest{}
	for _, name := range []string{good, bad} {
		repo := registrytest.Repository(t, c, name)
		desc, err := fixture.PushBundle(ctx, repo, name, fixture.Bundle{
			Name: name[strings.LastIndex(name, "/")+1:], Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"web"},
		})
		if err != nil {
			t.Fatal(err)
		}
		roots[name] = desc.Digest
		raw, err := content.FetchAll(ctx, repo, desc)
		if err != nil {
			t.Fatal(err)
		}
		var idx ocispec.Index
		if err := json.Unmarshal(raw, &idx); err != nil {
			t.Fatal(err)
		}
		for _, m := range idx.Manifests {
			if m.Annotations[fixture.AnnotationManifestType] == "invocation" {
				invocations[name] = m.Digest
			}
		}
	}
	// Both indexes by the trusted key; the invocation images by the
	// trusted key (good) and by another (bad): a bundle re-signed inside.
	cs.SignImage(t, key, good+"@"+roots[good].String())
	cs.SignImage(t, key, bad+"@"+roots[bad].String())
	cs.SignImage(t, key, good+"@"+invocations[good].String())
	cs.SignImage(t, otherKey, bad+"@"+invocations[bad].String())

	// The oracle: cosign verifies a manifest by its digest.
	for _, name := range []string{good, bad} {
		if err := cs.VerifyImage(t, pub, name+"@"+roots[name].String()); err != nil {
			t.Fatalf("cosign verify rejects the index of %s: %v", name, err)
		}
	}
	if err := cs.VerifyImage(t, pub, good+"@"+invocations[good].String()); err != nil {
		t.Fatalf("cosign verify rejects the invocation image signed by the key: %v", err)
	}
	if err := cs.VerifyImage(t, pub, bad+"@"+invocations[bad].String()); err == nil {
		t.Fatal("cosign verify accepts the invocation image signed by another key")
	}

	required := []string{"--verify-key", pub}
	badNested := bad + "@" + invocations[bad].String()
	mirrored := func(prefix, name string) string { return mirror + "/" + prefix + strings.TrimPrefix(name, src) }

	// lock
	env.Expect(3, append([]string{"lock", "--lock", "bad.lock", bad + ":v1.0.0"}, required...), `trust rule "--verify-key"`, "manifest "+badNested)
	env.MustRun(append([]string{"lock", "--lock", "good.lock", good + ":v1.0.0"}, required...)...)
	ruled := map[string]bool{}
	for _, s := range e2eReadLock(t, env, "good.lock").Package(good).Signatures {
		if s.Rule == "--verify-key" {
			ruled[s.Subject] = true
		}
	}
	if !ruled[roots[good].String()] || !ruled[invocations[good].String()] || len(ruled) != 2 {
		t.Fatalf("the lock records signatures verified for %v, want the index and the invocation image", ruled)
	}

	// mirror: refused before anything is copied.
	env.MustRun("lock", "--lock", "bad.lock", bad+":v1.0.0")
	env.Expect(3, append([]string{"mirror", "--lock", "bad.lock", "--to", mirror + "/r"}, required...), "manifest "+badNested)
	if _, err := registrytest.Repository(t, c, mirrored("r", bad)).Resolve(ctx, roots[bad].String()); err == nil {
		t.Error("the refused mirror copied the package")
	}
	env.MustRun(append([]string{"mirror", "--lock", "good.lock", "--to", mirror + "/m"}, required...)...)
	for _, d := range []digest.Digest{roots[good], invocations[good]} {
		if err := cs.VerifyImage(t, pub, mirrored("m", good)+"@"+d.String()); err != nil {
			t.Fatalf("cosign verify rejects %s at the mirror: %v", d, err)
		}
	}

	// verify and install: the bad bundle, carried without a policy, is
	// in the mirror with its foreign signature, which cosign rejects
	// there too.
	env.MustRun("mirror", "--lock", "bad.lock", "--to", mirror+"/r")
	if err := cs.VerifyImage(t, pub, mirrored("r", bad)+"@"+invocations[bad].String()); err == nil {
		t.Fatal("cosign verify accepts the mirrored invocation image signed by another key")
	}
	mirroredNested := mirrored("r", bad) + "@" + invocations[bad].String()
	env.Expect(3, append([]string{"verify", "--lock", "bad.lock"}, required...), mirroredNested, `trust rule "--verify-key"`)
	env.Expect(3, append([]string{"install", "--lock", "bad.lock", "--dest", "bad-out"}, required...), "refusing to install", mirroredNested)
	e2eAbsent(t, env.Path("bad-out"))
	env.Expect(0, append([]string{"verify", "--lock", "good.lock"}, required...), "2 signatures")
	env.MustRun(append([]string{"install", "--lock", "good.lock", "--dest", "out"}, required...)...)
}
