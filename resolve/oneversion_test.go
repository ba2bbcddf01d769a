package resolve_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/crossplane"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/resolve"
)

// TestOneVersionRule: several tags and digests of one repository of plain
// images or opaque artifacts lock together, whatever kind the roots ask
// for; the one-version rule belongs to the formats whose tool installs
// one version of a package (Crossplane), and its message names the
// format.
func TestOneVersionRule(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := testClient(t)
	web := reg.Host + "/app/web"
	repo, err := c.Repository(web)
	if err != nil {
		t.Fatal(err)
	}
	a, err := fixture.PushImage(ctx, repo, "oneversion-a", 64)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fixture.PushImage(ctx, repo, "oneversion-b", 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, a, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, b, "1.1.0"); err != nil {
		t.Fatal(err)
	}
	prov := reg.Host + "/xp/provider-a"
	prepo, err := c.Repository(prov)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v1.0.0", "v1.1.0"} {
		if _, err := fixture.PushXpkg(ctx, prepo, fixture.Xpkg{Kind: "Provider", Name: "provider-a", Annotations: map[string]string{"v": v}, Tags: []string{v}}); err != nil {
			t.Fatal(err)
		}
	}
	formats := []format.Format{porter.Reader{}, crossplane.Format{}}
	tests := []struct {
		name    string
		roots   []resolve.Root
		ids     []string // packages wanted
		wantErr []string // substrings of the error wanted
	}{
		{
			name:  "two tags of an artifact",
			roots: []resolve.Root{{Ref: web + ":1.0.0"}, {Ref: web + ":1.1.0"}},
			ids:   []string{web + "@" + a.Digest.String(), web + "@" + b.Digest.String()},
		},
		{
			name:  "two tags of an image",
			roots: []resolve.Root{{Ref: web + ":1.0.0", Kind: format.KindImage}, {Ref: web + ":1.1.0", Kind: format.KindImage}},
			ids:   []string{web + "@" + a.Digest.String(), web + "@" + b.Digest.String()},
		},
		{
			name:  "a tag and another digest",
			roots: []resolve.Root{{Ref: web + ":1.0.0"}, {Ref: web + "@" + b.Digest.String()}},
			ids:   []string{web + "@" + a.Digest.String(), web + "@" + b.Digest.String()},
		},
		{
			name:    "two versions of a Crossplane provider",
			roots:   []resolve.Root{{Ref: prov + ":v1.0.0"}, {Ref: prov + ":v1.1.0"}},
			wantErr: []string{prov + " is needed at 2 versions, and the crossplane format installs one version of a package", prov + ":v1.0.0", prov + ":v1.1.0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := resolve.Resolve(ctx, tt.roots, resolve.Options{Registry: c, Formats: formats})
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("resolved %v, want an error", g.Packages)
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
			if len(g.Packages) != len(tt.ids) {
				t.Errorf("%d packages, want %d", len(g.Packages), len(tt.ids))
			}
			for _, id := range tt.ids {
				if g.Packages[id] == nil {
					t.Errorf("no package %s", id)
				}
			}
			if len(g.Roots) != len(tt.roots) {
				t.Errorf("roots %v", g.Roots)
			}
		})
	}
}
