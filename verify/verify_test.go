package verify_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/pipelinetest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/verify"
)

// firstLayer returns the first layer of image im of package p, in the mirror.
func firstLayer(t *testing.T, c *client.Client, p *lock.Package, image string) digest.Digest {
	t.Helper()
	repo, err := c.Repository(p.Mirror)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range p.Images {
		if im.Name != image {
			continue
		}
		raw, err := content.FetchAll(context.Background(), repo, ocispec.Descriptor{MediaType: im.MediaType, Digest: digest.Digest(im.Digest), Size: im.Size})
		if err != nil {
			t.Fatal(err)
		}
		var m ocispec.Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m.Layers[0].Digest
	}
	t.Fatalf("no image %s", image)
	return ""
}

func TestVerify(t *testing.T) {
	ctx := context.Background()
	src, mirror, c, l := pipelinetest.MirroredLock(t)
	h := src.Host
	db, app := l.Package(h+"/p/db"), l.Package(h+"/p/app")
	blob := func(d digest.Digest) string {
		return filepath.Join(mirror.Root, "docker", "registry", "v2", "blobs", "sha256", d.Encoded()[:2], d.Encoded(), "data")
	}
	dbLayer, appLayer := firstLayer(t, c, db, "mysql"), firstLayer(t, c, app, "web")
	orig := map[string][]byte{}
	for _, d := range []digest.Digest{dbLayer, appLayer} {
		b, err := os.ReadFile(blob(d))
		if err != nil {
			t.Fatal(err)
		}
		orig[blob(d)] = b
	}
	tamper := func(d digest.Digest, sameSize bool) {
		b := append([]byte(nil), orig[blob(d)]...)
		if sameSize {
			b[len(b)-1] ^= 1
		} else {
			b = b[:len(b)-1]
		}
		if err := os.WriteFile(blob(d), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	other, err := relocate.ParseMapping(mirror.Host + "/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		tamper func()
		opts   verify.Options
		// want lists "PACKAGE KIND" per problem, sorted by package.
		want []string
	}{
		{name: "clean", want: nil},
		{name: "clean deep", opts: verify.Options{Deep: true}, want: nil},
		{name: "same size, shallow", tamper: func() { tamper(dbLayer, true) }, want: nil},
		{name: "same size, deep", tamper: func() { tamper(dbLayer, true) }, opts: verify.Options{Deep: true}, want: []string{h + "/p/db digest"}},
		{name: "other size", tamper: func() { tamper(dbLayer, false) }, want: []string{h + "/p/db size"}},
		{name: "two problems", tamper: func() { tamper(dbLayer, false); tamper(appLayer, true) }, opts: verify.Options{Deep: true},
			want: []string{h + "/p/app digest", h + "/p/db size"}},
		{name: "stale inputs", opts: verify.Options{Inputs: "sha256:other", InputsFile: "ferry.yaml"}, want: []string{"(lock) stale"}},
		{name: "mirror override with nothing there", opts: verify.Options{Mirror: &other}, want: []string{h + "/p/app tag", h + "/p/app missing", h + "/p/db tag", h + "/p/db missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				for p, b := range orig {
					if err := os.WriteFile(p, b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}()
			if tt.tamper != nil {
				tt.tamper()
			}
			opts := tt.opts
			opts.Registry = c
			rep, err := verify.Verify(ctx, l, opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range rep.Problems {
				got = append(got, p.Package+" "+p.Kind)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("problems:\n%v\nwant:\n%v", rep.Problems, tt.want)
			}
			if rep.OK() != (len(tt.want) == 0) || rep.Packages != 2 {
				t.Errorf("OK %v, %d packages", rep.OK(), rep.Packages)
			}
			if tt.opts.Mirror == nil && (rep.Manifests != 8 || rep.Blobs < 8) {
				t.Errorf("checked %d manifests and %d blobs", rep.Manifests, rep.Blobs)
			}
		})
	}

	t.Run("not mirrored", func(t *testing.T) {
		bare := *l
		bare.Packages = append([]lock.Package(nil), l.Packages...)
		for i := range bare.Packages {
			bare.Packages[i].Mirror = ""
		}
		rep, err := verify.Verify(ctx, &bare, verify.Options{Registry: c})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) != 2 || rep.Problems[0].Kind != verify.ProblemNotMirrored {
			t.Errorf("problems = %v", rep.Problems)
		}
	})

	t.Run("unreachable mirror is an error", func(t *testing.T) {
		mirror.Stop()
		if _, err := verify.Verify(ctx, l, verify.Options{Registry: c}); err == nil {
			t.Errorf("verify against a stopped mirror succeeded")
		}
	})
}
