package resolve_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/resolve"
)

// pickedBundles reads Porter bundles with an unshared policy whose Pick
// reads a constraint the resolver cannot ("major=N", as KUDO's
// "operatorVersion=Y"), and takes the highest tag otherwise.
type pickedBundles struct{ porter.Reader }

func (pickedBundles) Policy() resolve.Policy {
	return resolve.Policy{Name: "picked", Unshared: true, Pick: func(reqs []resolve.Request, tags []string) (string, error) {
		var best string
		for _, tag := range tags {
			ok := true
			for _, r := range reqs {
				if m, found := strings.CutPrefix(r.Constraint, "major="); found && !strings.HasPrefix(tag, "v"+m+".") {
					ok = false
				}
			}
			if ok && (best == "" || resolve.ParseTag(tag).GreaterThan(resolve.ParseTag(best))) {
				best = tag
			}
		}
		if best == "" {
			return "", fmt.Errorf("no tag matches")
		}
		return best, nil
	}}
}

// TestResolveLockedPick: with a policy that picks (unshared, one source
// locked at two versions), each edge keeps the version it was locked at
// when newer tags appear: one asked by a constraint only Pick reads, and
// one asking nothing, which keeps the newest locked version rather than
// the first listed; Update moves both.
func TestResolveLockedPick(t *testing.T) {
	ctx := context.Background()
	c := testClient(t)
	h := registrytest.New(t).Host
	pushBundles(t, c, h, map[string][]fixture.Bundle{
		"k/lib": {bundle("lib", "1.0.0"), bundle("lib", "2.0.0")},
		"k/app": {bundle("app", "1.0.0",
			fixture.Dep{Name: "old", Bundle: h + "/k/lib", Ranges: []string{"major=1"}},
			fixture.Dep{Name: "new", Bundle: h + "/k/lib"},
		)},
	})
	opts := resolve.Options{Registry: c, Formats: []format.Format{pickedBundles{}}}
	roots := []resolve.Root{{Ref: h + "/k/app:v1.0.0"}}
	libs := func(g *resolve.Graph) []string {
		var out []string
		for _, p := range g.Packages {
			if p.Source == h+"/k/lib" {
				out = append(out, p.Version)
			}
		}
		slices.Sort(out)
		return out
	}
	first, err := resolve.Resolve(ctx, roots, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := libs(first); !slices.Equal(got, []string{"v1.0.0", "v2.0.0"}) {
		t.Fatalf("lib at %q", got)
	}
	locked := map[string][]resolve.Locked{}
	for _, p := range first.Packages {
		locked[p.Source] = append(locked[p.Source], resolve.Locked{Version: p.Version, Digest: p.Descriptor.Digest})
	}
	pushBundles(t, c, h, map[string][]fixture.Bundle{"k/lib": {bundle("lib", "1.1.0"), bundle("lib", "2.1.0")}})
	for _, tt := range []struct {
		name   string
		update func(string) bool
		want   []string
	}{
		{"kept", nil, []string{"v1.0.0", "v2.0.0"}},
		{"updated", func(s string) bool { return s == h+"/k/lib" }, []string{"v1.1.0", "v2.1.0"}},
	} {
		for _, reverse := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/reversed=%v", tt.name, reverse), func(t *testing.T) {
				l := map[string][]resolve.Locked{}
				for k, v := range locked {
					l[k] = slices.Clone(v)
					if reverse {
						slices.Reverse(l[k])
					}
				}
				o := opts
				o.Locked, o.Update = l, tt.update
				g, err := resolve.Resolve(ctx, roots, o)
				if err != nil {
					t.Fatal(err)
				}
				if got := libs(g); !slices.Equal(got, tt.want) {
					t.Fatalf("lib at %q, want %q", got, tt.want)
				}
			})
		}
	}
}
