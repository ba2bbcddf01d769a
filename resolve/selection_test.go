package resolve_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/resolve"
)

// TestTagSelection pins how a selection keeps tags: ranges (OR-ed), then
// regular expressions to match (OR-ed) and to exclude, then the newest N,
// newest first (versions by version, then other tags by reverse name).
func TestTagSelection(t *testing.T) {
	tags := []string{"1.24.0", "1.25.0", "1.25.3", "1.25.4-rc.1", "1.26.0", "1.26.1", "1.27.0", "1.27.1-alpine", "v2.0.0", "latest", "mainline", "stable", "20240101", "20240301", "1.26"}
	tests := []struct {
		name string
		sel  resolve.TagSelection
		want []string
		err  string
	}{
		{name: "a range", sel: resolve.TagSelection{Ranges: []string{">=1.25 <1.27"}}, want: []string{"1.26.1", "1.26.0", "1.25.3", "1.25.0"}},
		{name: "ranges are or-ed", sel: resolve.TagSelection{Ranges: []string{"~1.24", ">=2"}}, want: []string{"v2.0.0", "1.24.0"}},
		{name: "a range names prereleases", sel: resolve.TagSelection{Ranges: []string{">=1.25.4-0 <1.26"}}, want: []string{"1.25.4-rc.1"}},
		{name: "a regular expression", sel: resolve.TagSelection{Match: []string{`^1\.2[67]\.\d+$`}}, want: []string{"1.27.0", "1.26.1", "1.26.0"}},
		{name: "unanchored", sel: resolve.TagSelection{Match: []string{`alpine`}}, want: []string{"1.27.1-alpine"}},
		{name: "exclude", sel: resolve.TagSelection{Match: []string{`^1\.`}, Exclude: []string{`-rc`, `-alpine`}}, want: []string{"1.27.0", "1.26.1", "1.26.0", "1.25.3", "1.25.0", "1.24.0", "1.26"}},
		{name: "a range and a regular expression", sel: resolve.TagSelection{Ranges: []string{"1.x"}, Match: []string{`\.0$`}}, want: []string{"1.27.0", "1.26.0", "1.25.0", "1.24.0"}},
		{name: "newest", sel: resolve.TagSelection{Ranges: []string{"1.x"}, Newest: 2}, want: []string{"1.27.0", "1.26.1"}},
		{name: "newest of tags that are not versions", sel: resolve.TagSelection{Match: []string{`^2024`}, Newest: 1}, want: []string{"20240301"}},
		{name: "exclude alone keeps the rest", sel: resolve.TagSelection{Exclude: []string{`\.`, `^2024`}}, want: []string{"stable", "mainline", "latest"}},
		{name: "nothing", sel: resolve.TagSelection{Ranges: []string{">=3"}}, want: nil},
		{name: "a bad range", sel: resolve.TagSelection{Ranges: []string{">=x.y"}}, err: `version range ">=x.y"`},
		{name: "a bad expression", sel: resolve.TagSelection{Match: []string{`(`}}, err: `regular expression "("`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.sel.Select(tags)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("selected %q, want %q", got, tt.want)
			}
		})
	}
}

// TestResolveTagSelection: a selection root becomes a root per tag it
// keeps, each locked by its digest; with an earlier lock, the locked tags
// the selection still accepts are kept although newer ones appeared,
// unless the source is updated; a selection keeping nothing names the
// selection and the tags.
func TestResolveTagSelection(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := testClient(t)
	src := reg.Host + "/lib/nginx"
	repo, err := c.Repository(src)
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]string{}
	push := func(tags ...string) {
		t.Helper()
		for _, tag := range tags {
			d, err := fixture.PushImage(ctx, repo, "sel-"+tag, 64)
			if err != nil {
				t.Fatal(err)
			}
			if err := repo.Tag(ctx, d, tag); err != nil {
				t.Fatal(err)
			}
			digests[tag] = d.Digest.String()
		}
	}
	push("1.25.0", "1.25.3", "1.26.0", "1.26.1-rc.1", "latest")
	sel := &resolve.TagSelection{Ranges: []string{"~1.25", "~1.26"}, Exclude: []string{"-rc"}, Newest: 2}
	roots := []resolve.Root{{Ref: src, Kind: format.KindImage, Select: sel}, {Ref: src + ":latest", Kind: format.KindImage}}
	versionsOf := func(g *resolve.Graph) []string {
		var out []string
		for _, id := range g.Roots {
			p := g.Packages[id]
			if p.Descriptor.Digest.String() != digests[p.Version] {
				t.Errorf("%s locked at %s, want %s", p.Version, p.Descriptor.Digest, digests[p.Version])
			}
			out = append(out, p.Version)
		}
		return out
	}
	g, err := resolve.Resolve(ctx, roots, resolve.Options{Registry: c})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := versionsOf(g), []string{"1.26.0", "1.25.3", "latest"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("roots %q, want %q", got, want)
	}
	locked := map[string][]resolve.Locked{}
	for _, p := range g.Packages {
		if want := src; p.Version != "latest" && p.Ref != want {
			t.Errorf("%s records ref %s, want the selection's %s", p.Version, p.Ref, want)
		}
		locked[p.Source] = append(locked[p.Source], resolve.Locked{Version: p.Version, Digest: p.Descriptor.Digest, Ref: p.Ref})
	}
	push("1.26.2")
	g, err = resolve.Resolve(ctx, roots, resolve.Options{Registry: c, Locked: locked, Update: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := versionsOf(g), []string{"1.26.0", "1.25.3", "latest"}; !reflect.DeepEqual(got, want) {
		t.Errorf("kept %q, want %q", got, want)
	}
	g, err = resolve.Resolve(ctx, roots, resolve.Options{Registry: c, Locked: locked, Update: func(string) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := versionsOf(g), []string{"1.26.2", "1.26.0", "latest"}; !reflect.DeepEqual(got, want) {
		t.Errorf("updated %q, want %q", got, want)
	}
	// A selection new to the lock does not take the tags other requests
	// locked (here a root by tag) for its own.
	other := map[string][]resolve.Locked{src: {{Version: "1.25.0", Digest: digestOf(t, digests["1.25.0"]), Ref: src + ":1.25.0"}}}
	g, err = resolve.Resolve(ctx, roots, resolve.Options{Registry: c, Locked: other, Update: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := versionsOf(g), []string{"1.26.2", "1.26.0", "latest"}; !reflect.DeepEqual(got, want) {
		t.Errorf("a new selection chose %q, want %q", got, want)
	}
	_, err = resolve.Resolve(ctx, []resolve.Root{{Ref: src, Select: &resolve.TagSelection{Ranges: []string{">=2"}}}}, resolve.Options{Registry: c})
	var nt *resolve.NoTagSelectedError
	if !errors.As(err, &nt) || !strings.Contains(err.Error(), `no tag is selected by tags ">=2" (tags: 1.25.0 1.25.3 1.26.0 1.26.1-rc.1 1.26.2 latest)`) {
		t.Errorf("error %v", err)
	}
}

func digestOf(t *testing.T, s string) digest.Digest {
	t.Helper()
	d, err := digest.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
