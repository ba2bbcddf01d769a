package resolve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/resolve"
)

func testClient(t *testing.T) *client.Client {
	t.Helper()
	c := registrytest.Client(t)
	return c
}

// sharedBundles reads Porter bundles with the resolver's shared policy:
// every edge to a repository shares one version, the highest satisfying
// every constraint (Crossplane's policy). The resolver's generic rules
// (constraints from every parent, conflicts, digest pins, late
// constraints) are tested on it; Porter's own policy is tested in
// porter_policy_test.go.
type sharedBundles struct{ porter.Reader }

func (sharedBundles) Policy() resolve.Policy { return resolve.Policy{Name: "highest"} }

// Qualify applies the parent-relative rule (Crossplane's), so the
// resolver's handling of partial references is tested on bundles too.
func (sharedBundles) Qualify(ref string, parent ociref.Reference) (ociref.Reference, error) {
	return ociref.Qualify(ref, parent)
}

func porterOptions(c *client.Client) resolve.Options {
	return resolve.Options{Registry: c, Formats: []format.Format{sharedBundles{}}}
}

// pushBundles publishes bundles under host; each key is "PATH" under host.
func pushBundles(t *testing.T, c *client.Client, host string, bundles map[string][]fixture.Bundle) {
	t.Helper()
	for path, bs := range bundles {
		repo, err := c.Repository(host + "/" + path)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			if _, err := fixture.PushBundle(context.Background(), repo, host+"/"+path, b); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func bundle(name, version string, deps ...fixture.Dep) fixture.Bundle {
	return fixture.Bundle{Name: name, Version: version, Tags: []string{"v" + version}, Deps: deps}
}

// versions maps each package's path (source without host) to its chosen
// version, or @DIGEST for a digest-only pin.
func versions(g *resolve.Graph, host string) map[string]string {
	out := map[string]string{}
	for src, p := range g.Packages {
		v := p.Version
		if v == "" {
			v = "@" + p.Descriptor.Digest.String()
		}
		out[strings.TrimPrefix(src, host+"/")] = v
	}
	return out
}

func planPaths(t *testing.T, g *resolve.Graph, host string) []string {
	t.Helper()
	plan, err := g.Plan()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range plan {
		out = append(out, strings.TrimPrefix(p.Source, host+"/"))
	}
	return out
}

// TestResolveCatalog resolves every scenario of the standard catalog and
// checks the resolution fixture's package doc promises.
func TestResolveCatalog(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := testClient(t)
	cat, err := fixture.Seed(ctx, c, reg.Host)
	if err != nil {
		t.Fatal(err)
	}
	h := reg.Host
	tests := []struct {
		name     string
		root     string
		use      map[string]string
		force    bool
		versions map[string]string
		plan     []string
		// errs are substrings of the expected error.
		errs []string
		// check inspects the graph further.
		check func(t *testing.T, g *resolve.Graph)
	}{
		{
			name: "diamond",
			root: cat.Diamond,
			versions: map[string]string{
				"fixtures/diamond/app": "v1.0.0", "fixtures/diamond/web": "1.1.0",
				"fixtures/diamond/api": "1.0.1", "fixtures/diamond/db": "1.2.1_build.5",
			},
			plan: []string{"fixtures/diamond/db", "fixtures/diamond/web", "fixtures/diamond/api", "fixtures/diamond/app"},
			check: func(t *testing.T, g *resolve.Graph) {
				app := g.Packages[h+"/fixtures/diamond/app"]
				var names []string
				for _, im := range app.Meta.Images {
					names = append(names, im.Name)
				}
				if !slices.Equal(names, []string{"invocation", "nginx", "redis"}) {
					t.Errorf("app images = %v", names)
				}
				db := g.Packages[h+"/fixtures/diamond/db"]
				for _, e := range app.Dependencies {
					if e.Name == "api" && e.Constraint != "~0.9 || ^1.0" {
						t.Errorf("api constraint = %q, want the ranges OR-ed", e.Constraint)
					}
				}
				if got := g.Resolved(g.Packages[h+"/fixtures/diamond/web"].Dependencies[0]); got != db.Source+"@"+db.Descriptor.Digest.String() {
					t.Errorf("web's db edge resolves to %s", got)
				}
			},
		},
		{
			name:     "prerelease allowed",
			root:     cat.Prerelease,
			versions: map[string]string{"fixtures/prerelease/app": "v1.0.0", "fixtures/diamond/db": "v1.3.0-rc.1"},
		},
		{
			name: "pinned digest",
			root: cat.Pinned,
			// The pin's tag is found from the bundle's own version.
			versions: map[string]string{"fixtures/pinned/app": "v1.0.0", "fixtures/diamond/db": "v1.1.0"},
			check: func(t *testing.T, g *resolve.Graph) {
				db := g.Packages[h+"/fixtures/diamond/db"]
				if v := db.Meta.Version; v != "1.1.0" {
					t.Errorf("pinned db is bundle version %q, want 1.1.0", v)
				}
				if d := db.Descriptor.Digest.String(); d != cat.PinnedDigest {
					t.Errorf("pinned db resolved to %s, want %s", d, cat.PinnedDigest)
				}
			},
		},
		{
			name: "cycle",
			root: cat.Cycle,
			errs: []string{
				"dependency cycle: " + h + "/fixtures/cycle-a:v1.0.0 -> " + h + "/fixtures/cycle-b:v1.0.0 -> " + h + "/fixtures/cycle-a:v1.0.0",
			},
		},
		{
			name: "unsatisfiable",
			root: cat.Unsatisfiable,
			errs: []string{
				h + "/fixtures/conflict/base: no tag satisfies every constraint",
				h + "/fixtures/conflict/left:v1.0.0 requires \"^1.0\"",
				h + "/fixtures/conflict/right:v1.0.0 requires \">=2.0 <3\"",
				"(tags: v1.0.0 v1.4.0 v2.0.0 v2.1.0)",
			},
		},
		{
			name:     "v2 wiring",
			root:     cat.V2,
			versions: map[string]string{"fixtures/v2/env": "v1.0.0", "fixtures/v2/infra": "v1.1.0", "fixtures/v2/app": "v1.2.3"},
			plan:     []string{"fixtures/v2/infra", "fixtures/v2/app", "fixtures/v2/env"},
			check: func(t *testing.T, g *resolve.Graph) {
				for _, e := range g.Packages[h+"/fixtures/v2/env"].Dependencies {
					if e.Name == "app" && !slices.Equal(e.After, []string{"infra"}) {
						t.Errorf("app.After = %v, want [infra]", e.After)
					}
				}
			},
		},
		{
			name: "interface only",
			root: cat.Interface,
			errs: []string{h + "/fixtures/iface/app:v1.0.0", `"mysql"`, "only an interface", "use: {mysql: REF}"},
		},
		{
			name:     "interface with use",
			root:     cat.Interface,
			use:      map[string]string{"mysql": cat.InterfaceImpl},
			versions: map[string]string{"fixtures/iface/app": "v1.0.0", "fixtures/iface/mysql": "v5.7.1"},
			plan:     []string{"fixtures/iface/mysql", "fixtures/iface/app"},
		},
		{
			name: "use that breaks the parent's constraint",
			root: cat.Partial,
			use:  map[string]string{"util": h + "/fixtures/iface/mysql:v5.7.0"},
			errs: []string{h + "/fixtures/partial/app:v1.0.0", `dependency "util" requires "^2.0"`, "gives v5.7.0", "force: true"},
		},
		{
			name:     "use overrides a declared dependency, forced",
			root:     cat.Partial,
			use:      map[string]string{"util": h + "/fixtures/iface/mysql:v5.7.0"},
			force:    true,
			versions: map[string]string{"fixtures/partial/app": "v1.0.0", "fixtures/partial/lib": "v1.1.0", "fixtures/iface/mysql": "v5.7.0"},
		},
		{
			name: "use lacking what the interface requires",
			root: cat.Interface,
			use:  map[string]string{"mysql": h + "/fixtures/iface/mysql:v5.7.0"},
			errs: []string{h + "/fixtures/iface/app:v1.0.0", `dependency "mysql"`, "iface/mysql:v5.7.0", `lacks`, `output "connstr" (string)`},
		},
		{
			name:     "partial references",
			root:     cat.Partial,
			versions: map[string]string{"fixtures/partial/app": "v1.0.0", "fixtures/partial/lib": "v1.1.0", "fixtures/partial/util": "v2.0.1"},
			check: func(t *testing.T, g *resolve.Graph) {
				refs := map[string]string{}
				for _, e := range g.Packages[h+"/fixtures/partial/app"].Dependencies {
					refs[e.Name] = e.Ref + " => " + e.Target
				}
				want := map[string]string{
					"lib":  "fixtures/partial/lib:v1.0.0 => " + h + "/fixtures/partial/lib",
					"util": "util => " + h + "/fixtures/partial/util",
				}
				if fmt.Sprint(refs) != fmt.Sprint(want) {
					t.Errorf("edges = %v, want %v", refs, want)
				}
			},
		},
		{
			name:     "mixins",
			root:     cat.Mixins,
			versions: map[string]string{"fixtures/mixins/tool": "v1.0.0"},
			check: func(t *testing.T, g *resolve.Graph) {
				if len(g.Warnings) != 1 || !strings.Contains(g.Warnings[0], "helm3") || !strings.Contains(g.Warnings[0], "fixtures/mixins/tool:v1.0.0") {
					t.Errorf("warnings = %q, want one about helm3 naming the bundle", g.Warnings)
				}
				got := map[string]string{}
				for _, m := range g.Packages[h+"/fixtures/mixins/tool"].Meta.Mixins {
					got[m.Name] = m.Version
				}
				if got["exec"] != "v1.2.3" || got["helm3"] != "" || len(got) != 2 {
					t.Errorf("mixins = %v", got)
				}
			},
		},
		{
			name:     "root constraint over tags",
			root:     h + "/fixtures/diamond/db",
			versions: map[string]string{"fixtures/diamond/db": "v1.2.0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := porterOptions(c)
			opts.Use = map[string]resolve.Use{}
			for k, v := range tt.use {
				opts.Use[k] = resolve.Use{Ref: v, Force: tt.force}
			}
			root := resolve.Root{Ref: tt.root}
			if tt.name == "root constraint over tags" {
				root.Constraint = "~1.2.0 <1.2.1"
			}
			g, err := resolve.Resolve(ctx, []resolve.Root{root}, opts)
			if len(tt.errs) > 0 {
				if err == nil {
					t.Fatalf("resolved %v, want an error", versions(g, h))
				}
				for _, w := range tt.errs {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q:\n%v", w, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := versions(g, h); fmt.Sprint(got) != fmt.Sprint(tt.versions) {
				t.Errorf("versions = %v\nwant       %v", got, tt.versions)
			}
			if tt.plan != nil {
				if got := planPaths(t, g, h); !slices.Equal(got, tt.plan) {
					t.Errorf("plan = %v, want %v", got, tt.plan)
				}
			}
			if tt.check != nil {
				tt.check(t, g)
			}
		})
	}

	t.Run("cycle error type", func(t *testing.T) {
		_, err := resolve.Resolve(ctx, []resolve.Root{{Ref: cat.Cycle}}, porterOptions(c))
		var ce *resolve.CycleError
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v, want a CycleError", err)
		}
		if len(ce.Cycle) != 3 || ce.Cycle[0] != ce.Cycle[2] || ce.Cycle[0] == ce.Cycle[1] {
			t.Errorf("cycle = %v, want a -> b -> a", ce.Cycle)
		}
	})

	t.Run("unsatisfiable error type", func(t *testing.T) {
		_, err := resolve.Resolve(ctx, []resolve.Root{{Ref: cat.Unsatisfiable}}, porterOptions(c))
		var ue *resolve.UnsatisfiableError
		if !errors.As(err, &ue) {
			t.Fatalf("err = %v, want an UnsatisfiableError", err)
		}
		if ue.Source != h+"/fixtures/conflict/base" || len(ue.Requirements) != 2 {
			t.Errorf("source %s, requirements %q", ue.Source, ue.Requirements)
		}
	})

	t.Run("outputs", func(t *testing.T) {
		g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: cat.Diamond}}, porterOptions(c))
		if err != nil {
			t.Fatal(err)
		}
		db := g.Packages[h+"/fixtures/diamond/db"]
		dbPinned := db.Source + ":1.2.1_build.5@" + db.Descriptor.Digest.String()
		out := map[string]string{}
		for _, o := range []string{"", resolve.OutputTree, resolve.OutputJSON, resolve.OutputDot, resolve.OutputPlan} {
			var b bytes.Buffer
			if err := resolve.WriteGraph(&b, g, o); err != nil {
				t.Fatalf("-o %s: %v", o, err)
			}
			out[o] = b.String()
		}
		if out[""] != out[resolve.OutputTree] {
			t.Errorf("default output is not the tree")
		}
		tree := out[resolve.OutputTree]
		for _, w := range []string{
			h + "/fixtures/diamond/app:v1.0.0 (porter.bundle) sha256:",
			"├── " + h + "/fixtures/diamond/web:1.1.0",
			"└── " + h + "/fixtures/diamond/api:1.0.1",
			"    └── " + h + "/fixtures/diamond/db:1.2.1_build.5",
		} {
			if !strings.Contains(tree, w) {
				t.Errorf("tree lacks %q:\n%s", w, tree)
			}
		}
		var rep resolve.GraphReport
		if err := json.Unmarshal([]byte(out[resolve.OutputJSON]), &rep); err != nil {
			t.Fatalf("json: %v\n%s", err, out[resolve.OutputJSON])
		}
		if len(rep.Packages) != 4 || len(rep.Plan) != 4 || rep.Plan[0] != db.Source+"@"+db.Descriptor.Digest.String() {
			t.Errorf("json report: %d packages, plan %v", len(rep.Packages), rep.Plan)
		}
		if !slices.Equal(rep.Roots, []string{h + "/fixtures/diamond/app"}) {
			t.Errorf("json roots = %v", rep.Roots)
		}
		// -o json is, byte for byte, what json.Encoder with a two-space
		// indent writes (scripts may compare it).
		var enc bytes.Buffer
		e := json.NewEncoder(&enc)
		e.SetIndent("", "  ")
		if err := e.Encode(g.Report()); err != nil {
			t.Fatal(err)
		}
		if enc.String() != out[resolve.OutputJSON] {
			t.Errorf("-o json differs from json.Encoder's:\n%s\nwant:\n%s", out[resolve.OutputJSON], enc.String())
		}
		dot := out[resolve.OutputDot]
		if !strings.HasPrefix(dot, "digraph ferry {") || !strings.Contains(dot, fmt.Sprintf("%q -> %q [label=%q];", h+"/fixtures/diamond/web", db.Source, "db")) {
			t.Errorf("dot:\n%s", dot)
		}
		plan := strings.Split(strings.TrimSpace(out[resolve.OutputPlan]), "\n")
		if len(plan) != 4 || plan[0] != "1. porter.bundle "+dbPinned || !strings.HasPrefix(plan[3], "4. porter.bundle "+h+"/fixtures/diamond/app:v1.0.0@sha256:") {
			t.Errorf("plan:\n%s", out[resolve.OutputPlan])
		}
		if err := resolve.WriteGraph(&bytes.Buffer{}, g, "yaml"); err == nil {
			t.Errorf("-o yaml accepted")
		}
	})
}

// TestResolveLocked: a locked version is kept when a newer tag appears,
// and moves when Update selects it.
func TestResolveLocked(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := testClient(t)
	h := reg.Host
	pushBundles(t, c, h, map[string][]fixture.Bundle{
		"l/lib": {bundle("lib", "1.0.0")},
		"l/app": {bundle("app", "1.0.0", fixture.Dep{Name: "lib", Bundle: h + "/l/lib:v1.0.0", Ranges: []string{"^1.0"}})},
	})
	roots := []resolve.Root{{Ref: h + "/l/app:v1.0.0"}}
	first, err := resolve.Resolve(ctx, roots, porterOptions(c))
	if err != nil {
		t.Fatal(err)
	}
	lib := first.Packages[h+"/l/lib"]
	locked := map[string][]resolve.Locked{}
	for _, p := range first.Packages {
		locked[p.Source] = append(locked[p.Source], resolve.Locked{Version: p.Version, Digest: p.Descriptor.Digest})
	}
	pushBundles(t, c, h, map[string][]fixture.Bundle{"l/lib": {bundle("lib", "1.1.0"), bundle("lib", "2.0.0")}})

	tests := []struct {
		name   string
		locked map[string][]resolve.Locked
		update func(string) bool
		want   string
	}{
		{"no lock takes the newest", nil, nil, "v1.1.0"},
		{"lock kept", locked, nil, "v1.0.0"},
		{"lock kept when another source updates", locked, func(s string) bool { return s == h+"/l/app" }, "v1.0.0"},
		{"update moves it", locked, func(s string) bool { return s == h+"/l/lib" }, "v1.1.0"},
		{"update all", locked, func(string) bool { return true }, "v1.1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := porterOptions(c)
			opts.Locked, opts.Update = tt.locked, tt.update
			g, err := resolve.Resolve(ctx, roots, opts)
			if err != nil {
				t.Fatal(err)
			}
			got := g.Packages[h+"/l/lib"]
			if got.Version != tt.want {
				t.Fatalf("lib = %s, want %s", got.Version, tt.want)
			}
			if tt.want == "v1.0.0" && got.Descriptor.Digest != lib.Descriptor.Digest {
				t.Errorf("kept lib has digest %s, locked %s", got.Descriptor.Digest, lib.Descriptor.Digest)
			}
		})
	}
}

// TestResolveParallelAndOnce resolves a wide closure behind a handler that
// holds each manifest GET until another is in flight: it completes only if
// a level's reads run in parallel. Every object is read once and every tag
// list listed once.
func TestResolveParallelAndOnce(t *testing.T) {
	ctx := context.Background()
	var inflight, peak atomic.Int64
	var gate sync.Once
	together := make(chan struct{})
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/w/dep") && strings.Contains(r.URL.Path, "/manifests/") {
				n := inflight.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				if n >= 2 {
					gate.Do(func() { close(together) })
				}
				select {
				case <-together:
				case <-time.After(10 * time.Second): // only reached when reads are serial
				case <-r.Context().Done():
				}
				defer inflight.Add(-1)
			}
			next.ServeHTTP(w, r)
		})
	}
	reg := registrytest.New(t, registrytest.WithWrap(wrap))
	c := testClient(t)
	h := reg.Host
	var deps []fixture.Dep
	bundles := map[string][]fixture.Bundle{"w/shared": {bundle("shared", "1.0.0"), bundle("shared", "1.1.0")}}
	for i := range 6 {
		name := fmt.Sprintf("dep%d", i)
		deps = append(deps, fixture.Dep{Name: name, Bundle: fmt.Sprintf("%s/w/%s:v1.0.0", h, name), Ranges: []string{"^1.0"}})
		bundles["w/"+name] = []fixture.Bundle{
			bundle(name, "1.0.0", fixture.Dep{Name: "shared", Bundle: h + "/w/shared", Ranges: []string{"^1.0"}}),
			bundle(name, "1.0.1", fixture.Dep{Name: "shared", Bundle: h + "/w/shared", Ranges: []string{"^1.0"}}),
		}
	}
	bundles["w/root"] = []fixture.Bundle{bundle("root", "1.0.0", deps...)}
	pushBundles(t, c, h, bundles)

	reg.Reset()
	c = testClient(t) // no cached scheme or tokens
	g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: h + "/w/root:v1.0.0"}}, porterOptions(c))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Packages) != 8 {
		t.Fatalf("%d packages, want 8", len(g.Packages))
	}
	if p := peak.Load(); p < 2 {
		t.Errorf("at most %d manifest read in flight, want reads in parallel", p)
	}
	seen := map[string]int{}
	for _, r := range reg.Requests() {
		if r.Path == "/v2/" {
			continue
		}
		seen[r.Method+" "+r.Path]++
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("%s requested %d times", k, n)
		}
		if strings.HasPrefix(k, "HEAD ") {
			t.Errorf("%s: a HEAD where a GET answers", k)
		}
	}
	// Per package: tag list (a range is chosen; not for the root), index,
	// config manifest and bundle.json.
	if want := 8*3 + 7; len(seen) != want {
		var keys []string
		for k := range seen {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		t.Errorf("%d distinct requests, want %d:\n%s", len(seen), want, strings.Join(keys, "\n"))
	}
}
