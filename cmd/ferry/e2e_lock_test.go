package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestE2ELockKeepsVersions: a newer tag does not move a locked version
// until --update; --update=NAME moves only that package.
func TestE2ELockKeepsVersions(t *testing.T) {
	t.Parallel()
	src := registrytest.New(t)
	h := src.Host
	dep := func(name string) fixture.Dep {
		return fixture.Dep{Name: name, Bundle: h + "/k/" + name + ":v1.0.0", Ranges: []string{"^1.0"}}
	}
	e2ePush(t, h, map[string][]fixture.Bundle{
		"k/lib":  {e2eBundle("lib", "1.0.0")},
		"k/util": {e2eBundle("util", "1.0.0")},
		"k/app":  {e2eBundle("app", "1.0.0", dep("lib"), dep("util"))},
	})
	env := e2eEnv(t)
	env.WriteFile("ferry.yaml", fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: %s/k/app:v1.0.0\n", h))
	env.MustRun("lock")
	first := env.ReadFile("ferry.lock")
	env.WriteFile("first.lock", first)
	version := func(name string) string {
		t.Helper()
		return e2eReadLock(t, env, "ferry.lock").Package(h + "/k/" + name).Version
	}
	if version("lib") != "v1.0.0" || version("util") != "v1.0.0" {
		t.Fatalf("first lock:\n%s", first)
	}

	e2ePush(t, h, map[string][]fixture.Bundle{
		"k/lib":  {e2eBundle("lib", "1.1.0"), e2eBundle("lib", "2.0.0")},
		"k/util": {e2eBundle("util", "1.0.1")},
	})
	env.MustRun("lock")
	if got := env.ReadFile("ferry.lock"); got != first {
		t.Fatalf("a newer tag moved the lock:\n%s", got)
	}
	// resolve ignores the lock: it shows what is newest.
	if out := env.MustRun("resolve").Stdout; !strings.Contains(out, h+"/k/lib:v1.1.0") {
		t.Errorf("resolve does not see lib v1.1.0:\n%s", out)
	}

	// PRODUCT.md's `--update [NAME...]`, with the name as a separate word.
	env.MustRun("lock", "--update", "lib")
	if version("lib") != "v1.1.0" || version("util") != "v1.0.0" {
		t.Fatalf("--update lib: lib %s, util %s", version("lib"), version("util"))
	}
	env.WriteFile("ferry.lock", first)
	env.MustRun("lock", "--update=lib")
	if version("lib") != "v1.1.0" || version("util") != "v1.0.0" {
		t.Fatalf("--update=lib: lib %s, util %s", version("lib"), version("util"))
	}
	diff := env.MustRun("diff", "first.lock", "ferry.lock").Stdout
	if !strings.Contains(diff, "~ package "+h+"/k/lib v1.0.0 -> v1.1.0") || strings.Contains(diff, "util") {
		t.Errorf("diff after --update=lib:\n%s", diff)
	}

	env.MustRun("lock", "--update")
	if version("lib") != "v1.1.0" || version("util") != "v1.0.1" {
		t.Fatalf("--update: lib %s, util %s", version("lib"), version("util"))
	}
	again := env.ReadFile("ferry.lock")
	env.MustRun("lock")
	if env.ReadFile("ferry.lock") != again {
		t.Errorf("lock after --update is not stable")
	}
}

// TestE2EStaleLock: editing ferry.yaml after locking makes verify exit 3
// and say the lock is stale.
func TestE2EStaleLock(t *testing.T) {
	t.Parallel()
	src := registrytest.New(t)
	mirror := registrytest.New(t)
	h := src.Host
	e2ePush(t, h, map[string][]fixture.Bundle{"s/app": {e2eBundle("app", "1.0.0"), e2eBundle("app", "1.1.0")}})
	env := e2eEnv(t)
	yaml := fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: %s/s/app\n    version: \"^1.0\"\nmirror:\n  to: %s/m\n", h, mirror.Host)
	env.WriteFile("ferry.yaml", yaml)
	env.MustRun("lock")
	env.MustRun("mirror")
	env.Expect(0, []string{"verify"}, "verified 1 packages")
	// The mirror target is not an input: one lock serves several mirrors.
	env.WriteFile("ferry.yaml", strings.Replace(yaml, "/m\n", "/other\n", 1))
	env.Expect(0, []string{"verify"})

	tests := []struct{ name, yaml string }{
		{"constraint changed", strings.Replace(yaml, "^1.0", "~1.0.0", 1)},
		{"root added", strings.Replace(yaml, "packages:\n", fmt.Sprintf("packages:\n  - ref: %s/s/app:v1.0.0\n", h), 1)},
		{"use added", yaml + "use:\n  db: " + h + "/s/app:v1.0.0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env.WriteFile("ferry.yaml", tt.yaml)
			r := env.Expect(3, []string{"verify"}, "stale", "ferry.yaml changed since the lock was written")
			if !strings.Contains(r.Stderr, "1 problems") {
				t.Errorf("stderr: %s", r.Stderr)
			}
			env.Expect(3, []string{"verify", "-o", "json"}, `"problem": "stale"`)
		})
	}
	env.WriteFile("ferry.yaml", yaml)
	env.Expect(0, []string{"verify"})
}
