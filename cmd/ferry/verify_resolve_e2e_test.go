package main

import (
	"context"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
)

// TestVerifyResolveSources: --resolve-sources resolves ferry.yaml again at
// the sources, keeping locked versions; a tag re-pushed with other content
// at the source is a disagreement (exit 3), listed with the lock's digest.
// --resolve reads the mirror alone, which still agrees.
func TestVerifyResolveSources(t *testing.T) {
	t.Parallel()
	w := newCrossplaneWorld(t)
	env := clitest.New(t)
	env.WriteFile("ferry.yaml", `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: `+w.xp.NameOnly+`
`)
	env.MustRun("lock")
	env.MustRun("mirror", "--to", w.mirror.Host)
	env.MustRun("verify", "--resolve-sources")
	env.MustRun("verify", "--resolve")

	// Re-push provider-acme's locked tag with other content.
	repoName := w.src.Host + "/xp/acme/provider-acme"
	repo, err := w.client.Repository(repoName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.PushXpkg(context.Background(), repo, fixture.Xpkg{
		Kind: "Provider", Name: "provider-acme", Tags: []string{"v1.0.1"},
		Annotations: map[string]string{"rebuilt": "yes"},
	}); err != nil {
		t.Fatal(err)
	}
	r := env.Expect(3, []string{"verify", "--resolve-sources", "-o", "json"}, `"problem": "resolve"`, repoName+":v1.0.1", "now points at")
	if strings.Count(r.Stdout, `"problem": "resolve"`) != 1 {
		t.Errorf("want exactly one resolve problem:\n%s", r.Stdout)
	}
	// The mirror alone still resolves to the lock.
	env.MustRun("verify", "--resolve")
	env.MustRun("verify")

	other := clitest.New(t)
	other.WriteFile("ferry.lock", env.ReadFile("ferry.lock"))
	other.Expect(2, []string{"verify", "--resolve"}, "--resolve needs the inputs")
	other.Expect(2, []string{"verify", "--resolve-sources"}, "--resolve-sources needs the inputs")
}

// TestVerifyResolveMirrorOnly: --resolve re-resolves a closure with
// partial references, ranges, `use` and interface bundles from the mirror
// alone: the source registry sees no request, and it passes with the
// source stopped. A tag moved in the mirror is a problem naming it (exit
// 3). --resolve-sources does ask the sources.
func TestVerifyResolveMirrorOnly(t *testing.T) {
	t.Parallel()
	w := newE2EMirrored(t)
	env := w.env

	w.src.Reset()
	env.MustRun("verify", "--resolve")
	if reqs := w.src.Requests(); len(reqs) != 0 {
		t.Fatalf("verify --resolve sent %d requests to the source registry, want none: %v", len(reqs), reqs)
	}
	// --mirror maps every source the same way as the recorded mirror.
	env.MustRun("verify", "--resolve", "--mirror", w.to)
	if reqs := w.src.Requests(); len(reqs) != 0 {
		t.Fatalf("verify --resolve --mirror sent %d requests to the source registry, want none", len(reqs))
	}
	// --resolve-sources asks them.
	env.MustRun("verify", "--resolve-sources")
	if len(w.src.Requests()) == 0 {
		t.Fatal("verify --resolve-sources sent no request to the source registry")
	}

	w.src.Stop()
	env.MustRun("verify", "--resolve")
	env.Expect(1, []string{"verify", "--resolve-sources"}, w.src.Host)

	// A mirror that lacks the closure proves nothing: problems, not errors.
	empty := registrytest.New(t)
	env.Expect(3, []string{"verify", "--resolve", "--mirror", empty.Host + "/none", "-o", "json"},
		"no longer exists in the mirror", "the mirror alone does not resolve the inputs")

	// Move a mirrored tag: db's locked tag now names another bundle.
	var db *lock.Package
	for _, p := range w.lock.Resolved() {
		if strings.HasSuffix(p.Source, "/fixtures/diamond/db") && p.Version != "" {
			db = p
			break
		}
	}
	if db == nil {
		t.Fatal("the lock has no tagged fixtures/diamond/db")
	}
	mirrorRepo := w.to + "/fixtures/diamond/db"
	moved := fixture.Bundle{Name: "db", Version: "9.9.9", Tags: []string{db.Version}}
	if _, err := fixture.PushBundle(context.Background(), e2eRepo(t, e2eClient(t), mirrorRepo), mirrorRepo, moved); err != nil {
		t.Fatal(err)
	}
	r := env.Expect(3, []string{"verify", "--resolve", "-o", "json"}, `"problem": "resolve"`, mirrorRepo+":"+db.Version, "in the mirror now points at", db.Digest)
	if n := strings.Count(r.Stdout, `"problem": "resolve"`); n != 1 {
		t.Errorf("want exactly one resolve problem, got %d:\n%s", n, r.Stdout)
	}
}
