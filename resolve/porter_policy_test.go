package resolve_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/resolve"
)

// TestPorterPolicy pins how Porter bundles resolve through the porter
// format's rules: Docker references, Porter's version strategies, unshared
// dependencies (one repository at several versions), sharing groups, use
// by path, interface bundles and wiring cycles.
func TestPorterPolicy(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	h := reg.Host + "/pp/"
	push := func(name, version string, b fixture.Bundle) {
		t.Helper()
		repo, err := c.Repository(h + name)
		if err != nil {
			t.Fatal(err)
		}
		b.Name, b.Version, b.Tags = name, version, []string{"v" + version}
		if _, err := fixture.PushBundle(ctx, repo, h+name, b); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"5.7.0", "5.7.3", "5.8.0", "8.0.0", "8.0.2"} {
		push("mysql", v, fixture.Bundle{Outputs: map[string]string{"connstr": "string"}})
	}
	v1 := func(name, ref, rng string) fixture.Dep {
		return fixture.Dep{Name: name, Bundle: ref, Ranges: []string{rng}}
	}
	push("svc-a", "1.0.0", fixture.Bundle{Deps: []fixture.Dep{v1("db", h+"mysql:v5.7.0", "5.7.x")}})
	push("svc-b", "1.0.0", fixture.Bundle{Deps: []fixture.Dep{v1("db", h+"mysql:v8.0.0", "8.x")}})
	push("env", "1.0.0", fixture.Bundle{Deps: []fixture.Dep{v1("svc-a", h+"svc-a:v1.0.0", "1.x"), v1("svc-b", h+"svc-b:v1.0.0", "1.x")}})
	shared := func(name, ref, rng string) fixture.DepV2 {
		return fixture.DepV2{Name: name, Bundle: ref, Version: rng, Sharing: map[string]any{"mode": true, "group": map[string]any{"name": "data"}}}
	}
	push("grp-a", "1.0.0", fixture.Bundle{DepsV2: []fixture.DepV2{shared("db", h+"mysql:v5.7.0", "5.7.x")}})
	push("grp-b", "1.0.0", fixture.Bundle{DepsV2: []fixture.DepV2{shared("db", h+"mysql:v8.0.0", "8.x")}})
	push("grp-c", "1.0.0", fixture.Bundle{DepsV2: []fixture.DepV2{shared("db", h+"mysql:v5.7.0", "5.x")}})
	push("grp-joint", "1.0.0", fixture.Bundle{Deps: []fixture.Dep{v1("grp-a", h+"grp-a:v1.0.0", "1.x"), v1("grp-c", h+"grp-c:v1.0.0", "1.x")}})
	push("grp-env", "1.0.0", fixture.Bundle{Deps: []fixture.Dep{v1("grp-a", h+"grp-a:v1.0.0", "1.x"), v1("grp-b", h+"grp-b:v1.0.0", "1.x")}})
	// Porter writes Docker references: getporter/mysql is docker.io's.
	push("docker-app", "1.0.0", fixture.Bundle{Deps: []fixture.Dep{{Name: "db", Bundle: "getporter/mysql:v5.7.3"}}})
	push("iface", "1.0.0", fixture.Bundle{Outputs: map[string]string{"connstr": "string"}})
	push("iface-app", "1.0.0", fixture.Bundle{DepsV2: []fixture.DepV2{{Name: "db", Bundle: h + "mysql:v8.0.2", Interface: map[string]any{"reference": h + "iface:v1.0.0"}}}})
	push("cycle", "1.0.0", fixture.Bundle{DepsV2: []fixture.DepV2{
		{Name: "a", Bundle: h + "mysql:v5.7.0", Parameters: map[string]string{"p": "${bundle.dependencies.b.outputs.connstr}"}},
		{Name: "b", Bundle: h + "mysql:v8.0.0", Parameters: map[string]string{"p": "${bundle.dependencies.a.outputs.connstr}"}},
	}})

	tests := []struct {
		name     string
		roots    []string
		strategy porter.VersionStrategy
		use      map[string]resolve.Use
		replace  map[string]string
		want     []string // sorted "REPO:VERSION" of every package
		plan     []string // REPO of every plan step, when set
		errs     []string
	}{
		{
			name:  "unshared: exact takes each reference's tag",
			roots: []string{h + "env:v1.0.0"},
			want:  []string{"env:v1.0.0", "mysql:v5.7.0", "mysql:v8.0.0", "svc-a:v1.0.0", "svc-b:v1.0.0"},
		},
		{
			name:     "unshared: highest in each edge's own range",
			roots:    []string{h + "env:v1.0.0"},
			strategy: porter.StrategyHighest,
			want:     []string{"env:v1.0.0", "mysql:v5.7.3", "mysql:v8.0.2", "svc-a:v1.0.0", "svc-b:v1.0.0"},
		},
		{
			name:     "max-patch stays on the reference's minor",
			roots:    []string{h + "svc-b:v1.0.0"},
			strategy: porter.StrategyMaxPatch,
			want:     []string{"mysql:v8.0.2", "svc-b:v1.0.0"},
		},
		{
			name:     "min",
			roots:    []string{h + "svc-a:v1.0.0"},
			strategy: porter.StrategyMin,
			want:     []string{"mysql:v5.7.0", "svc-a:v1.0.0"},
		},
		{
			name:  "a porter.yaml root: Porter's strategy, exact by default",
			roots: []string{"porter:" + h + "mysql:v5.7.0@5.7.x"},
			want:  []string{"mysql:v5.7.0"},
		},
		{
			name:     "a porter.yaml root under highest",
			roots:    []string{"porter:" + h + "mysql:v5.7.0@5.7.x"},
			strategy: porter.StrategyHighest,
			want:     []string{"mysql:v5.7.3"},
		},
		{
			name:  "two roots at two versions of one repository",
			roots: []string{h + "mysql:v5.7.0", h + "mysql:v8.0.2"},
			want:  []string{"mysql:v5.7.0", "mysql:v8.0.2"},
		},
		{
			name:     "a sharing group must agree",
			roots:    []string{h + "grp-env:v1.0.0"},
			strategy: porter.StrategyHighest,
			errs:     []string{`sharing group "data"`, `"5.7.x" by`, `"8.x" by`, "no tag satisfies every range"},
		},
		{
			// PEP003: one installation serves the group, so the group's
			// ranges are intersected (5.7.x and 5.x: v5.7.3, where 5.x
			// alone would take v5.8.0).
			name:     "a sharing group resolves jointly",
			roots:    []string{h + "grp-joint:v1.0.0"},
			strategy: porter.StrategyHighest,
			want:     []string{"grp-a:v1.0.0", "grp-c:v1.0.0", "grp-joint:v1.0.0", "mysql:v5.7.3"},
		},
		{
			name:  "use by path replaces one edge only",
			roots: []string{h + "env:v1.0.0"},
			use:   map[string]resolve.Use{"svc-b/db": {Ref: h + "mysql:v8.0.2"}},
			want:  []string{"env:v1.0.0", "mysql:v5.7.0", "mysql:v8.0.2", "svc-a:v1.0.0", "svc-b:v1.0.0"},
		},
		{
			name:  "use by name breaking a constraint names the parent",
			roots: []string{h + "env:v1.0.0"},
			use:   map[string]resolve.Use{"db": {Ref: h + "mysql:v8.0.2"}},
			errs:  []string{"svc-a:v1.0.0", `dependency "db" requires "5.7.x"`, "force: true"},
		},
		{
			name:    "Docker references: getporter/mysql is docker.io/getporter/mysql",
			roots:   []string{h + "docker-app:v1.0.0"},
			replace: map[string]string{"docker.io/getporter/mysql": strings.TrimSuffix(h, "/") + "/mysql"},
			want:    []string{"docker-app:v1.0.0", "mysql:v5.7.3"},
		},
		{
			name:  "an interface bundle is in the closure, not in the plan",
			roots: []string{h + "iface-app:v1.0.0"},
			want:  []string{"iface-app:v1.0.0", "iface:v1.0.0", "mysql:v8.0.2"},
			plan:  []string{"mysql", "iface-app"},
		},
		{
			name:  "a wiring cycle is an error",
			roots: []string{h + "cycle:v1.0.0"},
			errs:  []string{"cycle:v1.0.0", "wiring cycle", "a -> b -> a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := resolve.Options{Registry: c, Formats: []format.Format{porter.Reader{Strategy: tt.strategy}}, Use: tt.use, Replace: tt.replace}
			var roots []resolve.Root
			for _, r := range tt.roots {
				// "FORMAT:REF@RANGE" is a root an input file of FORMAT gives.
				root := resolve.Root{Ref: r}
				if f, rest, ok := strings.Cut(r, ":"); ok && f == "porter" {
					root.Format = f
					root.Ref, root.Constraint, _ = strings.Cut(rest, "@")
				}
				roots = append(roots, root)
			}
			g, err := resolve.Resolve(ctx, roots, opts)
			if len(tt.errs) > 0 {
				if err == nil {
					t.Fatalf("resolved, want an error")
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
			var got []string
			for _, p := range g.Packages {
				got = append(got, strings.TrimPrefix(p.Source, h)+":"+p.Version)
			}
			sort.Strings(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("packages = %v\nwant       %v", got, tt.want)
			}
			if tt.plan != nil {
				plan, err := g.Plan()
				if err != nil {
					t.Fatal(err)
				}
				var steps []string
				for _, p := range plan {
					steps = append(steps, strings.TrimPrefix(p.Source, h))
				}
				if !slices.Equal(steps, tt.plan) {
					t.Errorf("plan = %v, want %v", steps, tt.plan)
				}
			}
		})
	}
	var ce *resolve.CycleError
	_, err := resolve.Resolve(ctx, []resolve.Root{{Ref: h + "cycle:v1.0.0"}}, resolve.Options{Registry: c, Formats: []format.Format{porter.Reader{}}})
	if !errors.As(err, &ce) || ce.Wiring == "" {
		t.Errorf("wiring cycle: %v, want a CycleError", err)
	}
}

// TestReportMixins: `ferry resolve -o json` reports the mixins a bundle
// records.
func TestReportMixins(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	ref := reg.Host + "/rm/tool"
	repo, err := c.Repository(ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.PushBundle(ctx, repo, ref, fixture.Bundle{Name: "tool", Version: "1.0.0", Tags: []string{"v1.0.0"}, Mixins: map[string]string{"exec": "v1.2.3"}}); err != nil {
		t.Fatal(err)
	}
	g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: ref + ":v1.0.0"}}, resolve.Options{Registry: c, Formats: []format.Format{porter.Reader{}}})
	if err != nil {
		t.Fatal(err)
	}
	rep := g.Report()
	if len(rep.Packages) != 1 || rep.Packages[0].Mixins["exec"] == nil {
		t.Fatalf("report = %+v, want the exec mixin", rep.Packages)
	}
	if v := rep.Packages[0].Mixins["exec"].(map[string]any)["version"]; v != "v1.2.3" {
		t.Errorf("exec version = %v", v)
	}
}
