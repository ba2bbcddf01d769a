package kudo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/indexrepo/indexrepotest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/resolve"
	"github.com/ferryhq/ferry/sourcemirror"
)

// realworldDir holds KUDO operators from kudobuilder/operators, unchanged
// (testdata/realworld/README.md).
const realworldDir = "../testdata/realworld/kudo"

// realworldFiles reads the package folder name as a map of its files.
func realworldFiles(t *testing.T, name string) map[string]string {
	t.Helper()
	root := filepath.Join(realworldDir, name)
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// realworldOperators are the vendored operators: their version tag and
// the images their templates deploy with params.yaml's defaults, read
// from the templates by KUDO's rules (every default a string, so
// `{{ if eq .Params.X "true" }}` takes the branch the default says).
// cowsay's deployment.yaml reads a pipe's output (.Pipes.indexHtml), which
// exists only while KUDO runs the plan: its literal image: fields are read
// (a warning says so).
var realworldOperators = []struct {
	name, tag string
	images    []string
	warnings  int
}{
	{"cassandra", "3.11.6_1.0.1", []string{"bitnami/kubectl:1.18.4", "mesosphere/cassandra:3.11.6-1.0.1", "mesosphere/kudo-cassandra-recovery:0.0.2-1.0.1"}, 0},
	{"confluent-rest-proxy", "5.3.2_0.3.0", []string{"confluentinc/cp-kafka-rest:5.3.2"}, 0},
	{"confluent-schema-registry", "5.3.2_0.3.0", []string{"confluentinc/cp-schema-registry:5.3.2"}, 0},
	{"cowsay", "0.2.0", []string{"busybox", "nginx:1.7.9"}, 1},
	{"elastic", "7.0.0_0.2.2", []string{"busybox", "elasticsearch:7.0.0"}, 0},
	{"first-operator", "0.2.0", []string{"nginx:1.7.9"}, 0},
	{"flink", "1.7.2_0.2.1", []string{"kudobuilder/flink:1.7.2"}, 0},
	{"flink-demo", "0.1.6", []string{"bash", "dcoslabs/flink-demo-actor:0.3", "mesosphere/flink-generator:0.1"}, 0},
	{"kafka", "2.5.1_1.3.2", nil, 0}, // checked below: many templates
	{"mysql", "5.7_0.3.0", []string{"mysql:5.7"}, 0},
	{"rabbitmq", "3.8.0_0.1.1", []string{"rabbitmq:3.8"}, 0},
	{"redis", "5.0.1_0.2.0", []string{"redis:5.0.1-alpine"}, 0},
	{"spark", "3.0.0_1.1.0", []string{"mesosphere/kudo-spark-operator:3.0.0-1.1.0"}, 0},
	{"zookeeper", "3.6.2_0.3.3", []string{"zookeeper:3.6.2"}, 0},
}

// TestRealworldOperators reads every vendored operator as a folder and as
// a tarball, renders its templates with its defaults as KUDO passes them,
// and checks the images and the warnings.
func TestRealworldOperators(t *testing.T) {
	for _, tt := range realworldOperators {
		t.Run(tt.name, func(t *testing.T) {
			p, err := LoadDir(filepath.Join(realworldDir, tt.name))
			if err != nil {
				t.Fatal(err)
			}
			if p.Version() != tt.tag {
				t.Errorf("version = %s, want %s", p.Version(), tt.tag)
			}
			pa, err := LoadArchive(tgz(t, realworldFiles(t, tt.name), false))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(pa.Templates, p.Templates) || pa.Version() != p.Version() {
				t.Error("the tarball reads unlike the folder")
			}
			imgs, warnings := Images(p, "")
			if len(warnings) != tt.warnings {
				t.Errorf("warnings = %q, want %d", warnings, tt.warnings)
			}
			set := map[string]bool{}
			for _, u := range imgs {
				set[u.Ref] = true
			}
			var got []string
			for r := range set {
				got = append(got, r)
			}
			sort.Strings(got)
			if tt.images == nil {
				if len(got) == 0 {
					t.Error("no images")
				}
				t.Logf("images: %q", got)
				return
			}
			if !reflect.DeepEqual(got, tt.images) {
				t.Errorf("images = %q\nwant %q", got, tt.images)
			}
		})
	}
}

// TestParamValue pins KUDO's parameter passing (ParamValue's citations):
// defaults become strings through JSON's numbers, arrays and maps stay
// structured, no default is "".
func TestParamValue(t *testing.T) {
	tests := []struct {
		yaml string
		want any
	}{
		{"{name: a, default: 3}", "3"},
		{"{name: a, default: 1000000}", "1e+06"},
		{"{name: a, default: 0.5}", "0.5"},
		{"{name: a, default: 1.0}", "1"},
		{"{name: a, default: true}", "true"},
		{"{name: a, default: \"true\"}", "true"},
		{"{name: a, type: boolean, default: false}", "false"},
		{"{name: a, type: integer, default: 8080}", "8080"},
		{"{name: a}", ""},
		{"{name: a, default: [1, b]}", "[1 b]"},
		{"{name: a, type: array, default: [1, b]}", []any{float64(1), "b"}},
		{"{name: a, type: map, default: {k: 2}}", map[string]any{"k": float64(2)}},
		{"{name: a, type: array}", []any(nil)},
	}
	for _, tt := range tests {
		var p Parameter
		if err := yaml.Unmarshal([]byte(tt.yaml), &p); err != nil {
			t.Fatal(err)
		}
		if got := ParamValue(p); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %#v, want %#v", tt.yaml, got, tt.want)
		}
	}
	// A real template tests a boolean as a string: spark renders.
	p, err := LoadDir(filepath.Join(realworldDir, "spark"))
	if err != nil {
		t.Fatal(err)
	}
	if _, w := Images(p, ""); len(w) != 0 {
		t.Fatalf("spark: %q", w)
	}
}

// realRepo serves the vendored operators as one KUDO repository, each
// tarball built from its unchanged files as `kubectl kudo package create`
// lays them out.
func realRepo(t *testing.T, names []string) string {
	t.Helper()
	srv := indexrepotest.New(t)
	base := srv.URL + "/v1"
	idx := &IndexFile{APIVersion: "v1", Entries: map[string][]*IndexVersion{}}
	for _, n := range names {
		data := tgz(t, realworldFiles(t, n), false)
		p, err := LoadArchive(data)
		if err != nil {
			t.Fatal(err)
		}
		file := p.Operator.Name + "-" + p.Version() + ".tgz"
		srv.Put("/v1/"+file, data)
		sum := sha256.Sum256(data)
		idx.Entries[p.Operator.Name] = append(idx.Entries[p.Operator.Name], &IndexVersion{
			Name: p.Operator.Name, AppVersion: p.Operator.AppVersion, OperatorVersion: p.Operator.OperatorVersion,
			URLs: []string{base + "/" + file}, Digest: hex.EncodeToString(sum[:]),
		})
	}
	ib, err := yaml.Marshal(idx)
	if err != nil {
		t.Fatal(err)
	}
	srv.Put("/v1/index.yaml", ib)
	return base
}

// realworldCommunity is the KUDO community repository, the source every
// realworld package is named under; a loopback server mirrors it.
const realworldCommunity = "https://kudo-repository.storage.googleapis.com/v1"

// realworldMirrors reads the community repository at base and Docker Hub
// and Quay at reg's dockerhub/ and quay/, offline (ferry.yaml `mirrors:`
// and --offline, as cmd/ferry builds them).
func realworldMirrors(t *testing.T, base, reg string) sourcemirror.Registries {
	t.Helper()
	table, err := sourcemirror.New([]sourcemirror.Entry{
		{Prefix: realworldCommunity, Locations: []string{base}},
		{Prefix: "docker.io", Locations: []string{reg + "/dockerhub"}},
		{Prefix: "quay.io", Locations: []string{reg + "/quay"}},
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	return sourcemirror.Registries{Inner: registrytest.Client(t), Table: table}
}

// TestRealworldResolve publishes the vendored operators on a loopback
// mirror of the KUDO community repository and resolves each by name,
// offline, through source mirrors: the images they deploy are read from
// a loopback registry mirroring docker.io and quay.io, holding a small
// artifact per image. The closure names the community repository and
// docker.io/quay.io, never the mirrors: the operator at its only version
// and its images; the plan one instance named after the operator
// (`kubectl kudo install NAME`). flink-demo, the one operator with
// dependencies, pins kafka 2.5.0_1.3.1, zookeeper 3.4.14_0.3.1 and flink
// 1.7.2_0.2.1; this repository has kafka 2.5.1_1.3.2 and zookeeper
// 3.6.2_0.3.3 only, so, as KUDO's FindFirstMatch, resolution fails naming
// what was asked and what exists (cmd/ferry's TestRealworldKudoLockOffline
// publishes the pinned versions too). Its local graph gives KEP-29's
// order and names: the deploy plan's order (zookeeper, kafka, flink),
// each instance under the parent with the task's instanceName.
func TestRealworldResolve(t *testing.T) {
	var names []string
	for _, o := range realworldOperators {
		names = append(names, o.name)
	}
	base := realRepo(t, names)
	reg := registrytest.New(t)
	regs := realworldMirrors(t, base, reg.Host)
	ctx := context.Background()
	for _, tt := range realworldOperators {
		if tt.name == "flink-demo" {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			p, err := LoadDir(filepath.Join(realworldDir, tt.name))
			if err != nil {
				t.Fatal(err)
			}
			op, err := New().walk(p, realworldCommunity, nil)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, d := range op.imageDeps() {
				r, err := ociref.ParseNormalized(d.Ref, "")
				if err != nil {
					t.Fatal(err)
				}
				at := map[string]string{"docker.io": "/dockerhub/", "quay.io": "/quay/"}[r.Registry]
				pushImage(t, reg.Host+at+strings.TrimPrefix(r.Repo(), r.Registry+"/")+":"+r.Tag)
				want = append(want, "image "+r.Repo()+":"+r.Tag)
			}
			want = append(want, "kudo.operator "+Source(realworldCommunity, p.Operator.Name)+":"+tt.tag)
			g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: Source(realworldCommunity, p.Operator.Name), Format: "kudo"}},
				resolve.Options{Registry: regs, Formats: []format.Format{New()}})
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			var got []string
			for _, pk := range g.Packages {
				got = append(got, pk.Kind+" "+pk.Source+":"+pk.Version)
			}
			sort.Strings(got)
			sort.Strings(want)
			want = slices.Compact(want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("closure:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			inst, err := New().PlanInstances(g, g.Roots[0])
			if err != nil {
				t.Fatal(err)
			}
			if len(inst) != 1 || inst[0].Name != p.Operator.Name {
				t.Fatalf("plan = %+v", inst)
			}
		})
	}

	p, err := LoadDir(filepath.Join(realworldDir, "flink-demo"))
	if err != nil {
		t.Fatal(err)
	}
	op, err := New().walk(p, realworldCommunity, nil)
	if err != nil {
		t.Fatal(err)
	}
	lg, root := LocalGraph(op)
	steps, err := Plan(lg, root, "")
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for _, s := range steps {
		plan = append(plan, s.Instance+"<"+s.ParameterFile)
	}
	if want := "flink-demo.zk<zookeeper-params.yaml flink-demo.kafka<kafka-params.yaml flink-demo.flink<flink-params.yaml flink-demo<"; strings.Join(plan, " ") != want {
		t.Errorf("plan = %s\nwant %s", strings.Join(plan, " "), want)
	}
	var roots []resolve.Root
	for _, d := range op.dependencies() {
		roots = append(roots, resolve.Root{Ref: d.Ref, Constraint: d.Constraint, Format: "kudo"})
	}
	_, err = resolve.Resolve(ctx, roots[:1], resolve.Options{Registry: regs, Formats: []format.Format{New()}})
	if err == nil || !strings.Contains(err.Error(), "3.6.2_0.3.3") {
		t.Fatalf("zookeeper 3.4.14_0.3.1 from a repository with 3.6.2_0.3.3 only: %v", err)
	}
	t.Logf("as KUDO: %v", err)
}
