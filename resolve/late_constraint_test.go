package resolve_test

import (
	"context"
	"testing"

	"github.com/ferryhq/ferry/client"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/resolve"
)

// TestLateConstraint: a constraint that arrives deeper in the closure than
// the package it constrains must still choose that package's version, even
// when the first choice led to a conflict elsewhere.
//
//	root -> a -> x "^1"            (x 1.9.0 requires y ">=2", x 1.4.0 requires y "^1")
//	root -> b -> c -> x "<1.5"     (arrives after x was first chosen)
//	root -> z -> w -> y "<2"
//
// The only answer is x 1.4.0 and y 1.0.0.
func TestLateConstraint(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	h := reg.Host + "/late/"
	push, dep := bundlePushers(t, c, h)
	push("y", "1.0.0")
	push("y", "2.0.0")
	push("x", "1.4.0", dep("y", "^1"))
	push("x", "1.9.0", dep("y", ">=2"))
	push("w", "1.0.0", dep("y", "<2"))
	push("z", "1.0.0", dep("w", "^1"))
	push("c", "1.0.0", dep("x", "<1.5"))
	push("b", "1.0.0", dep("c", "^1"))
	push("a", "1.0.0", dep("x", "^1"))
	push("root", "1.0.0", dep("a", "^1"), dep("b", "^1"), dep("z", "^1"))

	var rounds int
	g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: h + "root:v1.0.0"}}, resolve.CountRounds(resolve.Options{Registry: c, Formats: []format.Format{sharedBundles{}}}, &rounds))
	if err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]string{"x": "v1.4.0", "y": "v1.0.0"} {
		if got := g.Packages[h+src].Version; got != want {
			t.Errorf("%s: %s, want %s", src, got, want)
		}
	}
	if rounds < 2 {
		t.Errorf("%d round: a constraint that arrived after x was read needs another", rounds)
	}
}

// TestSettledRound: when every package's version was chosen from all the
// constraints the closure places on it, the round is not repeated; when
// one arrives after the package was read, it is, even if it does not
// change the version.
//
//	settled: root -> a -> x "^1", root -> b -> x "<2" (both edges from one level)
//	late:    root -> a -> x "^1", root -> b -> c -> x "<2" (c's edge arrives later)
func TestSettledRound(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	for _, tc := range []struct {
		name       string
		late       bool
		wantRounds int
	}{
		{"settled", false, 1},
		{"late", true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := reg.Host + "/settled-" + tc.name + "/"
			push, dep := bundlePushers(t, c, h)
			push("x", "1.0.0")
			push("x", "1.2.0")
			push("a", "1.0.0", dep("x", "^1"))
			if tc.late {
				push("c", "1.0.0", dep("x", "<2"))
				push("b", "1.0.0", dep("c", "^1"))
			} else {
				push("b", "1.0.0", dep("x", "<2"))
			}
			push("root", "1.0.0", dep("a", "^1"), dep("b", "^1"))
			var rounds int
			g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: h + "root:v1.0.0"}}, resolve.CountRounds(resolve.Options{Registry: c, Formats: []format.Format{sharedBundles{}}}, &rounds))
			if err != nil {
				t.Fatal(err)
			}
			if got := g.Packages[h+"x"].Version; got != "v1.2.0" {
				t.Errorf("x: %s, want v1.2.0", got)
			}
			if rounds != tc.wantRounds {
				t.Errorf("%d rounds, want %d", rounds, tc.wantRounds)
			}
		})
	}
}

// bundlePushers returns push, which pushes bundle NAME at VERSION (tag
// vVERSION) into repository prefix+NAME, and dep, which makes a
// dependency on prefix+NAME with one range.
func bundlePushers(t *testing.T, c *client.Client, prefix string) (push func(name, version string, deps ...fixture.Dep), dep func(name, rng string) fixture.Dep) {
	push = func(name, version string, deps ...fixture.Dep) {
		t.Helper()
		repo, err := c.Repository(prefix + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fixture.PushBundle(context.Background(), repo, prefix+name, fixture.Bundle{Name: name, Version: version, Tags: []string{"v" + version}, Deps: deps}); err != nil {
			t.Fatal(err)
		}
	}
	dep = func(name, rng string) fixture.Dep {
		return fixture.Dep{Name: name, Bundle: prefix + name + ":v1.0.0", Ranges: []string{rng}}
	}
	return push, dep
}
