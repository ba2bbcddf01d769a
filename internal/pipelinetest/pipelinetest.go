// Package pipelinetest builds, for tests, a small closure that has been
// resolved, locked and mirrored between two real test registries.
package pipelinetest

import (
	"context"
	"testing"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/resolve"
)

// MirroredLock publishes app -> db (db has an image) to a source registry,
// resolves and locks it, and mirrors it to a second registry under /m.
func MirroredLock(t *testing.T) (src, mirror *registrytest.Registry, c *client.Client, l *lock.Lock) {
	t.Helper()
	ctx := context.Background()
	src, mirror = registrytest.New(t), registrytest.New(t)
	c = registrytest.Client(t)
	h := src.Host
	for _, b := range []struct {
		path string
		b    fixture.Bundle
	}{
		{"p/db", fixture.Bundle{Name: "db", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"mysql"}}},
		{"p/app", fixture.Bundle{Name: "app", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"web"},
			Deps: []fixture.Dep{{Name: "db", Bundle: h + "/p/db:v1.0.0", Ranges: []string{"^1.0"}}}}},
	} {
		repo, err := c.Repository(h + "/" + b.path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fixture.PushBundle(ctx, repo, h+"/"+b.path, b.b); err != nil {
			t.Fatal(err)
		}
	}
	g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: h + "/p/app:v1.0.0"}}, resolve.Options{Registry: c, Formats: []format.Format{porter.Reader{Strategy: porter.StrategyHighest}}})
	if err != nil {
		t.Fatal(err)
	}
	l = lock.FromGraph(g, "sha256:inputs")
	to, err := relocate.ParseMapping(mirror.Host + "/m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := relocate.Mirror(ctx, l, relocate.Options{Source: c, To: to, Concurrency: 2}); err != nil {
		t.Fatal(err)
	}
	return src, mirror, c, l
}
