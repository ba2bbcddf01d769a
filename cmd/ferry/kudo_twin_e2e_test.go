package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/kudo"
)

// TestE2EKudoTwinTasks is the collision KEP-29 warns about
// (keps/0029-operator-dependencies.md: two operator-tasks on one package
// are two instances, which need distinct spec.instanceName): twin2's two
// tasks install zk without instanceName, which KUDO's server would name
// twin2-zk both (pkg/engine/task/task_kudo_operator.go,
// dependencyInstanceName) and apply as one Instance, so `ferry lock`
// exits 2 naming both tasks; twin3's tasks name their instances, so the
// install from the mirror, the repository stopped, has two zk instances
// under twin3, with the names KUDO's server gives them.
func TestE2EKudoTwinTasks(t *testing.T) {
	t.Parallel()
	zkTask := func(task, instance string) kudo.Task {
		return kudo.Task{Name: task, Kind: kudo.TaskKindKudoOperator, Spec: kudo.TaskSpec{Package: "zk", InstanceName: instance}}
	}
	repo := newKudoE2ERepo(t, []kudoE2EOperator{
		{name: "zk", opv: "0.1.0"},
		{name: "twin2", opv: "0.1.0", tasks: []kudo.Task{zkTask("zk-a", ""), zkTask("zk-b", "")}},
		{name: "twin3", opv: "0.1.0", tasks: []kudo.Task{zkTask("zk-a", "zk-one"), zkTask("zk-b", "zk-two")}},
	})
	env := e2eEnv(t)
	config := func(pkg string) string {
		return fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\noperators:\n  - package: %s\n    repo: test\nkudo:\n  repositories: {test: %q}\n", pkg, repo.URL)
	}
	env.WriteFile("ferry.yaml", config("twin2"))
	env.Expect(2, []string{"lock"}, `task "zk-a" of instance twin2 (operator zk)`, `task "zk-b" of instance twin2 (operator zk)`, "spec.instanceName")
	env.Expect(2, []string{"resolve", "-o", "plan"}, `"zk-a"`, `"zk-b"`)

	env.WriteFile("ferry.yaml", config("twin3"))
	env.MustRun("lock")
	mirror := registrytest.New(t)
	env.MustRun("mirror", "--to", mirror.Host+"/m")
	repo.srv.Close()
	env.MustRun("install", "--dest", "out")
	var plan kudo.InstallPlan
	e2eJSONFile(t, env.Path(filepath.Join("out", kudo.InstallDir, kudo.InstallPlanFile)), &plan)
	var got []string
	for _, st := range plan.Steps {
		got = append(got, st.Operator+" "+st.Instance+" "+st.ClusterInstance+" "+st.Task)
	}
	want := []string{"zk twin3.zk-one zk-one zk-a", "zk twin3.zk-two zk-two zk-b", "twin3 twin3 twin3 "}
	if !slices.Equal(got, want) {
		t.Fatalf("kudo/plan.json steps %q, want %q", got, want)
	}
}
