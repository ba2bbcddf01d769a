package main

import (
	"context"
	"path/filepath"
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

func TestE2EKudoFolderTreeScratch(t *testing.T) {
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
	r := env.MustRun("resolve", "./aa", "-o", "plan")
	t.Logf("plan:\n%s\n%s", r.Stdout, r.Stderr)
	env.MustRun("lock", "./aa")
	t.Logf("lock:\n%s", env.ReadFile("ferry.lock"))
	mirror := registrytest.New(t)
	env.MustRun("mirror", "--to", mirror.Host+"/m")
	src.Stop()
	env.MustRun("install", "--dest", "out")
	t.Logf("%s", env.ReadFile("out/kudo/plan.json"))
	t.Logf("%s", env.ReadFile("out/kudo/install.sh"))
}
