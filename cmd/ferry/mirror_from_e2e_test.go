package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

// TestMirrorFromMirror: with the source registry and the mixin feed
// stopped, `ferry mirror --lock F --to NEW` copies the closure (partial
// references, ranges, `use`, interface bundles) and its mixins from the
// mirror the lock records, with a warning; --from names the mirror to copy
// from explicitly. Each new mirror verifies --deep, and the lock records
// it. A --from mirror that lacks the content fails before anything is
// copied.
func TestMirrorFromMirror(t *testing.T) {
	t.Parallel()
	src, cat := e2eSeed(t)
	feed := mixintest.NewFeed(t, mixintest.Options{Platforms: []string{"linux/amd64"}})
	first := registrytest.New(t)
	env := clitest.New(t)
	env.Vars = append(env.Vars, mixin.FeedEnv+"="+feed.URL)
	to1 := first.Host + "/mirror"
	env.WriteFile("ferry.yaml", fmt.Sprintf(`apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: %s
  - ref: %s/fixtures/v2/env
    version: "^1.0"
  - ref: %s
use:
  mysql: %s
mixins:
  - name: exec
`, cat.Diamond, src.Host, cat.Interface, cat.InterfaceImpl))
	env.MustRun("lock")
	env.MustRun("mirror", "--lock", "ferry.lock", "--to", to1)
	if !strings.Contains(env.ReadFile("ferry.lock"), "porter-mixins/exec@") {
		t.Fatalf("the lock records no mirrored mixin:\n%s", env.ReadFile("ferry.lock"))
	}

	src.Stop()
	feed.Close()

	// Fallback: the recorded mirror.
	second := registrytest.New(t)
	to2 := second.Host + "/second"
	r := env.MustRun("mirror", "--lock", "ferry.lock", "--to", to2)
	for _, w := range []string{src.Host + " cannot be reached", "mixin feed cannot be reached"} {
		if !strings.Contains(r.Stderr, w) {
			t.Errorf("no warning %q:\n%s", w, r.Stderr)
		}
	}
	l := e2eReadLock(t, env, "ferry.lock")
	for _, p := range l.Resolved() {
		if !strings.HasPrefix(p.Mirror, to2+"/") {
			t.Errorf("%s: lock records mirror %q, want one under %s", p.Source, p.Mirror, to2)
		}
	}
	if !strings.Contains(env.ReadFile("ferry.lock"), to2+"/porter-mixins/exec@") {
		t.Errorf("the lock does not record the mixin in %s:\n%s", to2, env.ReadFile("ferry.lock"))
	}
	env.MustRun("verify", "--deep")
	env.MustRun("verify", "--deep", "--mirror", to2)
	env.MustRun("verify", "--resolve", "--mirror", to2)

	// Explicit: --from the first mirror (the lock now records the second).
	third := registrytest.New(t)
	to3 := third.Host + "/third"
	first.Reset()
	second.Reset()
	r = env.MustRun("mirror", "--lock", "ferry.lock", "--from", to1, "--to", to3)
	if strings.Contains(r.Stderr, "cannot be reached") {
		t.Errorf("--from warns of an unreachable source:\n%s", r.Stderr)
	}
	if len(first.Requests()) == 0 {
		t.Error("--from sent no request to the mirror it names")
	}
	if reqs := second.Requests(); len(reqs) != 0 {
		t.Errorf("--from read the recorded mirror too (%d requests)", len(reqs))
	}
	env.MustRun("verify", "--deep", "--mirror", to3)
	env.MustRun("verify", "--deep")

	// A --from mirror without the content fails before anything is
	// copied, naming what it lacks: the mixins are read and checked
	// first.
	empty := registrytest.New(t)
	saved := env.ReadFile("ferry.lock")
	r = env.Run("mirror", "--lock", "ferry.lock", "--from", empty.Host+"/none", "--to", empty.Host+"/out")
	if r.Code == 0 {
		t.Fatalf("mirror --from an empty registry succeeded:\n%s", r.Stderr)
	}
	if !strings.Contains(r.Stderr, "copying mixin exec v1.2.3 from "+empty.Host+"/none/porter-mixins/exec") {
		t.Errorf("the failure names no mixin:\n%s", r.Stderr)
	}
	if n := manifestPuts(empty); n != 0 {
		t.Errorf("%d manifests pushed before the failure", n)
	}
	if got := env.ReadFile("ferry.lock"); got != saved {
		t.Error("a failed mirror --from rewrote the lock")
	}

	env.Expect(2, []string{"mirror", "--lock", "ferry.lock", "--from", to1, "--to-archive", env.Path("x.tar")}, "--from")
	if _, err := os.Stat(env.Path("x.tar")); err == nil {
		t.Error("a refused --from --to-archive wrote the archive")
	}
}
