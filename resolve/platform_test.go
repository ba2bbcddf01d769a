package resolve_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/resolve"
)

// TestPlatform: without a platform an index is locked whole; with one,
// its manifest for that platform is locked under the tag, the platform
// recorded and a warning saying what that does to digests and
// signatures; a single manifest is kept as it is; a platform the index
// lacks is an error listing those it has.
func TestPlatform(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := testClient(t)
	src := reg.Host + "/lib/multi"
	repo, err := c.Repository(src)
	if err != nil {
		t.Fatal(err)
	}
	idx, children, err := fixture.PushImageIndex(ctx, repo, "platform-test", "linux/amd64", "linux/arm64", "linux/arm/v7")
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, idx, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	single, err := fixture.PushImage(ctx, repo, "platform-single")
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, single, "single"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, ref, platform string
		digest              string
		warning             bool
		err                 string
	}{
		{name: "the index whole", ref: src + ":1.0.0", digest: idx.Digest.String()},
		{name: "one platform", ref: src + ":1.0.0", platform: "linux/amd64", digest: children["linux/amd64"].Digest.String(), warning: true},
		{name: "arm64 is arm64/v8", ref: src + ":1.0.0", platform: "linux/arm64/v8", digest: children["linux/arm64"].Digest.String(), warning: true},
		{name: "a variant", ref: src + ":1.0.0", platform: "linux/arm/v7", digest: children["linux/arm/v7"].Digest.String(), warning: true},
		{name: "by the index digest", ref: src + "@" + idx.Digest.String(), platform: "linux/amd64", digest: children["linux/amd64"].Digest.String(), warning: true},
		{name: "a single manifest", ref: src + ":single", platform: "linux/amd64", digest: single.Digest.String()},
		{name: "a missing platform", ref: src + ":1.0.0", platform: "windows/amd64", err: "has no manifest for platform windows/amd64 (platforms: linux/amd64 linux/arm64 linux/arm/v7)"},
		{name: "a bad platform", ref: src + ":1.0.0", platform: "amd64", err: `platform "amd64"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: tt.ref, Kind: format.KindImage, Platform: tt.platform}}, resolve.Options{Registry: c})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := g.Packages[g.Roots[0]]
			if p.Descriptor.Digest.String() != tt.digest {
				t.Errorf("locked %s, want %s", p.Descriptor.Digest, tt.digest)
			}
			if got := p.Meta.Attributes[resolve.AttributePlatform]; got != tt.platform {
				t.Errorf("platform attribute %q, want %q", got, tt.platform)
			}
			if ref, _, _ := strings.Cut(tt.ref, "@"); strings.Contains(ref[len(src):], ":") && p.Version != strings.TrimPrefix(ref[len(src):], ":") {
				t.Errorf("version %q", p.Version)
			}
			warned := len(g.Warnings) == 1 && strings.Contains(g.Warnings[0], "a cosign signature made for the index does not verify it") && strings.Contains(g.Warnings[0], idx.Digest.String())
			if warned != tt.warning {
				t.Errorf("warnings %q", g.Warnings)
			}
		})
	}
}
