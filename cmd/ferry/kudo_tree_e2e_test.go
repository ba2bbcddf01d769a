package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/kudo"
)

// writeKudoFolder writes a KUDO package folder at dir: operator.yaml
// whose deploy plan runs tasks (KudoOperator tasks on relative folders)
// then an Apply task deploying image, and params.yaml.
func writeKudoFolder(t *testing.T, env interface {
	WriteFile(name, content string) string
}, dir, name string, tasks []kudo.Task, image string) {
	t.Helper()
	op := kudo.OperatorFile{APIVersion: kudo.APIVersion, Name: name, OperatorVersion: "0.1.0", KUDOVersion: "0.17.0", Tasks: tasks}
	var steps []kudo.StepSpec
	for _, tk := range tasks {
		steps = append(steps, kudo.StepSpec{Name: tk.Name, Tasks: []string{tk.Name}})
	}
	op.Tasks = append(op.Tasks, kudo.Task{Name: "app", Kind: "Apply", Spec: kudo.TaskSpec{Resources: []string{"deployment.yaml"}}})
	steps = append(steps, kudo.StepSpec{Name: "app", Tasks: []string{"app"}})
	op.Plans = map[string]kudo.PlanSpec{"deploy": {Strategy: "serial", Phases: []kudo.PhaseSpec{{Name: "main", Strategy: "serial", Steps: steps}}}}
	ob, err := yaml.Marshal(op)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := yaml.Marshal(kudo.ParamsFile{APIVersion: kudo.APIVersion, Parameters: []kudo.Parameter{}})
	if err != nil {
		t.Fatal(err)
	}
	env.WriteFile(filepath.Join(dir, kudo.OperatorFileName), string(ob))
	env.WriteFile(filepath.Join(dir, kudo.ParamsFileName), string(pb))
	env.WriteFile(filepath.Join(dir, kudo.TemplatesDir, "deployment.yaml"), `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Name }}
spec:
  template:
    spec:
      containers:
        - name: main
          image: `+image+"\n")
}

// TestE2EKudoFolderTree is KEP-29's development case: an operator
// folder whose KudoOperator tasks name relative folders
// (keps/0029-operator-dependencies.md, "package: ./relative/folder";
// kudobuilder/kudo pkg/kudoctl/packages/resolver/resolver.go resolves
// them against the parent's folder), laid out as the KEP's tree (AA needs
// BB and CC; BB needs EE and GG). Locked from the ROOT folder, the lock's
// kudo.local keeps the tree and every template's image is locked;
// mirrored, then installed with the image registry stopped, kudo/plan.json
// and install.sh give the operators in the KEP's order EE, GG, BB, CC, AA
// with its instance names (aa.bb.ee) and the names KUDO's server gives
// them (aa-bb-ee, pkg/engine/task/task_kudo_operator.go), as resolve -o
// plan does; the install carries the tree as kudo/aa-0.1.0.tgz, and its
// install.sh runs with the source folders removed.
func TestE2EKudoFolderTree(t *testing.T) {
	t.Parallel()
	src := registrytest.New(t)
	c := registrytest.Client(t)
	ctx := context.Background()
	img := map[string]string{}
	for _, n := range []string{"aa", "bb", "cc", "ee", "gg"} {
		repo := registrytest.Repository(t, c, src.Host+"/acme/"+n)
		desc, err := fixture.PushImage(ctx, repo, "kudo-"+n, 128)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.Tag(ctx, desc, "1.0"); err != nil {
			t.Fatal(err)
		}
		img[n] = src.Host + "/acme/" + n + ":1.0"
	}
	env := e2eEnv(t)
	dep := func(n string) kudo.Task {
		return kudo.Task{Name: n, Kind: kudo.TaskKindKudoOperator, Spec: kudo.TaskSpec{Package: "./" + n}}
	}
	writeKudoFolder(t, env, "aa", "aa", []kudo.Task{dep("bb"), dep("cc")}, img["aa"])
	writeKudoFolder(t, env, "aa/bb", "bb", []kudo.Task{dep("ee"), dep("gg")}, img["bb"])
	writeKudoFolder(t, env, "aa/cc", "cc", nil, img["cc"])
	writeKudoFolder(t, env, "aa/bb/ee", "ee", nil, img["ee"])
	writeKudoFolder(t, env, "aa/bb/gg", "gg", nil, img["gg"])
	// resolve -o plan gives the instances ferry install's plan.json
	// gives: the images, then the tree's operators in KEP-29's order.
	var planned []string
	for _, line := range strings.Split(strings.TrimSpace(env.MustRun("resolve", "-o", "plan", "./aa").Stdout), "\n") {
		if !strings.Contains(line, " image ") {
			planned = append(planned, line)
		}
	}
	wantPlan := []string{
		"6. kudo.operator ee 0.1.0 (local ./ee) instance aa.bb.ee (dependency of aa.bb)",
		"7. kudo.operator gg 0.1.0 (local ./gg) instance aa.bb.gg (dependency of aa.bb)",
		"8. kudo.operator bb 0.1.0 (local ./bb) instance aa.bb (dependency of aa)",
		"9. kudo.operator cc 0.1.0 (local ./cc) instance aa.cc (dependency of aa)",
		"10. kudo.operator aa 0.1.0 (local ./aa) instance aa",
	}
	if !slices.Equal(planned, wantPlan) {
		t.Errorf("resolve -o plan:\n%s\nwant\n%s", strings.Join(planned, "\n"), strings.Join(wantPlan, "\n"))
	}
	env.MustRun("lock", "./aa")
	l := e2eReadLock(t, env, "ferry.lock")
	var images []string
	for _, p := range l.Resolved() {
		images = append(images, p.Kind+" "+p.Source)
	}
	slices.Sort(images)
	var want []string
	for _, n := range []string{"aa", "bb", "cc", "ee", "gg"} {
		want = append(want, "image "+src.Host+"/acme/"+n)
	}
	if !slices.Equal(images, want) {
		t.Fatalf("locked %v, want %v", images, want)
	}
	var sec kudo.LockedSection
	if ok, err := l.Section(kudo.LockSection, &sec); !ok || err != nil || len(sec.Local) != 1 {
		t.Fatalf("kudo section: %v %v %+v", ok, err, sec)
	}
	if lo := sec.Local[0]; lo.Name != "aa" || len(lo.Tasks) != 2 || lo.Tasks[0].Local == nil || lo.Tasks[0].Local.Name != "bb" || len(lo.Tasks[0].Local.Tasks) != 2 || lo.Tasks[1].Local == nil || lo.Tasks[1].Local.Name != "cc" {
		t.Fatalf("kudo.local = %+v", lo)
	}
	mirror := registrytest.New(t)
	env.MustRun("mirror", "--to", mirror.Host+"/m")
	src.Stop()
	env.MustRun("install", "--dest", "out")
	var plan kudo.InstallPlan
	e2eJSONFile(t, env.Path(filepath.Join("out", kudo.InstallDir, kudo.InstallPlanFile)), &plan)
	type step struct{ op, local, tarball, folder, instance, cluster, parent string }
	const tarball = "kudo/aa-0.1.0.tgz"
	wantSteps := []step{
		{"ee", "./ee", tarball, "bb/ee", "aa.bb.ee", "aa-bb-ee", "aa.bb"},
		{"gg", "./gg", tarball, "bb/gg", "aa.bb.gg", "aa-bb-gg", "aa.bb"},
		{"bb", "./bb", tarball, "bb", "aa.bb", "aa-bb", "aa"},
		{"cc", "./cc", tarball, "cc", "aa.cc", "aa-cc", "aa"},
		{"aa", "./aa", tarball, "", "aa", "aa", ""},
	}
	var got []step
	for _, st := range plan.Steps {
		got = append(got, step{st.Operator, st.Local, st.Tarball, st.Folder, st.Instance, st.ClusterInstance, st.Parent})
		if st.SkipInstance != (st.Parent != "") {
			t.Errorf("step %d: skipInstance %v", st.Order, st.SkipInstance)
		}
	}
	if !slices.Equal(got, wantSteps) {
		t.Fatalf("kudo/plan.json\n%+v\nwant\n%+v", got, wantSteps)
	}
	script := env.ReadFile("out/kudo/install.sh")
	if !strings.Contains(script, "'kudo' 'install' './kudo/aa-0.1.0.tgz' '--instance' 'aa'") || !strings.Contains(script, "# 1. ee 0.1.0 as instance aa.bb.ee") {
		t.Errorf("kudo/install.sh:\n%s", script)
	}
	// The install carries the tree: with the source folders gone, the
	// tarball is the package aa packed as kubectl kudo package create
	// packs it (its folder dependencies in it), and install.sh finds
	// every file it names.
	packed, err := kudo.PackFolder(env.Path("aa"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(env.Path("aa")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(env.Path("out/" + tarball)); err != nil || !bytes.Equal(b, packed) {
		t.Errorf("out/%s is not aa packed (%v)", tarball, err)
	}
	if calls := runKudoScript(t, env.Path("out/kudo/install.sh")); !slices.Equal(calls, []string{"kudo install ./kudo/aa-0.1.0.tgz --instance aa"}) {
		t.Errorf("install.sh ran %q", calls)
	}
}

// runKudoScript runs a kudo/install.sh with a kubectl that fails unless
// the file its install names is there, and returns its calls.
func runKudoScript(t *testing.T, script string) []string {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skipf("install.sh is POSIX sh: %v", err)
	}
	bin := t.TempDir()
	record := filepath.Join(bin, "calls")
	fake := "#!/bin/sh\n[ -f \"$3\" ] || { echo \"missing $3\" >&2; exit 1; }\necho \"$*\" >> '" + record + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "KUBECTL="+filepath.Join(bin, "kubectl"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}
