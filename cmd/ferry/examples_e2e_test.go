package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/kudo"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

// examplesDir holds the runnable ferry.yaml of every format
// (examples/README.md).
var examplesDir = filepath.Join("..", "..", "examples")

// exampleWorld publishes, on the loopback registry src (and, for KUDO, an
// HTTP repository), what an example names under its public names: the
// registry holds HOST/PATH for every HOST the example reads, and the
// returned flags are the source mirrors (--mirror-source) that send each
// HOST there. want lists the packages the lock must hold, as
// SOURCE:VERSION, sorted; env may be adjusted (a mixin feed).
type exampleWorld func(t *testing.T, src *registrytest.Registry, env *clitest.Env) (mirrors []string, want []string)

// TestExamples runs every example end to end, as its header says a user
// runs it: ferry lock --offline, ferry mirror, ferry verify --deep, with
// every public host served by a loopback registry through a source mirror.
// Each example is checked against the ferry.yaml JSON Schema first.
func TestExamples(t *testing.T) {
	t.Parallel()
	worlds := map[string]exampleWorld{
		"images":     exampleImages,
		"helm":       exampleHelm,
		"crossplane": exampleCrossplane,
		"porter":     examplePorter,
		"kudo":       exampleKudo,
		"mixins":     exampleMixins,
	}
	entries, err := os.ReadDir(examplesDir)
	if err != nil {
		t.Fatal(err)
	}
	schema := ferryYAMLSchema(t)
	var seen []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		seen = append(seen, name)
		world, ok := worlds[name]
		if !ok {
			t.Errorf("examples/%s has no world in TestExamples: every example is run", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(examplesDir, name)
			data, err := os.ReadFile(filepath.Join(dir, "ferry.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(data, []byte("# yaml-language-server: $schema=../../schemas/ferry.schema.json\n")) {
				t.Errorf("examples/%s/ferry.yaml does not start with the yaml-language-server schema comment", name)
			}
			validateFerryYAML(t, schema, data)

			env := clitest.New(t)
			files, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				b, err := os.ReadFile(filepath.Join(dir, f.Name()))
				if err != nil {
					t.Fatal(err)
				}
				env.WriteFile(f.Name(), string(b))
			}
			src := registrytest.New(t)
			mirrors, want := world(t, src, env)
			var flags []string
			for _, m := range mirrors {
				flags = append(flags, "--mirror-source", m)
			}
			env.MustRun(append([]string{"lock", "--offline"}, flags...)...)
			l, err := lock.Read(env.Path("ferry.lock"))
			if err != nil {
				t.Fatal(err)
			}
			if got := exampleLocked(t, l); !slices.Equal(got, want) {
				t.Fatalf("examples/%s locked\n  %s\nwant\n  %s", name, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			dst := registrytest.New(t)
			env.MustRun(append([]string{"mirror", "--offline", "--to", dst.Host + "/mirror"}, flags...)...)
			env.MustRun("verify", "--deep")
		})
	}
	for name := range worlds {
		if !slices.Contains(seen, name) {
			t.Errorf("TestExamples has a world for examples/%s, which does not exist", name)
		}
	}
}

// exampleLocked is the lock's packages as SOURCE:VERSION and its mixins
// as mixin:NAME:VERSION, sorted.
func exampleLocked(t *testing.T, l *lock.Lock) []string {
	t.Helper()
	var out []string
	for _, p := range l.Packages {
		out = append(out, p.Source+":"+p.Version)
	}
	var mixins []mixin.Locked
	if _, err := l.Sections.Decode("mixins", &mixins); err != nil {
		t.Fatal(err)
	}
	for _, m := range mixins {
		out = append(out, "mixin:"+m.Name+":"+m.Version)
	}
	sort.Strings(out)
	return out
}

// ferryYAMLSchema compiles schemas/ferry.schema.json.
func ferryYAMLSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "schemas", "ferry.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("file:///ferry.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("file:///ferry.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validateFerryYAML checks a ferry.yaml against the schema, as the YAML
// language server does: the YAML read as JSON.
func validateFerryYAML(t *testing.T, s *jsonschema.Schema, data []byte) {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(doc); err != nil {
		t.Errorf("does not match schemas/ferry.schema.json: %v", err)
	}
}

// TestFerryYAMLSchema pins what the schema refuses, as ferry does: an
// unknown key, a wrong type, an unknown strategy.
func TestFerryYAMLSchema(t *testing.T) {
	t.Parallel()
	s := ferryYAMLSchema(t)
	for _, tc := range []struct {
		name, yaml string
		ok         bool
	}{
		{"minimal", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages: [{ref: ghcr.io/acme/app:v1}]\n", true},
		{"trust as a list", "trust: [{match: ghcr.io/acme/, keys: [k.pub], required: true}]\n", true},
		{"use forms", "use: {db: ghcr.io/acme/db:v1, cache: {ref: ghcr.io/acme/c:v2, force: true}}\n", true},
		{"mirrors forms", "mirrors: {docker.io: registry.internal/hub, quay.io: [a, b]}\n", true},
		{"unknown top-level key", "packagez: []\n", false},
		{"unknown image key", "images: [{ref: nginx, tag: [1]}]\n", false},
		{"newest not a number", "images: [{ref: nginx, newest: three}]\n", false},
		{"unknown strategy", "porter: {versionStrategy: newest}\n", false},
		{"trust default", "trust: {default: deny}\n", false},
		{"package without ref or path", "packages: [{version: '1.x'}]\n", false},
		{"wrong kind", "kind: Lock\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			if err := yaml.Unmarshal([]byte(tc.yaml), &v); err != nil {
				t.Fatal(err)
			}
			j, _ := json.Marshal(v)
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(doc); (err == nil) != tc.ok {
				t.Errorf("valid = %v, want %v (%v)", err == nil, tc.ok, err)
			}
		})
	}
}

// pushExampleImage publishes an image at src/HOST/PATH:TAG, its content
// seeded by the public name.
func pushExampleImage(t *testing.T, src *registrytest.Registry, public string) {
	t.Helper()
	ctx := context.Background()
	repo, tag, _ := strings.Cut(public[strings.LastIndex(public, "/")+1:], ":")
	path := public[:strings.LastIndex(public, "/")+1] + repo
	r := registrytest.Repository(t, registrytest.Client(t), src.Host+"/"+path)
	d, err := fixture.PushImage(ctx, r, "example/"+public, 128)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Tag(ctx, d, tag); err != nil {
		t.Fatal(err)
	}
}

// hostMirrors maps each host to its folder of src.
func hostMirrors(src *registrytest.Registry, hosts ...string) []string {
	var out []string
	for _, h := range hosts {
		out = append(out, h+"="+src.Host+"/"+h)
	}
	return out
}

func exampleImages(t *testing.T, src *registrytest.Registry, env *clitest.Env) ([]string, []string) {
	for _, ref := range []string{
		"docker.io/library/nginx:1.25.5", "docker.io/library/nginx:1.26.2", "docker.io/library/nginx:1.27.3",
		"docker.io/library/nginx:1.27.4-alpine", "docker.io/library/nginx:1.27.4", "docker.io/library/nginx:latest",
		"quay.io/prometheus/node-exporter:v1.8.2",
		"registry.k8s.io/pause:3.10",
		"ghcr.io/fluxcd/source-controller:v1.4.1",
	} {
		pushExampleImage(t, src, ref)
	}
	return hostMirrors(src, "docker.io", "quay.io", "registry.k8s.io", "ghcr.io"), []string{
		"docker.io/library/nginx:1.27.3",
		"docker.io/library/nginx:1.27.4",
		"ghcr.io/fluxcd/source-controller:v1.4.1",
		"quay.io/prometheus/node-exporter:v1.8.2",
		"registry.k8s.io/pause:3.10",
	}
}

func exampleHelm(t *testing.T, src *registrytest.Registry, env *clitest.Env) ([]string, []string) {
	tmpl := map[string]string{
		"master.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: {{ .Release.Name }}-master}
spec:
  template:
    spec:
      containers:
        - name: redis
          image: {{ .Values.image.registry }}/{{ .Values.image.repository }}:{{ .Values.image.tag }}
`,
		"sentinel.yaml": `{{- if eq .Values.architecture "replication" }}
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: {{ .Release.Name }}-node}
spec:
  template:
    spec:
      containers:
        - name: sentinel
          image: docker.io/bitnami/redis-sentinel:7.4.1
{{- end }}
`,
	}
	for _, v := range []string{"19.6.4", "20.1.0", "20.2.1", "21.0.0"} {
		ch := charttest.Chart(charttest.ChartSpec{Name: "redis", Version: v, AppVersion: "7.4.1", Templates: tmpl,
			Values: map[string]any{"architecture": "replication", "image": map[string]any{"registry": "docker.io", "repository": "bitnami/redis", "tag": "7.4.1"}}})
		tgz, err := charttest.ChartArchive(ch)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := charttest.PushChart(tgz, src.Host+"/docker.io/bitnamicharts", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
	}
	pushExampleImage(t, src, "docker.io/bitnami/redis:7.4.1")
	return hostMirrors(src, "docker.io"), []string{
		"docker.io/bitnami/redis:7.4.1",
		"registry-1.docker.io/bitnamicharts/redis:20.2.1",
	}
}

func exampleCrossplane(t *testing.T, src *registrytest.Registry, env *clitest.Env) ([]string, []string) {
	ctx := context.Background()
	c := registrytest.Client(t)
	push := func(p fixture.Xpkg) {
		r := registrytest.Repository(t, c, src.Host+"/xpkg.upbound.io/upbound/"+p.Name)
		if _, err := fixture.PushXpkg(ctx, r, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"v1.0.0", "v1.3.0", "v2.0.0"} {
		push(fixture.Xpkg{Kind: "Configuration", Name: "platform-ref-aws", Tags: []string{v},
			Annotations: map[string]string{"example/version": v},
			DependsOn: []fixture.XpkgDependency{
				{APIVersion: "pkg.crossplane.io/v1", Kind: "Provider", Package: "xpkg.upbound.io/upbound/provider-aws-s3", Version: ">=v1.1.0"},
				{APIVersion: "pkg.crossplane.io/v1beta1", Kind: "Function", Package: "xpkg.upbound.io/upbound/function-patch-and-transform", Version: ">=v0.7.0"},
			}})
	}
	for _, v := range []string{"v1.0.0", "v1.14.0"} {
		push(fixture.Xpkg{Kind: "Provider", Name: "provider-aws-s3", Tags: []string{v}, Annotations: map[string]string{"example/version": v}})
	}
	push(fixture.Xpkg{Kind: "Function", Name: "function-patch-and-transform", Tags: []string{"v0.7.0"}})
	return hostMirrors(src, "xpkg.upbound.io"), []string{
		"xpkg.upbound.io/upbound/function-patch-and-transform:v0.7.0",
		"xpkg.upbound.io/upbound/platform-ref-aws:v1.3.0",
		"xpkg.upbound.io/upbound/provider-aws-s3:v1.14.0",
	}
}

func examplePorter(t *testing.T, src *registrytest.Registry, env *clitest.Env) ([]string, []string) {
	ctx := context.Background()
	c := registrytest.Client(t)
	push := func(name string, b fixture.Bundle) {
		public := "ghcr.io/getporter/examples/" + name
		if _, err := fixture.PushBundle(ctx, registrytest.Repository(t, c, src.Host+"/"+public), public, b); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"0.1.0", "0.1.2", "0.2.0"} {
		push("mysql", fixture.Bundle{Name: "mysql", Version: v, Tags: []string{"v" + v}, Images: []string{"mysql"}})
	}
	push("wordpress", fixture.Bundle{Name: "wordpress", Version: "0.2.0", Tags: []string{"v0.2.0"}, Images: []string{"wordpress"},
		Deps: []fixture.Dep{{Name: "mysql", Bundle: "ghcr.io/getporter/examples/mysql:v0.1.0", Ranges: []string{"0.1.x"}}}})
	return hostMirrors(src, "ghcr.io"), []string{
		"ghcr.io/getporter/examples/mysql:v0.1.2",
		"ghcr.io/getporter/examples/wordpress:v0.2.0",
	}
}

func exampleKudo(t *testing.T, src *registrytest.Registry, env *clitest.Env) ([]string, []string) {
	for _, ref := range []string{"docker.io/mesosphere/kafka:2.5.1", "docker.io/library/zookeeper:3.6.2"} {
		pushExampleImage(t, src, ref)
	}
	img := func(image string) map[string]string {
		return map[string]string{"statefulset.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Name }}
  namespace: {{ .Namespace }}
spec:
  template:
    spec:
      containers:
        - name: main
          image: ` + image + `
`}
	}
	repo := newKudoE2ERepo(t, []kudoE2EOperator{
		{name: "zookeeper", app: "3.6.2", opv: "0.3.3", templates: img("docker.io/zookeeper:{{ .AppVersion }}")},
		{
			name: "kafka", app: "2.5.1", opv: "1.3.3",
			tasks:     []kudo.Task{{Name: "zookeeper", Kind: kudo.TaskKindKudoOperator, Spec: kudo.TaskSpec{Package: "zookeeper"}}},
			templates: img("docker.io/mesosphere/kafka:{{ .AppVersion }}"),
		},
	})
	mirrors := append(hostMirrors(src, "docker.io"), "https://kudo-repository.storage.googleapis.com/v1="+repo.URL)
	return mirrors, []string{
		"docker.io/library/zookeeper:3.6.2",
		"docker.io/mesosphere/kafka:2.5.1",
		"kudo+https://kudo-repository.storage.googleapis.com/v1/kafka:2.5.1_1.3.3",
		"kudo+https://kudo-repository.storage.googleapis.com/v1/zookeeper:3.6.2_0.3.3",
	}
}

func exampleMixins(t *testing.T, src *registrytest.Registry, env *clitest.Env) ([]string, []string) {
	fs := mixintest.NewFeed(t)
	env.Vars = append(env.Vars, mixin.FeedEnv+"="+fs.URL, "XDG_CACHE_HOME="+filepath.Join(t.TempDir(), "cache"))
	return nil, []string{"mixin:exec:v1.2.3"}
}
