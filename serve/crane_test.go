package serve_test

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/ferryhq/ferry/serve"
)

// TestCraneClient pushes to and pulls from the embedded registry with
// go-containerregistry, the library behind crane: an image, an index, tag
// listing, and a cross-repository copy.
func TestCraneClient(t *testing.T) {
	srv, err := serve.Start(context.Background(), serve.Options{Root: t.TempDir(), Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	opt := name.Insecure

	img, err := random.Image(1024, 3)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(srv.Addr+"/crane/img:v1", opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("push image: %v", err)
	}
	got, err := remote.Image(ref)
	if err != nil {
		t.Fatalf("pull image: %v", err)
	}
	want, _ := img.Digest()
	if d, _ := got.Digest(); d != want {
		t.Fatalf("pulled %s, pushed %s", d, want)
	}
	layers, err := got.Layers()
	if err != nil || len(layers) != 3 {
		t.Fatalf("layers: %d, %v", len(layers), err)
	}

	idx, err := random.Index(512, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	iref, _ := name.ParseReference(srv.Addr+"/crane/idx:v1", opt)
	if err := remote.WriteIndex(iref, idx); err != nil {
		t.Fatalf("push index: %v", err)
	}
	gotIdx, err := remote.Index(iref)
	if err != nil {
		t.Fatal(err)
	}
	wantIdx, _ := idx.Digest()
	if d, _ := gotIdx.Digest(); d != wantIdx {
		t.Fatalf("index digest %s, want %s", d, wantIdx)
	}

	if err := crane.Copy(srv.Addr+"/crane/img:v1", srv.Addr+"/crane/copy:v2", crane.Insecure); err != nil {
		t.Fatalf("crane copy: %v", err)
	}
	tags, err := crane.ListTags(srv.Addr+"/crane/copy", crane.Insecure)
	if err != nil || len(tags) != 1 || tags[0] != "v2" {
		t.Fatalf("tags %v, %v", tags, err)
	}
	d, err := crane.Digest(srv.Addr+"/crane/copy:v2", crane.Insecure)
	if err != nil || d != want.String() {
		t.Fatalf("copy digest %s, want %s (%v)", d, want, err)
	}
}
