package verify_test

import (
	"context"
	"testing"

	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/crossplane"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/formats"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/verify"
)

// TestContentsKind: a plain image index, which Crossplane's first look
// (Match) takes for a possible package, is not judged a Crossplane
// package when the format reads it and finds no package.yaml (make
// bench's W4 verify --deep failed so); a real Crossplane package locked
// under another kind is still a problem.
func TestContentsKind(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	repo := registrytest.Repository(t, c, reg.Host+"/plain/index")
	idx, _, err := fixture.PushImageIndex(ctx, repo, "plain-index", "linux/amd64", "linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	xrepo := registrytest.Repository(t, c, reg.Host+"/acme/provider-x")
	xpkg, err := fixture.PushXpkg(ctx, xrepo, fixture.Xpkg{Kind: "Provider", Name: "provider-x", Tags: []string{"v1.0.0"}})
	if err != nil {
		t.Fatal(err)
	}
	xkind := crossplane.Format{}.Kinds()[0]
	for _, tc := range []struct {
		name     string
		repo     content.Fetcher
		kind     string
		problems int
	}{
		{"plain index as an artifact", repo, format.KindArtifact, 0},
		{"plain index as an image", repo, format.KindImage, 0},
		// Match alone judges a kind the format agrees with: reading every
		// package again would make verify fetch each package's layers.
		{"plain index as a Crossplane package", repo, xkind, 0},
		{"Crossplane package as an image", xrepo, format.KindImage, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := idx
			if tc.repo == content.Fetcher(xrepo) {
				root = xpkg
			}
			raw, err := content.FetchAll(ctx, tc.repo, root)
			if err != nil {
				t.Fatal(err)
			}
			p := &lock.Package{Source: "x", Kind: tc.kind, Digest: root.Digest.String(), MediaType: root.MediaType, Size: root.Size}
			got := verify.Contents(ctx, tc.repo, formats.All(), p, root, raw)
			if len(got) != tc.problems {
				t.Errorf("%d problems, want %d: %+v", len(got), tc.problems, got)
			}
		})
	}
}
