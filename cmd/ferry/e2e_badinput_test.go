package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestE2EBadInput: each bad input gets a clear message naming what is
// wrong, a non-zero exit code, and no ferry.lock.
func TestE2EBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, cat := e2eSeed(t)
	h := src.Host
	// A bundle whose bundle.json is not JSON, and one depending on it.
	c := e2eClient(t)
	repo := e2eRepo(t, c, h+"/bad/app")
	inv, err := fixture.PushImage(ctx, repo, "bad-invocation")
	if err != nil {
		t.Fatal(err)
	}
	e2ePushRaw(t, repo, "v1.0.0", []byte(`{"schemaVersion": "v1.2.0", "name": "app", `), inv)
	e2ePush(t, h, map[string][]fixture.Bundle{"bad/parent": {e2eBundle("parent", "1.0.0",
		fixture.Dep{Name: "app", Bundle: h + "/bad/app:v1.0.0", Ranges: []string{"^1.0"}})}})
	stopped := registrytest.New(t)
	stopped.Stop()

	tests := []struct {
		name string
		args []string
		// yaml, when set, is written as ferry.yaml first.
		yaml string
		code int
		want []string
	}{
		{
			name: "malformed bundle.json",
			args: []string{h + "/bad/app:v1.0.0"},
			// Bad content in a registry is a failure (1), not a bad input file.
			code: 1, want: []string{h + "/bad/app:v1.0.0", "bundle.json", "unexpected end of JSON input"},
		},
		{
			name: "malformed bundle.json of a dependency",
			args: []string{h + "/bad/parent:v1.0.0"},
			code: 1, want: []string{h + "/bad/parent:v1.0.0 -> " + h + "/bad/app", "bundle.json"},
		},
		{
			name: "missing tag",
			args: []string{h + "/fixtures/diamond/app:v9.9.9"},
			code: 1, want: []string{h + "/fixtures/diamond/app:v9.9.9", "not found"},
		},
		{
			name: "missing repository",
			args: []string{h + "/fixtures/nope:v1.0.0"},
			code: 1, want: []string{h + "/fixtures/nope:v1.0.0"},
		},
		{
			name: "no version satisfies the root constraint",
			yaml: fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: %s/fixtures/diamond/db\n    version: \">=9\"\n", h),
			code: 1, want: []string{h + "/fixtures/diamond/db", `">=9"`, "(tags: v1.0.0 v1.1.0"},
		},
		{
			name: "unreachable registry",
			args: []string{stopped.Host + "/acme/app:v1.0.0"},
			code: 1, want: []string{stopped.Host, "connection refused"},
		},
		{
			name: "cycle",
			args: []string{cat.Cycle},
			code: 1, want: []string{"dependency cycle: " + cat.Cycle + " -> " + h + "/fixtures/cycle-b:v1.0.0 -> " + cat.Cycle},
		},
		{
			// Porter resolves each dependency on its own, so the catalog's
			// two parents needing base ^1.0 and >=2.0 <3 lock both; a range
			// no tag satisfies is what cannot be resolved.
			name: "unsatisfiable",
			args: []string{h + "/fixtures/conflict/base", "--version", ">=3"},
			code: 1, want: []string{h + "/fixtures/conflict/base", `">=3"`, "(tags: v1.0.0 v1.4.0 v2.0.0 v2.1.0)"},
		},
		{
			name: "interface-only dependency",
			args: []string{cat.Interface},
			code: 1, want: []string{`"mysql"`, "only an interface", "use:"},
		},
		{
			// A reference without a registry is Docker Hub's, as in crane,
			// oras and porter; one that is not a reference at all is bad input.
			name: "not a reference",
			args: []string{"Acme/App:v1.0.0"},
			code: 2, want: []string{"Acme/App:v1.0.0"},
		},
		{
			name: "credentials in a reference",
			args: []string{"robot:s3cr/et@" + h + "/acme/app:v1"},
			code: 2, want: []string{"credentials"},
		},
		{
			name: "malformed ferry.yaml",
			yaml: "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages: {ref: [}\n",
			code: 2, want: []string{"ferry.yaml"},
		},
		{
			name: "unknown ferry.yaml field",
			yaml: fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: %s\n    constraint: ^1\n", cat.Diamond),
			code: 2, want: []string{"ferry.yaml", "constraint"},
		},
		{
			name: "no ferry.yaml",
			code: 2, want: []string{"ferry.yaml not found"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, cmd := range []string{"lock", "resolve", "mirror"} {
				env := e2eEnv(t)
				if tt.yaml != "" {
					env.WriteFile("ferry.yaml", tt.yaml)
				}
				args := append([]string{cmd}, tt.args...)
				if cmd == "mirror" {
					args = append(args, "--to", "127.0.0.1:1/m")
				}
				r := env.Expect(tt.code, args, tt.want...)
				if strings.Contains(r.Stdout+r.Stderr, "s3cr/et") {
					t.Errorf("ferry %s echoes the password:\n%s", cmd, r.Stderr)
				}
				if strings.Contains(r.Stderr, "goroutine ") || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 10 {
					t.Errorf("ferry %s: unclear error output:\n%s", cmd, r.Stderr)
				}
				e2eAbsent(t, env.Path("ferry.lock"))
			}
		})
	}
}

// TestE2EBadLock: a malformed or missing lock is bad input (exit 2) for
// every command that reads one, and nothing is written.
func TestE2EBadLock(t *testing.T) {
	t.Parallel()
	env := e2eEnv(t)
	tests := []struct {
		name, content, want string
	}{
		{"not yaml", "{{{", "not a valid lock"},
		{"wrong kind", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\ninputs: x\npackages: []\n", "kind"},
		{"bad digest", "apiVersion: ferry.dev/v1alpha1\nkind: Lock\ninputs: x\npackages:\n  - source: r.io/a\n    digest: sha256:zz\n", "r.io/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env.WriteFile("bad.lock", tt.content)
			for _, args := range [][]string{
				{"verify", "--lock", "bad.lock"},
				{"install", "--lock", "bad.lock", "--dest", "out"},
				{"mirror", "--lock", "bad.lock", "--to", "127.0.0.1:1/m"},
				{"why", "a", "--lock", "bad.lock"},
				{"diff", "bad.lock", "bad.lock"},
			} {
				env.Expect(2, args, "bad.lock", tt.want)
				e2eAbsent(t, env.Path("out"))
				if env.ReadFile("bad.lock") != tt.content {
					t.Fatalf("%v rewrote the lock", args)
				}
			}
		})
	}
	env.Expect(2, []string{"verify", "--lock", "none.lock"}, "none.lock not found")
	env.Expect(2, []string{"install", "--lock", "none.lock"}, "--dest")
}
