package main

import (
	"context"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
)

// TestVerifyResolve: --resolve resolves ferry.yaml again at the sources,
// keeping locked versions; a tag re-pushed with other content at the
// source is a disagreement (exit 3), listed with the lock's digest.
func TestVerifyResolve(t *testing.T) {
	w := newCrossplaneWorld(t)
	env := clitest.New(t)
	env.WriteFile("ferry.yaml", `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: `+w.xp.NameOnly+`
`)
	env.MustRun("lock")
	env.MustRun("mirror", "--to", w.mirror.Host)
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
	r := env.Expect(3, []string{"verify", "--resolve", "-o", "json"}, `"problem": "resolve"`, repoName+":v1.0.1", "now points at")
	if strings.Count(r.Stdout, `"problem": "resolve"`) != 1 {
		t.Errorf("want exactly one resolve problem:\n%s", r.Stdout)
	}
	// Without --resolve the mirror still matches the lock.
	env.MustRun("verify")

	other := clitest.New(t)
	other.WriteFile("ferry.lock", env.ReadFile("ferry.lock"))
	other.Expect(2, []string{"verify", "--resolve"}, "needs the inputs")
}
