package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

// outSchema compiles a JSON Schema shipped in the repository: NAME.json
// in cmd/ferry/schemas, or "lock" for lock/schema.json.
func outSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	data := lock.Schema
	if name != "lock" {
		var err error
		if data, err = os.ReadFile(filepath.Join("schemas", name+".json")); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	url := "file:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	return s
}

// outJSON runs ferry with -o json, checks that stdout is one JSON document
// valid against the command's schema, and decodes it into v.
func outJSON(t *testing.T, env *clitest.Env, schema string, v any, args ...string) clitest.Result {
	t.Helper()
	r := env.MustRun(append(args, "-o", "json")...)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.Stdout))
	if err != nil {
		t.Fatalf("ferry %s -o json: stdout is not JSON: %v\n%s", strings.Join(args, " "), err, r.Stdout)
	}
	if err := outSchema(t, schema).Validate(doc); err != nil {
		t.Errorf("ferry %s -o json does not match schemas/%s.json: %v\n%s", strings.Join(args, " "), schema, err, r.Stdout)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(r.Stdout), v); err != nil {
			t.Fatal(err)
		}
	}
	if strings.ContainsRune(r.Stderr, '\x1b') {
		t.Errorf("ferry %s -o json: control characters on stderr:\n%q", strings.Join(args, " "), r.Stderr)
	}
	return r
}

// outWorld is a source registry with the catalog, a mixin feed, and a
// ferry.yaml naming a bundle with mixins, a diamond closure and a mixin
// of its own, for this machine's platform.
func outWorld(t *testing.T) (*clitest.Env, *fixture.Catalog, *registrytest.Registry) {
	t.Helper()
	reg := registrytest.New(t)
	cat, err := fixture.Seed(context.Background(), registrytest.Client(t), reg.Host)
	if err != nil {
		t.Fatal(err)
	}
	fs := mixintest.NewFeed(t)
	env := clitest.New(t)
	env.Vars = append(env.Vars, mixin.FeedEnv+"="+fs.URL, "XDG_CACHE_HOME="+filepath.Join(t.TempDir(), "cache"))
	env.WriteFile("ferry.yaml", `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: `+cat.Mixins+`
  - ref: `+cat.Diamond+`
mixins:
  - name: exec
    version: 1.x
platforms: [`+runtime.GOOS+"/"+runtime.GOARCH+`]
`)
	return env, cat, reg
}

// TestOutputJSONSchemas runs every reporting command with -o json and
// validates its stdout against the schema shipped for it; the same things
// carry the same names (source, version, digest, mirror), mixins included.
func TestOutputJSONSchemas(t *testing.T) {
	t.Parallel()
	env, cat, _ := outWorld(t)
	mirror := registrytest.New(t)
	to := mirror.Host + "/mirror"

	outJSON(t, env, "resolve", nil, "resolve")
	var locked map[string]any
	outJSON(t, env, "lock", &locked, "lock")
	if ms, _ := locked["mixins"].([]any); len(ms) == 0 {
		t.Errorf("lock -o json has no mixins: %v", locked["mixins"])
	}
	l, err := lock.Read(env.Path("ferry.lock"))
	if err != nil {
		t.Fatal(err)
	}
	npkgs := len(l.Resolved())

	var mrep mirrorJSON
	outJSON(t, env, "mirror", &mrep, "mirror", "--to", to)
	if len(mrep.Packages) != npkgs || len(mrep.Mixins) == 0 {
		t.Errorf("mirror -o json: %d packages (want %d), %d mixins", len(mrep.Packages), npkgs, len(mrep.Mixins))
	}
	for _, p := range mrep.Packages {
		if p.Tag == "" || !strings.HasPrefix(p.Mirror, to+"/") || strings.ContainsAny(strings.TrimPrefix(p.Mirror, mirror.Host), ":@") {
			t.Errorf("mirror -o json package %+v: want a version and mirror = the repository under %s", p, to)
		}
	}
	for _, m := range mrep.Mixins {
		if m.Mirror != to+"/porter-mixins/"+m.Name || m.Digest == "" || m.Version == "" {
			t.Errorf("mirror -o json mixin %+v: want mirror %s/porter-mixins/%s and its digest", m, to, m.Name)
		}
	}

	var vrep verifyJSON
	outJSON(t, env, "verify", &vrep, "verify")
	if !vrep.OK || vrep.Counts.Packages != npkgs {
		t.Errorf("verify -o json: %+v, want ok and %d packages", vrep, npkgs)
	}

	var irep installJSON
	outJSON(t, env, "install", &irep, "install", "--dest", "out", "--porter-home", "ph")
	if len(irep.Packages) != npkgs || len(irep.Mixins) == 0 || irep.PorterHome != "ph" {
		t.Errorf("install -o json: %d packages (want %d), %d mixins, porterHome %q", len(irep.Packages), npkgs, len(irep.Mixins), irep.PorterHome)
	}
	for _, p := range irep.Packages {
		if strings.Contains(p.Mirror, "@") || !strings.HasPrefix(p.Mirror, to+"/") {
			t.Errorf("install -o json: mirror %q, want the repository under %s", p.Mirror, to)
		}
	}
	// --porter-home alone reports too.
	var prep installJSON
	outJSON(t, env, "install", &prep, "install", "--porter-home", "ph2")
	if len(prep.Mixins) == 0 || len(prep.Packages) != 0 {
		t.Errorf("install --porter-home -o json: %+v", prep)
	}

	outJSON(t, env, "why", nil, "why", "db")
	env.MustRun("lock", cat.Diamond, "--lock", "other.lock")
	var drep diffJSON
	outJSON(t, env, "diff", &drep, "diff", "other.lock", "ferry.lock")
	if drep.Identical || len(drep.Changes) == 0 {
		t.Errorf("diff -o json: %+v", drep)
	}

	// The air gap: archive, offline check, import.
	var arep mirrorJSON
	outJSON(t, env, "mirror", &arep, "mirror", "--lock", "ferry.lock", "--to-archive", "closure.tar")
	if len(arep.Packages) != npkgs || len(arep.Mixins) == 0 {
		t.Errorf("mirror --to-archive -o json: %d packages, %d mixins", len(arep.Packages), len(arep.Mixins))
	}
	outJSON(t, env, "verify", nil, "verify", "--archive", "closure.tar")
	mirror2 := registrytest.New(t)
	var irep2 mirrorJSON
	outJSON(t, env, "mirror", &irep2, "mirror", "--from-archive", "closure.tar", "--to", mirror2.Host+"/m", "--lock", "imported.lock")
	if len(irep2.Packages) != npkgs || len(irep2.Mixins) == 0 {
		t.Errorf("mirror --from-archive -o json: %d packages, %d mixins", len(irep2.Packages), len(irep2.Mixins))
	}

	outJSON(t, env, "gc", nil, "gc")
	outJSON(t, env, "version", nil, "version")
}

// TestOutputStreams checks the stdout/stderr rule: results on stdout
// (also with --quiet and --log-level error), progress and logs on stderr,
// and --log-level warn|error silencing progress.
func TestOutputStreams(t *testing.T) {
	t.Parallel()
	env, _, _ := outWorld(t)
	mirror := registrytest.New(t)
	tests := []struct {
		name       string
		args       []string
		stdout     string
		stderrNone bool   // nothing at all on stderr
		stderrHas  string // on stderr
	}{
		// The bundle's versionless helm3 is locked at latest: a warning.
		{name: "lock", args: []string{"lock"}, stdout: "locked ", stderrHas: `mixin "helm3"`},
		{name: "lock --log-level warn", args: []string{"lock", "--log-level", "warn"}, stdout: "locked ", stderrHas: "warning"},
		{name: "lock --log-level error", args: []string{"lock", "--log-level", "error"}, stdout: "locked ", stderrNone: true},
		{name: "mirror --log-level error", args: []string{"mirror", "--to", mirror.Host + "/m", "--log-level", "error"}, stdout: "mirrored ", stderrNone: true},
		{name: "mirror --quiet", args: []string{"mirror", "--to", mirror.Host + "/m", "-q", "--log-level", "error"}, stdout: "mirrored ", stderrNone: true},
		{name: "verify", args: []string{"verify", "--log-level", "error"}, stdout: "verified ", stderrNone: true},
		{name: "install", args: []string{"install", "--dest", "out", "--log-level", "warn"}, stdout: "installed "},
	}
	for _, tt := range tests { // in order: each builds on the last
		r := env.MustRun(tt.args...)
		if !strings.Contains(r.Stdout, tt.stdout) {
			t.Errorf("%s: stdout lacks %q:\n%s", tt.name, tt.stdout, r.Stdout)
		}
		if strings.Contains(r.Stderr, tt.stdout) {
			t.Errorf("%s: the result %q is on stderr:\n%s", tt.name, tt.stdout, r.Stderr)
		}
		if tt.stderrNone && r.Stderr != "" {
			t.Errorf("%s: stderr is not empty:\n%s", tt.name, r.Stderr)
		}
		if tt.stderrHas != "" && !strings.Contains(r.Stderr, tt.stderrHas) {
			t.Errorf("%s: stderr lacks %q:\n%s", tt.name, tt.stderrHas, r.Stderr)
		}
	}
}

// TestOutputExitCodes checks PRODUCT.md's exit codes on every kind of bad
// input (2), with no registry contacted, beside a failure (1) and success.
func TestOutputExitCodes(t *testing.T) {
	t.Parallel()
	reg := registrytest.New(t)
	ref := reg.Host + "/acme/app"
	yaml := func(pkg string) string {
		return "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n" + pkg
	}
	tests := []struct {
		name  string
		files map[string]string
		args  []string
		code  int
		want  string
	}{
		{name: "unknown command", args: []string{"bogus"}, code: 2, want: `unknown command "bogus"`},
		{name: "misspelled command", args: []string{"resolv", ref + ":v1"}, code: 2, want: "did you mean resolve"},
		{name: "unknown flag", args: []string{"resolve", "--bogus", ref + ":v1"}, code: 2, want: "unknown flag"},
		{name: "bad flag value", args: []string{"mirror", "-j", "many", "--to", reg.Host}, code: 2, want: "invalid argument"},
		{name: "bad log level", args: []string{"version", "--log-level", "loud"}, code: 2, want: "--log-level"},
		{name: "bad output", args: []string{"verify", "-o", "yaml"}, code: 2, want: "-o yaml"},
		{name: "bad constraint in --version", args: []string{"resolve", ref, "--version", "not a constraint"}, code: 2, want: "invalid version constraint"},
		{name: "bad constraint in ferry.yaml", files: map[string]string{"ferry.yaml": yaml("  - ref: " + ref + "\n    version: '>>1'\n")}, args: []string{"lock"}, code: 2, want: "ferry.yaml"},
		{name: "ferry.yaml not YAML", files: map[string]string{"ferry.yaml": yaml("  - ref: [\n")}, args: []string{"resolve"}, code: 2, want: "ferry.yaml"},
		{name: "ferry.yaml unknown key", files: map[string]string{"ferry.yaml": yaml("  - ref: " + ref + ":v1\nbogus: 1\n")}, args: []string{"lock"}, code: 2, want: "bogus"},
		{name: "no ferry.yaml", args: []string{"lock"}, code: 2, want: "ferry.yaml"},
		{name: "bad lock for verify", files: map[string]string{"bad.lock": "packages: [\n"}, args: []string{"verify", "--lock", "bad.lock"}, code: 2, want: "bad.lock"},
		{name: "bad lock for install", files: map[string]string{"bad.lock": "packages: [\n"}, args: []string{"install", "--lock", "bad.lock", "--dest", "out"}, code: 2, want: "bad.lock"},
		{name: "bad lock for why", files: map[string]string{"bad.lock": "kind: Lock\n"}, args: []string{"why", "app", "--lock", "bad.lock"}, code: 2, want: "bad.lock"},
		{name: "bad lock for diff", files: map[string]string{"bad.lock": "packages: [\n"}, args: []string{"diff", "bad.lock", "bad.lock"}, code: 2, want: "bad.lock"},
		{name: "missing lock", args: []string{"mirror", "--lock", "none.lock", "--to", reg.Host + "/m"}, code: 2, want: "none.lock"},
		{name: "missing argument", args: []string{"diff", "a.lock"}, code: 2, want: "usage"},
		{name: "network failure", args: []string{"resolve", "127.0.0.1:1/acme/app:v1", "--retries", "0"}, code: 1, want: "127.0.0.1:1"},
		{name: "no such package", args: []string{"resolve", ref + ":v1"}, code: 1, want: ref},
		{name: "success", args: []string{"version"}, code: 0, want: "ferry "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := clitest.New(t)
			for name, content := range tt.files {
				env.WriteFile(name, content)
			}
			reg.Reset()
			env.Expect(tt.code, tt.args, tt.want)
			if reqs := reg.Requests(); tt.code == 2 && len(reqs) > 0 {
				t.Errorf("bad input, yet the registry was contacted: %v", reqs)
			}
		})
	}
}

// TestOutputSchemasReject checks that the schemas hold the names fixed
// across commands: the old spellings (`tag`, a count as `packages`,
// mixins left out) do not validate.
func TestOutputSchemasReject(t *testing.T) {
	t.Parallel()
	const d = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
	tests := []struct {
		schema, doc string
		ok          bool
	}{
		{"mirror", `{"to":"h/m","packages":[{"source":"s","mirror":"h/m/s","digest":"` + d + `","version":"v1","copied":1,"mounted":0,"skipped":0,"bytes":1}],"mixins":[]}`, true},
		{"mirror", `{"to":"h/m","packages":[{"source":"s","mirror":"h/m/s","digest":"` + d + `","tag":"v1","copied":1,"mounted":0,"skipped":0,"bytes":1}],"mixins":[]}`, false},
		{"mirror", `{"to":"h/m","packages":[]}`, false},
		{"verify", `{"ok":true,"deep":false,"counts":{"packages":1,"manifests":1,"blobs":1,"signatures":0},"problems":[]}`, true},
		{"verify", `{"packages":1,"manifests":1,"blobs":1,"deep":false,"problems":[]}`, false},
		{"install", `{"packages":[],"mixins":[{"name":"exec","version":"v1","source":"f","mirror":"h/m/porter-mixins/exec","digest":"` + d + `","binaries":["exec-linux-amd64"]}]}`, true},
		{"install", `{"packages":[],"mixins":[{"name":"exec","version":"v1","feed":"f","binaries":[]}]}`, false},
	}
	for _, tt := range tests {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		if err := outSchema(t, tt.schema).Validate(doc); (err == nil) != tt.ok {
			t.Errorf("schemas/%s.json on %s: error %v, want valid=%v", tt.schema, tt.doc, err, tt.ok)
		}
	}
}
