package registrytest_test

import (
	"context"
	"testing"

	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/memory"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/registrytest"
)

func TestPushPull(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	mem := memory.New()
	desc, err := oras.PackManifest(ctx, mem, oras.PackManifestVersion1_1, "application/vnd.test", oras.PackManifestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Tag(ctx, desc, "v1"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(client.Options{RegistryConfig: t.TempDir() + "/config.json"})
	if err != nil {
		t.Fatal(err)
	}
	repo, err := c.Repository(reg.Host + "/a/b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oras.Copy(ctx, mem, "v1", repo, "v1", oras.DefaultCopyOptions); err != nil {
		t.Fatal(err)
	}
	got, err := repo.Resolve(ctx, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != desc.Digest {
		t.Fatalf("digest %s, want %s", got.Digest, desc.Digest)
	}
	reg.Stop()
	if _, err := repo.Resolve(ctx, "v1"); err == nil {
		t.Fatal("resolve after Stop succeeded")
	}
}
