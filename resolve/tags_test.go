package resolve_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/resolve"
)

// TestTagsOfOneDigest: requests of one repository by different tags that
// resolve to one digest are one package that keeps every tag asked for:
// Version is the first node's tag (the first tag when the first pinned a
// digest), Tags the others, sorted, whatever order the roots are given
// in. Tags of two digests stay two packages, each with its own tag.
func TestTagsOfOneDigest(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := testClient(t)
	src := reg.Host + "/app/web"
	repo, err := c.Repository(src)
	if err != nil {
		t.Fatal(err)
	}
	a, err := fixture.PushImage(ctx, repo, "tags-web-a", 64)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fixture.PushImage(ctx, repo, "tags-web-b", 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"1.0.0", "1.0", "1", "latest"} {
		if err := repo.Tag(ctx, a, tag); err != nil {
			t.Fatal(err)
		}
	}
	if err := repo.Tag(ctx, b, "2.0.0"); err != nil {
		t.Fatal(err)
	}
	type pkg struct {
		version string
		tags    []string
	}
	tests := []struct {
		name  string
		roots []string // below src: ":TAG" or "@DIGEST"
		want  map[string]pkg
	}{
		{"one tag", []string{":1.0.0"}, map[string]pkg{src: {"1.0.0", nil}}},
		{"two tags of one digest", []string{":1.0.0", ":1.0"}, map[string]pkg{src: {"1.0", []string{"1.0.0"}}}},
		{"the same, given the other way round", []string{":1.0", ":1.0.0"}, map[string]pkg{src: {"1.0", []string{"1.0.0"}}}},
		{"four tags of one digest", []string{":latest", ":1.0.0", ":1", ":1.0"}, map[string]pkg{src: {"1", []string{"1.0", "1.0.0", "latest"}}}},
		{"one tag asked twice", []string{":1.0", ":1.0"}, map[string]pkg{src: {"1.0", nil}}},
		{"a digest pin takes the tag of another request", []string{"@" + a.Digest.String(), ":1.0"}, map[string]pkg{src: {"1.0", nil}}},
		{"a digest pin alone has no tag", []string{"@" + a.Digest.String()}, map[string]pkg{src: {"", nil}}},
		{
			name:  "two digests are two packages",
			roots: []string{":1.0.0", ":2.0.0", ":1.0"},
			want: map[string]pkg{
				src + "@" + a.Digest.String(): {"1.0", []string{"1.0.0"}},
				src + "@" + b.Digest.String(): {"2.0.0", nil},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var roots []resolve.Root
			for _, r := range tt.roots {
				roots = append(roots, resolve.Root{Ref: src + r, Kind: format.KindImage})
			}
			g, err := resolve.Resolve(ctx, roots, resolve.Options{Registry: c})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]pkg{}
			for id, p := range g.Packages {
				got[id] = pkg{p.Version, p.Tags}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("packages %+v\nwant     %+v", got, tt.want)
			}
			// Every root names a package of the graph.
			for _, r := range g.Roots {
				if g.Packages[r] == nil {
					t.Errorf("root %s names no package", r)
				}
			}
			// -o json lists the other tags beside the version.
			raw, err := json.Marshal(g.Report())
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tt.want {
				if len(p.tags) > 0 && !strings.Contains(string(raw), `"tags":["`+strings.Join(p.tags, `","`)+`"]`) {
					t.Errorf("report %s lacks tags %q", raw, p.tags)
				}
			}
			for id, p := range g.Packages {
				if all, want := p.AllTags(), append(nonEmpty(p.Version), p.Tags...); !reflect.DeepEqual(all, want) && len(all)+len(want) > 0 {
					t.Errorf("%s: AllTags %q, want %q", id, all, want)
				}
			}
		})
	}
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
