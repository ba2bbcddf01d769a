package resolve_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/crossplane"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/resolve"
)

// TestCrossplaneRequestBudget resolves every Crossplane scenario with a
// recording handler in front of the registry: no object is read twice, no
// tag list is listed twice, and a package costs at most its format's
// minimum (tag list, manifest, platform manifest under an index, package
// layer) and the rollback check's HEAD of the release below its tag.
func TestCrossplaneRequestBudget(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	cat, err := fixture.SeedCrossplane(ctx, c, reg.Host)
	if err != nil {
		t.Fatal(err)
	}
	multi := map[string]bool{}
	for _, r := range cat.MultiPlatform {
		multi[r] = true
	}
	for _, root := range []string{cat.FullyQualified, cat.OrgQualified, cat.NameOnly, cat.Transitive, cat.Moved} {
		t.Run(root[strings.LastIndex(root, "/")+1:], func(t *testing.T) {
			// A fresh client: no token or scheme cache carried over.
			c := registrytest.Client(t)
			reg.Reset()
			g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: root}}, resolve.Options{
				Registry: c, Formats: []format.Format{porter.Reader{}, crossplane.Format{}},
			})
			if err != nil {
				t.Fatal(err)
			}
			var budget int
			// A replaced source is read once when its replacer is found at
			// the same depth: nothing tells the resolver about it earlier.
			sources := g.Sources()
			for old := range g.Replaced {
				sources = append(sources, old)
			}
			for _, src := range sources {
				// tag list, manifest, package layer, and the HEAD of the
				// release below the chosen tag (the rollback check,
				// release.go)
				budget += 4
				if multi[src] {
					budget++ // the linux/amd64 manifest under the index
				}
			}
			seen := map[string]bool{}
			var n int
			for _, r := range reg.Requests() {
				if r.Path == "/v2/" {
					continue // the one-off TLS probe of a loopback host
				}
				n++
				key := r.Method + " " + r.Path
				if seen[key] {
					t.Errorf("read twice: %s", key)
				}
				seen[key] = true
			}
			if n > budget {
				t.Errorf("%d requests for %d packages, budget %d", n, len(g.Packages), budget)
			}
			if avg := float64(n) / float64(len(sources)); avg > 5 {
				t.Errorf("%.2f requests per package", avg)
			}
			t.Log(fmt.Sprintf("%d packages, %d requests, %.2f per package (replaced sources read: %d)", len(g.Packages), n, float64(n)/float64(len(g.Packages)), len(g.Replaced)))
		})
	}
}

// TestReplacedSourceMayBeGone: a moved package's old repository may no
// longer exist. Once a package of the closure declares that it replaces
// it, whether found on the same level or an earlier one, the old source's
// failed read is no error and its edges go to the replacer.
func TestReplacedSourceMayBeGone(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	h := reg.Host + "/gone/"
	push := func(repo string, p fixture.Xpkg) {
		t.Helper()
		r, err := c.Repository(h + repo)
		if err != nil {
			t.Fatal(err)
		}
		p.Name, p.Tags = repo, []string{"v1.0.0"}
		if _, err := fixture.PushXpkg(ctx, r, p); err != nil {
			t.Fatal(err)
		}
	}
	dep := func(kind, repo string) fixture.XpkgDependency {
		if kind == "Provider" {
			return fixture.XpkgDependency{Provider: h + repo, Version: ">=v0.1.0"}
		}
		return fixture.XpkgDependency{Configuration: h + repo, Version: ">=v0.1.0"}
	}
	// h/old is never pushed.
	push("new", fixture.Xpkg{Kind: "Provider", Replaces: []string{h + "old"}})
	push("a", fixture.Xpkg{Kind: "Configuration", DependsOn: []fixture.XpkgDependency{dep("Provider", "old")}})
	push("b", fixture.Xpkg{Kind: "Configuration", DependsOn: []fixture.XpkgDependency{dep("Provider", "new")}})
	push("same-level", fixture.Xpkg{Kind: "Configuration", DependsOn: []fixture.XpkgDependency{dep("Configuration", "a"), dep("Configuration", "b")}})
	push("earlier-level", fixture.Xpkg{Kind: "Configuration", DependsOn: []fixture.XpkgDependency{dep("Configuration", "a"), dep("Provider", "new")}})
	// The replacer is found a level deeper than the edge to old.
	push("d", fixture.Xpkg{Kind: "Configuration", DependsOn: []fixture.XpkgDependency{dep("Provider", "new")}})
	push("c", fixture.Xpkg{Kind: "Configuration", DependsOn: []fixture.XpkgDependency{dep("Configuration", "d")}})
	push("deeper-level", fixture.Xpkg{Kind: "Configuration", DependsOn: []fixture.XpkgDependency{dep("Configuration", "a"), dep("Configuration", "c")}})
	for _, root := range []string{"same-level", "earlier-level", "deeper-level"} {
		t.Run(root, func(t *testing.T) {
			g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: h + root + ":v1.0.0"}}, resolve.Options{
				Registry: c, Formats: []format.Format{porter.Reader{}, crossplane.Format{}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if g.Replaced[h+"old"] != h+"new" || g.Packages[h+"old"] != nil {
				t.Errorf("replaced %v; old in the graph: %v", g.Replaced, g.Packages[h+"old"] != nil)
			}
			if a := g.Packages[h+"a"]; a == nil || len(a.Dependencies) != 1 || a.Dependencies[0].Target != h+"new" {
				t.Errorf("a's edge does not go to the replacer: %+v", a)
			}
		})
	}
	// Without a replacer the missing repository is still an error.
	if _, err := resolve.Resolve(ctx, []resolve.Root{{Ref: h + "a:v1.0.0"}}, resolve.Options{
		Registry: c, Formats: []format.Format{porter.Reader{}, crossplane.Format{}},
	}); err == nil || !strings.Contains(err.Error(), h+"old") {
		t.Errorf("a missing, unreplaced source: %v", err)
	}
}
