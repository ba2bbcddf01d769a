package main

import (
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/clitest"
)

// TestStaleInputs: a lock remembers the input file it was made from, so
// editing a crossplane.yaml makes it stale, and a lock made from
// command-line roots is not judged by an unrelated ferry.yaml.
func TestStaleInputs(t *testing.T) {
	t.Parallel()
	w := newCrossplaneWorld(t)
	env := clitest.New(t)
	xp := func(constraint string) string {
		return `apiVersion: meta.pkg.crossplane.io/v1
kind: Configuration
metadata: {name: local}
spec:
  dependsOn:
    - provider: ` + w.src.Host + `/xp/acme/provider-acme
      version: "` + constraint + `"
`
	}
	env.WriteFile("crossplane.yaml", xp(">=v1.0.0"))
	env.MustRun("lock", "crossplane.yaml")
	if !strings.Contains(env.ReadFile("ferry.lock"), "input: crossplane.yaml") {
		t.Fatalf("lock does not record its input:\n%s", env.ReadFile("ferry.lock"))
	}
	env.MustRun("mirror", "--to", w.mirror.Host)
	env.MustRun("verify")
	env.WriteFile("crossplane.yaml", xp(">=v1.0.1"))
	env.Expect(3, []string{"verify"}, "stale", "crossplane.yaml")

	// Command-line roots: an unrelated ferry.yaml beside the lock is not
	// the lock's input.
	cli := clitest.New(t)
	cli.MustRun("lock", w.xp.NameOnly)
	cli.MustRun("mirror", "--to", w.mirror.Host)
	cli.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: "+w.xp.FullyQualified+"\n")
	cli.MustRun("verify")
	cli.Expect(2, []string{"verify", "--resolve"}, "command-line roots")
}

// TestInputsWithFlags: flags that set format settings (--default-registry
// here) are inputs: verify given the same flags finds the lock current,
// and without them reports it stale.
func TestInputsWithFlags(t *testing.T) {
	t.Parallel()
	w := newCrossplaneWorld(t)
	env := clitest.New(t)
	env.WriteFile("crossplane.yaml", `apiVersion: meta.pkg.crossplane.io/v1
kind: Configuration
metadata: {name: local}
spec:
  dependsOn:
    - provider: xp/acme/provider-acme
      version: ">=v1.0.0"
`)
	env.MustRun("lock", "crossplane.yaml", "--default-registry", w.src.Host)
	if !strings.Contains(env.ReadFile("ferry.lock"), "source: "+w.src.Host+"/xp/acme/provider-acme") {
		t.Fatalf("--default-registry did not qualify the dependency:\n%s", env.ReadFile("ferry.lock"))
	}
	env.MustRun("mirror", "--to", w.mirror.Host, "--default-registry", w.src.Host)
	env.MustRun("verify", "--default-registry", w.src.Host)
	env.Expect(3, []string{"verify"}, "stale", "crossplane.yaml")
}
