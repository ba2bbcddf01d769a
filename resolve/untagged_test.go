package resolve_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/crossplane"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/resolve"
)

// TestUntaggedMeansLatest: an untagged reference to an image or opaque
// artifact means `latest`, as docker and crane read it; a repository
// without `latest` fails listing its tags and suggesting a range. An
// untagged reference to a package a format reads (here Crossplane's)
// keeps its meaning: the highest release, `latest` or not.
func TestUntaggedMeansLatest(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := testClient(t)
	h := reg.Host
	image := func(repo string, tags ...string) string {
		t.Helper()
		r, err := c.Repository(h + "/" + repo)
		if err != nil {
			t.Fatal(err)
		}
		var last string
		for _, tag := range tags {
			d, err := fixture.PushImage(ctx, r, repo+tag, 64)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Tag(ctx, d, tag); err != nil {
				t.Fatal(err)
			}
			last = d.Digest.String()
		}
		return last
	}
	xpkg := func(repo string, tags ...string) {
		t.Helper()
		r, err := c.Repository(h + "/" + repo)
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range tags {
			if _, err := fixture.PushXpkg(ctx, r, fixture.Xpkg{Kind: "Provider", Name: "p", Annotations: map[string]string{"t": tag}, Tags: []string{tag}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	image("only-latest", "latest")
	image("both", "1.0.0", "2.0.0", "latest")
	image("no-latest", "1.0.0", "1.2.0", "main")
	image("many", "1.0.0", "1.0.1", "1.0.2", "1.0.3", "1.1.0", "1.1.1", "1.1.2", "1.2.0", "1.2.1", "1.2.2", "edge")
	image("names-only", "main", "edge")
	xpkg("xp-both", "v1.0.0", "v1.1.0", "latest")
	xpkg("xp-releases", "v1.0.0", "v1.1.0")
	tests := []struct {
		name    string
		root    resolve.Root
		version string   // chosen
		wantErr []string // substrings of the error wanted
	}{
		{name: "only latest", root: resolve.Root{Ref: h + "/only-latest"}, version: "latest"},
		{name: "latest beside releases", root: resolve.Root{Ref: h + "/both"}, version: "latest"},
		{name: "an image root takes latest", root: resolve.Root{Ref: h + "/both", Kind: format.KindImage}, version: "latest"},
		{name: "a range still chooses among releases", root: resolve.Root{Ref: h + "/both", Constraint: ">=1"}, version: "2.0.0"},
		{name: "a tag is the tag", root: resolve.Root{Ref: h + "/both:1.0.0"}, version: "1.0.0"},
		{
			name:    "no latest",
			root:    resolve.Root{Ref: h + "/no-latest"},
			wantErr: []string{h + "/no-latest: an untagged image reference means latest", "(tags: 1.0.0 1.2.0 main)", "'^1.2' as the version", "images: [{ref: " + h + "/no-latest, tags: [\"^1.2\"]}]"},
		},
		{
			name:    "no latest, an image root",
			root:    resolve.Root{Ref: h + "/no-latest", Kind: format.KindImage},
			wantErr: []string{"has no tag latest", "(tags: 1.0.0 1.2.0 main)"},
		},
		{
			name:    "no latest, many tags: the newest releases",
			root:    resolve.Root{Ref: h + "/many"},
			wantErr: []string{"(11 tags, the last of them: 1.0.2 1.0.3 1.1.0 1.1.1 1.1.2 1.2.0 1.2.1 1.2.2)", "'^1.2'"},
		},
		{
			name:    "no latest, no release",
			root:    resolve.Root{Ref: h + "/names-only"},
			wantErr: []string{"has no tag latest (tags: edge main); name a tag (" + h + "/names-only:main)"},
		},
		{name: "a Crossplane package with latest: the highest release", root: resolve.Root{Ref: h + "/xp-both"}, version: "v1.1.0"},
		{name: "a Crossplane package without latest: the highest release", root: resolve.Root{Ref: h + "/xp-releases"}, version: "v1.1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := resolve.Resolve(ctx, []resolve.Root{tt.root}, resolve.Options{Registry: c, Formats: []format.Format{porter.Reader{}, crossplane.Format{}}})
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("resolved %v, want an error", g.Packages)
				}
				var nl *resolve.NoLatestError
				if !errors.As(err, &nl) {
					t.Errorf("error %T %v is no NoLatestError", err, err)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Roots) != 1 {
				t.Fatalf("roots %v", g.Roots)
			}
			if p := g.Packages[g.Roots[0]]; p.Version != tt.version {
				t.Errorf("chose %s, want %s", p.Version, tt.version)
			}
		})
	}
}
