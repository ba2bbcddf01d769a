package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/indexrepo/indexrepotest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/kudo"
)

// kudoE2ERepo is a KUDO repository on 127.0.0.1: index.yaml and the
// package tarballs, as `kubectl kudo repo index` lays them out.
type kudoE2ERepo struct {
	srv *indexrepotest.Server
	URL string
	// ops are the published packages; tarballs their bytes, by file
	// name (NAME-VERSION.tgz).
	ops      []kudoE2EOperator
	tarballs map[string][]byte
}

// kudoE2EOperator is one package: its name and versions, the operators
// its KudoOperator tasks install (deps: by name, unpinned; tasks: as
// written), in its deploy plan's order, its parameters and templates.
// raw, when set, replaces operator.yaml.
type kudoE2EOperator struct {
	name, app, opv string
	deps           []string
	tasks          []kudo.Task
	params         []kudo.Parameter
	templates      map[string]string
	raw            string
}

// tag is the package's version tag (APP_OPV, or OPV alone).
func (o kudoE2EOperator) tag() string {
	if o.app == "" {
		return o.opv
	}
	return o.app + "_" + o.opv
}

// file is KUDO's tarball name, NAME-VERSION.tgz.
func (o kudoE2EOperator) file() string { return o.name + "-" + o.tag() + ".tgz" }

// kudoE2ETarball builds a package tarball as KUDO's writer does
// (pkg/kudoctl/packages/writer/writer_tar.go): operator.yaml, params.yaml
// and templates/ at its root, the deploy plan running every operator task
// in order.
func kudoE2ETarball(t *testing.T, o kudoE2EOperator) []byte {
	t.Helper()
	op := kudo.OperatorFile{APIVersion: kudo.APIVersion, Name: o.name, AppVersion: o.app, OperatorVersion: o.opv, KUDOVersion: "0.17.0"}
	for _, d := range o.deps {
		op.Tasks = append(op.Tasks, kudo.Task{Name: d, Kind: kudo.TaskKindKudoOperator, Spec: kudo.TaskSpec{Package: d}})
	}
	op.Tasks = append(op.Tasks, o.tasks...)
	var steps []kudo.StepSpec
	for _, tk := range op.Tasks {
		steps = append(steps, kudo.StepSpec{Name: tk.Name, Tasks: []string{tk.Name}})
	}
	var names []string
	for n := range o.templates {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		tn := "apply-" + strings.TrimSuffix(n, ".yaml")
		op.Tasks = append(op.Tasks, kudo.Task{Name: tn, Kind: "Apply", Spec: kudo.TaskSpec{Resources: []string{n}}})
		steps = append(steps, kudo.StepSpec{Name: tn, Tasks: []string{tn}})
	}
	op.Plans = map[string]kudo.PlanSpec{"deploy": {Strategy: "serial", Phases: []kudo.PhaseSpec{{Name: "main", Strategy: "serial", Steps: steps}}}}
	ob, err := yaml.Marshal(op)
	if err != nil {
		t.Fatal(err)
	}
	if o.raw != "" {
		ob = []byte(o.raw)
	}
	params := o.params
	if params == nil {
		params = []kudo.Parameter{}
	}
	pb, err := yaml.Marshal(kudo.ParamsFile{APIVersion: kudo.APIVersion, Parameters: params})
	if err != nil {
		t.Fatal(err)
	}
	files := []struct {
		name string
		data []byte
	}{{kudo.OperatorFileName, ob}, {kudo.ParamsFileName, pb}}
	for _, n := range names {
		files = append(files, struct {
			name string
			data []byte
		}{kudo.TemplatesDir + "/" + n, []byte(o.templates[n])})
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// newKudoE2ERepo serves ops below /v1 of a new server.
func newKudoE2ERepo(t *testing.T, ops []kudoE2EOperator) *kudoE2ERepo {
	t.Helper()
	srv := indexrepotest.New(t)
	r := &kudoE2ERepo{srv: srv, URL: srv.URL + "/v1", tarballs: map[string][]byte{}}
	r.publish(t, nil, ops...)
	return r
}

// publish adds ops to the repository and writes its index.yaml again;
// edit, when set, may change the index before it is written.
func (r *kudoE2ERepo) publish(t *testing.T, edit func(*kudo.IndexFile), ops ...kudoE2EOperator) {
	t.Helper()
	for _, o := range ops {
		data := kudoE2ETarball(t, o)
		r.srv.Put("/v1/"+o.file(), data)
		r.tarballs[o.file()] = data
	}
	r.ops = append(r.ops, ops...)
	idx := kudo.IndexFile{APIVersion: "v1", Entries: map[string][]*kudo.IndexVersion{}}
	for _, o := range r.ops {
		sum := sha256.Sum256(r.tarballs[o.file()])
		idx.Entries[o.name] = append(idx.Entries[o.name], &kudo.IndexVersion{Name: o.name, AppVersion: o.app, OperatorVersion: o.opv, URLs: []string{r.URL + "/" + o.file()}, Digest: hex.EncodeToString(sum[:])})
	}
	if edit != nil {
		edit(&idx)
	}
	ib, err := yaml.Marshal(idx)
	if err != nil {
		t.Fatal(err)
	}
	r.srv.Put("/v1/index.yaml", ib)
}

// TestE2EKudoPlan runs KEP-29's example tree (AA needs BB and CC; BB needs
// EE and GG) through the CLI: `ferry resolve -o plan` prints the KEP's
// order EE, GG, BB, CC, AA with the hierarchical instance names, and
// `ferry install` from a mirror writes kudo/plan.json in the same order,
// with --skip-instance on every dependency, and the repository's exact
// tarballs.
func TestE2EKudoPlan(t *testing.T) {
	t.Parallel()
	repo := newKudoE2ERepo(t, []kudoE2EOperator{
		{name: "aa", opv: "0.1.0", deps: []string{"bb", "cc"}},
		{name: "bb", opv: "0.2.0", deps: []string{"ee", "gg"}},
		{name: "cc", opv: "0.3.0"},
		{name: "ee", opv: "0.4.0"},
		{name: "gg", opv: "0.5.0"},
	})
	env := e2eEnv(t)
	env.WriteFile("ferry.yaml", fmt.Sprintf(`apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
operators:
  - package: aa
    repo: test
kudo:
  repositories: {test: %q}
`, repo.URL))
	type instance struct{ op, version, name, parent string }
	want := []instance{
		{"ee", "0.4.0", "aa.bb.ee", "aa.bb"},
		{"gg", "0.5.0", "aa.bb.gg", "aa.bb"},
		{"bb", "0.2.0", "aa.bb", "aa"},
		{"cc", "0.3.0", "aa.cc", "aa"},
		{"aa", "0.1.0", "aa", ""},
	}

	out := env.MustRun("resolve", "-o", "plan").Stdout
	t.Logf("ferry resolve -o plan:\n%s", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(want) {
		t.Fatalf("plan has %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		pat := fmt.Sprintf(`^%d\. kudo\.operator %s:%s@sha256:[0-9a-f]{64} instance %s`, i+1, regexp.QuoteMeta(kudo.SourcePrefix+repo.URL+"/"+w.op), regexp.QuoteMeta(w.version), regexp.QuoteMeta(w.name))
		if w.parent != "" {
			pat += regexp.QuoteMeta(" (dependency of " + w.parent + ")")
		}
		if !regexp.MustCompile(pat + "$").MatchString(lines[i]) {
			t.Errorf("plan line %d = %q\nwant %s", i+1, lines[i], pat+"$")
		}
	}

	mirror := registrytest.New(t)
	env.MustRun("lock")
	env.MustRun("mirror", "--to", mirror.Host+"/m")
	env.MustRun("install", "--dest", "out")
	b, err := os.ReadFile(env.Path(filepath.Join("out", kudo.InstallDir, kudo.InstallPlanFile)))
	if err != nil {
		t.Fatal(err)
	}
	var plan kudo.InstallPlan
	if err := json.Unmarshal(b, &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != len(want) {
		t.Fatalf("kudo/plan.json has %d steps, want %d:\n%s", len(plan.Steps), len(want), b)
	}
	for i, w := range want {
		st := plan.Steps[i]
		tarball := kudo.InstallDir + "/" + w.op + "-" + w.version + ".tgz"
		if st.Operator != w.op || st.Instance != w.name || st.Parent != w.parent || st.SkipInstance != (w.parent != "") || st.Tarball != tarball {
			t.Errorf("kudo/plan.json step %d = %+v, want %+v", i+1, st, w)
		}
		got, err := os.ReadFile(env.Path(filepath.Join("out", filepath.FromSlash(tarball))))
		if err != nil || !bytes.Equal(got, repo.tarballs[w.op+"-"+w.version+".tgz"]) {
			t.Errorf("%s is not the repository's tarball (%v)", tarball, err)
		}
	}
	if _, err := os.Stat(env.Path(filepath.Join("out", kudo.InstallDir, kudo.InstallScript))); err != nil {
		t.Errorf("no install script: %v", err)
	}
}
