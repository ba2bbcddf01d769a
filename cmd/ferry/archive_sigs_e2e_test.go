package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
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
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/pipelinetest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
)

// TestE2EArchiveCarriesGraphSignatures: the cosign signatures and
// Sigstore bundle referrers of a bundle's index, invocation image and
// component image reach the mirror by `mirror --to` and by `--to-archive`
// then `--from-archive` alike. An attestation and a repository injected
// into the archive afterwards are not pushed, and the import warns about
// each.
func TestE2EArchiveCarriesGraphSignatures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, _, c, l := pipelinetest.MirroredLock(t)
	env := clitest.New(t)
	app := l.Package(src.Host + "/p/app")
	appRepo := e2eRepo(t, c, app.Source)
	root := app.Descriptor()
	raw, err := content.FetchAll(ctx, appRepo, root)
	if err != nil {
		t.Fatal(err)
	}
	var idx ocispec.Index
	if err := json.Unmarshal(raw, &idx); err != nil {
		t.Fatal(err)
	}
	subjects := []ocispec.Descriptor{root}
	for _, m := range idx.Manifests {
		if typ := m.Annotations[fixture.AnnotationManifestType]; typ == "invocation" || typ == "component" {
			subjects = append(subjects, ocispec.Descriptor{MediaType: m.MediaType, Digest: m.Digest, Size: m.Size})
		}
	}
	if len(subjects) != 3 {
		t.Fatalf("bundle manifests: %v", idx.Manifests)
	}
	signer, err := fixture.NewCosignECDSA()
	if err != nil {
		t.Fatal(err)
	}
	type attached struct{ subject, sig, ref ocispec.Descriptor }
	var want []attached
	app.Signatures = []lock.Signature{}
	for _, s := range subjects {
		sig, err := signer.SignImage(ctx, appRepo, app.Source, s.Digest)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := oras.PackManifest(ctx, appRepo, oras.PackManifestVersion1_1, "application/vnd.dev.sigstore.bundle.v0.3+json", oras.PackManifestOptions{Subject: &s})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, attached{s, sig, ref})
		app.Signatures = append(app.Signatures,
			lock.Signature{Subject: s.Digest.String(), Kind: "sig", Digest: sig.Digest.String(), MediaType: sig.MediaType, Size: sig.Size},
			lock.Signature{Subject: s.Digest.String(), Kind: "referrer", Digest: ref.Digest.String(), MediaType: ref.MediaType, Size: ref.Size})
	}
	if err := l.Write(env.Path("ferry.lock")); err != nil {
		t.Fatal(err)
	}
	sigTag := func(d digest.Digest, kind string) string { return "sha256-" + d.Encoded() + "." + kind }
	check := func(t *testing.T, repoName string) {
		t.Helper()
		repo := e2eRepo(t, c, repoName)
		tags, err := client.ListTags(ctx, repo)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !slices.Contains(tags, sigTag(w.subject.Digest, "sig")) {
				t.Errorf("%s: tags %v lack the signature of %s", repoName, tags, w.subject.Digest)
			}
			var refs []digest.Digest
			if err := repo.Referrers(ctx, w.subject, "", func(page []ocispec.Descriptor) error {
				for _, d := range page {
					refs = append(refs, d.Digest)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(refs, []digest.Digest{w.ref.Digest}) {
				t.Errorf("%s: referrers of %s: %v, want [%s]", repoName, w.subject.Digest, refs, w.ref.Digest)
			}
		}
		if slices.Contains(tags, sigTag(root.Digest, "att")) {
			t.Errorf("%s: the injected attestation was pushed", repoName)
		}
	}

	// --to.
	mirror := registrytest.New(t)
	env.MustRun("mirror", "--lock", "ferry.lock", "--to", mirror.Host+"/m")
	check(t, mirror.Host+"/m/p/app")

	// --to-archive, with injected content, then --from-archive.
	{
		env.MustRun("mirror", "--lock", "ferry.lock", "--to-archive", "closure.tar")
		evil := src.Host + "/p/evil:v1"
		var att ocispec.Descriptor
		e2eEditArchive(t, env.Path("closure.tar"), func(store *oci.Store) {
			var err error
			att, err = oras.PackManifest(ctx, store, oras.PackManifestVersion1_1, "application/vnd.dsse.envelope.v1+json", oras.PackManifestOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Tag(ctx, att, app.Source+":"+sigTag(root.Digest, "att")); err != nil {
				t.Fatal(err)
			}
			img, err := fixture.PushImage(ctx, store, "evil")
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Tag(ctx, img, evil); err != nil {
				t.Fatal(err)
			}
		})
		air := clitest.New(t)
		if err := os.Rename(env.Path("closure.tar"), air.Path("closure.tar")); err != nil {
			t.Fatal(err)
		}
		private := registrytest.New(t)
		r := air.MustRun("mirror", "--from-archive", "closure.tar", "--to", private.Host)
		for _, w := range []string{
			"warning: not copied, the lock does not name it: " + app.Source + ":" + sigTag(root.Digest, "att") + " (" + att.Digest.String() + ")",
			"warning: not imported, the lock does not name it: " + evil,
		} {
			if !strings.Contains(r.Stderr, w) {
				t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
			}
		}
		check(t, private.Host+"/p/app")
		if _, err := e2eRepo(t, c, private.Host+"/p/evil").Resolve(ctx, "v1"); !errors.Is(err, errdef.ErrNotFound) {
			t.Errorf("the injected repository was pushed: %v", err)
		}
	}
}

// e2eEditArchive changes the archive at path through fixture.EditArchive.
func e2eEditArchive(t *testing.T, path string, edit func(*oci.Store)) {
	t.Helper()
	if err := fixture.EditArchive(path, func(s *oci.Store) error { edit(s); return nil }); err != nil {
		t.Fatal(err)
	}
}
