package main

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/kudo"
)

// TestE2EKudoLocalRoot locks a local KUDO package folder given as ROOT,
// whose KudoOperator tasks install operators from tarball URLs: task zk
// Zookeeper as instance "zk" with the package's parameter file zk.yaml,
// task cc the operator cc with no instanceName. The lock keeps the
// tasks' instance names and the parameter file (kudo.local), and `ferry
// install` writes them: both operators as dependencies of the local
// instance (app.zk, app.cc, --skip-instance), zk.yaml copied to
// kudo/params/app.zk/, and the local package last, to install from its
// folder.
func TestE2EKudoLocalRoot(t *testing.T) {
	t.Parallel()
	w := newKudoE2EWorld(t)
	env := e2eEnv(t)
	zkParams := "NODE_COUNT: \"{{ .Params.ZK_NODES }}\"\n"
	op := kudo.OperatorFile{APIVersion: kudo.APIVersion, Name: "app", AppVersion: "1.0", OperatorVersion: "0.1.0", KUDOVersion: "0.17.0",
		Tasks: []kudo.Task{
			{Name: "zk", Kind: kudo.TaskKindKudoOperator, Spec: kudo.TaskSpec{Package: w.repo.URL + "/zookeeper-3.6.2_0.1.0.tgz", InstanceName: "zk", ParameterFile: "zk.yaml"}},
			{Name: "cc", Kind: kudo.TaskKindKudoOperator, Spec: kudo.TaskSpec{Package: w.repo.URL + "/cc-0.3.0.tgz"}},
		},
		Plans: map[string]kudo.PlanSpec{"deploy": {Strategy: "serial", Phases: []kudo.PhaseSpec{{Name: "main", Strategy: "serial",
			Steps: []kudo.StepSpec{{Name: "zk", Tasks: []string{"zk"}}, {Name: "cc", Tasks: []string{"cc"}}}}}}},
	}
	ob, err := yaml.Marshal(op)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := yaml.Marshal(kudo.ParamsFile{APIVersion: kudo.APIVersion, Parameters: []kudo.Parameter{{Name: "ZK_NODES", Default: "3"}}})
	if err != nil {
		t.Fatal(err)
	}
	env.WriteFile("app/"+kudo.OperatorFileName, string(ob))
	env.WriteFile("app/"+kudo.ParamsFileName, string(pb))
	env.WriteFile("app/"+kudo.TemplatesDir+"/zk.yaml", zkParams)

	// resolve -o plan plans the published packages the tasks install as
	// the local package's dependencies, not as instances of their own.
	var planned []string
	for _, line := range strings.Split(strings.TrimSpace(env.MustRun("resolve", "-o", "plan", "./app").Stdout), "\n") {
		if strings.Contains(line, " kudo.operator ") {
			_, rest, _ := strings.Cut(line, ". ")
			if f := strings.Fields(rest); strings.HasPrefix(f[1], "kudo+http") {
				// The pinned tarball URL, as its file name.
				f[1], _, _ = strings.Cut(path.Base(f[1]), ":")
				rest = strings.Join(f, " ")
			}
			planned = append(planned, rest)
		}
	}
	wantPlan := []string{
		"kudo.operator zookeeper-3.6.2_0.1.0.tgz instance app.zk (dependency of app)",
		"kudo.operator cc-0.3.0.tgz instance app.cc (dependency of app)",
		"kudo.operator app 1.0_0.1.0 (local ./app) instance app",
	}
	if !slices.Equal(planned, wantPlan) {
		t.Errorf("resolve -o plan:\n%s\nwant\n%s", strings.Join(planned, "\n"), strings.Join(wantPlan, "\n"))
	}
	env.MustRun("lock", "./app")
	first := env.ReadFile("ferry.lock")
	env.MustRun("lock", "./app")
	if again := env.ReadFile("ferry.lock"); again != first {
		t.Errorf("a second ferry lock ./app changed the lock:\n%s\nwas\n%s", again, first)
	}
	l := e2eReadLock(t, env, "ferry.lock")
	var sec kudo.LockedSection
	if ok, err := l.Section(kudo.LockSection, &sec); !ok || err != nil || len(sec.Local) != 1 {
		t.Fatalf("ferry.lock kudo section: %v, %v, %+v\n%s", ok, err, sec, env.ReadFile("ferry.lock"))
	}
	lo := sec.Local[0]
	if lo.Package != "./app" || lo.Name != "app" || lo.Instance != "app" || len(lo.Tasks) != 2 ||
		lo.Tasks[0].InstanceName != "zk" || lo.Tasks[0].ParameterFile != "zk.yaml" || lo.Tasks[0].Parameters != zkParams ||
		lo.Tasks[1].InstanceName != "" || lo.Tasks[1].ParameterFile != "" {
		t.Fatalf("ferry.lock kudo.local = %+v", lo)
	}
	for _, tk := range lo.Tasks {
		src, dg, _ := strings.Cut(tk.Resolved, "@")
		if p := l.PackageAt(src, dg); p == nil || p.Kind != "kudo.operator" {
			t.Errorf("task %s resolved %s, not a locked operator", tk.Name, tk.Resolved)
		}
	}

	mirror := registrytest.New(t)
	env.MustRun("mirror", "--to", mirror.Host+"/m")
	env.MustRun("install", "--dest", "out")
	var plan kudo.InstallPlan
	e2eJSONFile(t, env.Path(filepath.Join("out", kudo.InstallDir, kudo.InstallPlanFile)), &plan)
	type step struct{ op, tarball, local, instance, parent, params string }
	want := []step{
		{"zookeeper", "kudo/zookeeper-3.6.2_0.1.0.tgz", "", "app.zk", "app", "kudo/params/app.zk/zk.yaml"},
		{"cc", "kudo/cc-0.3.0.tgz", "", "app.cc", "app", ""},
		{"app", "kudo/app-1.0_0.1.0.tgz", "./app", "app", "", ""},
	}
	var got []step
	for _, st := range plan.Steps {
		got = append(got, step{st.Operator, st.Tarball, st.Local, st.Instance, st.Parent, st.Parameters})
		if st.SkipInstance != (st.Parent != "") {
			t.Errorf("step %d (%s): skipInstance %v", st.Order, st.Instance, st.SkipInstance)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("kudo/plan.json steps\n%+v\nwant\n%+v", got, want)
	}
	if b, err := os.ReadFile(env.Path("out/kudo/params/app.zk/zk.yaml")); err != nil || string(b) != zkParams {
		t.Errorf("kudo/params/app.zk/zk.yaml = %q (%v), want the package's zk.yaml", b, err)
	}
	script := env.ReadFile("out/kudo/install.sh")
	for _, s := range []string{"'--instance' 'app.zk' '--skip-instance'", "'--instance' 'app.cc' '--skip-instance'", "'install' './kudo/app-1.0_0.1.0.tgz' '--instance' 'app'"} {
		if !strings.Contains(script, s) {
			t.Errorf("kudo/install.sh lacks %q:\n%s", s, script)
		}
	}
	// The local package is carried: install.sh runs without it.
	if err := os.RemoveAll(env.Path("app")); err != nil {
		t.Fatal(err)
	}
	if calls := runKudoScript(t, env.Path("out/kudo/install.sh")); len(calls) != 3 || calls[2] != "kudo install ./kudo/app-1.0_0.1.0.tgz --instance app" {
		t.Errorf("install.sh ran %q", calls)
	}
}
