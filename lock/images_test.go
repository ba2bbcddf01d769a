package lock_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
)

// TestCheckImages: a package's images must be in the graph under its root
// manifest, walked in a real registry; an image digest edited into the
// lock is a mismatch (exit 3) naming the package and the image.
func TestCheckImages(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	src := reg.Host + "/acme/app"
	repo := registrytest.Repository(t, c, src)
	root, err := fixture.PushBundle(ctx, repo, src, fixture.Bundle{Name: "app", Version: "1.0.0", Images: []string{"nginx", "redis"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := content.FetchAll(ctx, repo, root)
	if err != nil {
		t.Fatal(err)
	}
	var ix ocispec.Index
	if err := json.Unmarshal(raw, &ix); err != nil {
		t.Fatal(err)
	}
	pkg := func() *lock.Package {
		p := &lock.Package{Source: src, Version: "1.0.0", Digest: root.Digest.String(), MediaType: root.MediaType, Size: root.Size}
		for _, m := range ix.Manifests {
			if n := m.Annotations[fixture.AnnotationComponentName]; n != "" {
				p.Images = append(p.Images, lock.Image{Name: n, Ref: "docker.io/library/" + n, Digest: m.Digest.String(), MediaType: m.MediaType, Size: m.Size})
			}
		}
		if len(p.Images) != 2 {
			t.Fatalf("the bundle's index has %d component images, want 2", len(p.Images))
		}
		return p
	}
	// A blob deep in an image is in the graph too: WalkGraph goes below
	// the root index.
	imageManifest, err := content.FetchAll(ctx, repo, ix.Manifests[1])
	if err != nil {
		t.Fatal(err)
	}
	var im ocispec.Manifest
	if err := json.Unmarshal(imageManifest, &im); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		edit    func(p *lock.Package)
		missing string // "" when the images are all in the graph
	}{
		{"intact", func(*lock.Package) {}, ""},
		{"no images", func(p *lock.Package) { p.Images = nil }, ""},
		{"an image edited", func(p *lock.Package) { p.Images[1].Digest = digest.FromString("elsewhere").String() }, "redis@" + digest.FromString("elsewhere").String()},
		{"an image from another package", func(p *lock.Package) { p.Images[0].Digest = digest.FromString("other").String() }, "nginx@"},
		{"a layer of the invocation image", func(p *lock.Package) { p.Images[0].Digest = im.Layers[0].Digest.String() }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pkg()
			tt.edit(p)
			graph, err := p.WalkGraph(ctx, repo)
			if err != nil {
				t.Fatal(err)
			}
			if !graph[root.Digest] || !graph[ix.Manifests[0].Digest] {
				t.Fatalf("the graph lacks the root or its config manifest: %v", graph)
			}
			err = p.CheckImages(func(d digest.Digest) bool { return graph[d] })
			if tt.missing == "" {
				if err != nil {
					t.Fatalf("CheckImages: %v", err)
				}
				return
			}
			var ie *lock.ImageError
			if !errors.As(err, &ie) || exitcode.Of(err) != exitcode.Mismatch {
				t.Fatalf("CheckImages = %v (exit %d), want an *ImageError with exit 3", err, exitcode.Of(err))
			}
			if !strings.Contains(err.Error(), src+"@"+root.Digest.String()) || !strings.Contains(err.Error(), tt.missing) || len(ie.Images) != 1 {
				t.Errorf("error %q does not name the package and only %s", err, tt.missing)
			}
		})
	}
	// A root that is not in the registry fails the walk.
	p := pkg()
	p.Digest = digest.FromString("gone").String()
	if _, err := p.WalkGraph(ctx, repo); err == nil || !strings.Contains(err.Error(), src) {
		t.Errorf("WalkGraph of a missing root: %v", err)
	}
}
