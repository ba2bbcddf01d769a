package resolve_test

import (
	"context"
	"testing"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/resolve"
)

// TestRootID maps each root as given to the package it resolved to: two
// roots of one repository at two versions are two packages, two roots
// that choose one version share it, and a root alike to another is one
// root of Roots that both find.
func TestRootID(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := testClient(t)
	h := reg.Host
	pushBundles(t, c, h, map[string][]fixture.Bundle{
		"r/lib": {bundle("lib", "1.0.0"), bundle("lib", "1.1.0"), bundle("lib", "2.0.0")},
	})
	lib := h + "/r/lib"
	roots := []resolve.Root{
		{Ref: lib, Constraint: "^1.0"},
		{Ref: lib, Constraint: "^2.0"},
		{Ref: lib + ":v2.0.0"},
		{Ref: lib, Constraint: "^1.0"},
	}
	// Porter's policy installs each root on its own (two versions of one
	// bundle may stay).
	g, err := resolve.Resolve(ctx, roots, resolve.Options{Registry: c, Formats: []format.Format{porter.Reader{}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		root resolve.Root
		want string // the version of the package it resolved to; "" none
	}{
		{roots[0], "v1.1.0"},
		{roots[1], "v2.0.0"},
		{roots[2], "v2.0.0"},
		{roots[3], "v1.1.0"},
		{resolve.Root{Ref: lib, Constraint: "~1.0.0"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.root.Ref+" "+tt.root.Constraint, func(t *testing.T) {
			id, ok := g.RootID(tt.root)
			if tt.want == "" {
				if ok {
					t.Fatalf("RootID = %s for a root Resolve was not given", id)
				}
				return
			}
			p := g.Packages[id]
			if !ok || p == nil {
				t.Fatalf("RootID = %q, %v: no package", id, ok)
			}
			if p.Version != tt.want {
				t.Errorf("RootID = %s at %s, want %s", id, p.Version, tt.want)
			}
			found := false
			for _, r := range g.Roots {
				found = found || r == id
			}
			if !found {
				t.Errorf("RootID %s is not among Roots %v", id, g.Roots)
			}
		})
	}
	if len(g.Roots) != 2 {
		t.Errorf("Roots = %v, want the two packages", g.Roots)
	}
}
