package relocate_test

import (
	"context"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"

	"github.com/ferryhq/ferry/internal/pipelinetest"
	"github.com/ferryhq/ferry/relocate"
)

// TestMirrorSignaturesAndReferrers: a cosign signature tag
// (sha256-HEX.sig) and an OCI referrer of a package travel with it.
func TestMirrorSignaturesAndReferrers(t *testing.T) {
	ctx := context.Background()
	_, mirror, c, l := pipelinetest.MirroredLock(t)
	p := l.Resolved()[0]
	srcRepo, err := c.Repository(p.Source)
	if err != nil {
		t.Fatal(err)
	}
	root := p.Descriptor()
	// A cosign-style signature: a manifest tagged sha256-HEX.sig.
	sig, err := oras.PackManifest(ctx, srcRepo, oras.PackManifestVersion1_1, "application/vnd.dev.cosign.artifact.sig.v1+json", oras.PackManifestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sigTag := strings.Replace(root.Digest.String(), ":", "-", 1) + ".sig"
	if err := srcRepo.Tag(ctx, sig, sigTag); err != nil {
		t.Fatal(err)
	}
	// An SBOM attached as an OCI referrer.
	sbom, err := oras.PackManifest(ctx, srcRepo, oras.PackManifestVersion1_1, "application/spdx+json", oras.PackManifestOptions{Subject: &root})
	if err != nil {
		t.Fatal(err)
	}
	to, err := relocate.ParseMapping(mirror.Host + "/again")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := relocate.Mirror(ctx, l, relocate.Options{Source: c, To: to})
	if err != nil {
		t.Fatal(err)
	}
	var got *relocate.PackageResult
	for i := range rep.Packages {
		if rep.Packages[i].Source == p.Source {
			got = &rep.Packages[i]
		}
	}
	if got == nil || len(got.Signatures) != 1 || got.Signatures[0] != sigTag || len(got.Referrers) != 1 || got.Referrers[0] != sbom.Digest.String() {
		t.Fatalf("report: %+v", got)
	}
	dst, err := c.Repository(to.Repo(p.Source))
	if err != nil {
		t.Fatal(err)
	}
	if d, err := dst.Resolve(ctx, sigTag); err != nil || d.Digest != sig.Digest {
		t.Errorf("signature tag in the mirror: %v %v", d.Digest, err)
	}
	var refs []ocispec.Descriptor
	if err := dst.Referrers(ctx, root, "", func(page []ocispec.Descriptor) error {
		refs = append(refs, page...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(refs) != 1 || refs[0].Digest != sbom.Digest {
		t.Errorf("referrers in the mirror: %v", refs)
	}
}
