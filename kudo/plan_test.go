package kudo

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/resolve"
)

// kepTree is KEP-29's example (keps/0029-operator-dependencies.md
// "Server-Side"): AA needs BB and CC; BB needs EE and GG.
func kepTree() Graph {
	return Graph{
		"aa": {Name: "aa", Children: []Child{{Key: "bb", Task: "bb"}, {Key: "cc", Task: "cc"}}},
		"bb": {Name: "bb", Children: []Child{{Key: "ee", Task: "ee"}, {Key: "gg", Task: "gg"}}},
		"cc": {Name: "cc"},
		"ee": {Name: "ee"},
		"gg": {Name: "gg"},
	}
}

func TestPlan(t *testing.T) {
	named := kepTree()
	named["bb"].Children[1].InstanceName = "my-gg"
	shared := kepTree()
	// CC installs EE's package too: two instances.
	shared["cc"].Children = []Child{{Key: "ee", Task: "ee"}}
	cyclic := kepTree()
	cyclic["bb"].Children = append(cyclic["bb"].Children, Child{Key: "aa", Task: "back"})
	self := Graph{"aa": {Name: "aa", Children: []Child{{Key: "aa", Task: "me"}}}}
	for _, tc := range []struct {
		name      string
		g         Graph
		instance  string
		operators []string
		instances []string
		err       string
	}{
		{name: "KEP tree", g: kepTree(), operators: []string{"ee", "gg", "bb", "cc", "aa"}, instances: []string{"aa.bb.ee", "aa.bb.gg", "aa.bb", "aa.cc", "aa"}},
		{name: "top-level instance name", g: kepTree(), instance: "prod", operators: []string{"ee", "gg", "bb", "cc", "aa"}, instances: []string{"prod.bb.ee", "prod.bb.gg", "prod.bb", "prod.cc", "prod"}},
		{name: "task instanceName", g: named, operators: []string{"ee", "gg", "bb", "cc", "aa"}, instances: []string{"aa.bb.ee", "aa.bb.my-gg", "aa.bb", "aa.cc", "aa"}},
		{name: "one package twice", g: shared, operators: []string{"ee", "gg", "bb", "ee", "cc", "aa"}, instances: []string{"aa.bb.ee", "aa.bb.gg", "aa.bb", "aa.cc.ee", "aa.cc", "aa"}},
		{name: "cycle", g: cyclic, err: "cyclic operator dependency: aa -> bb -> aa"},
		{name: "self", g: self, err: "cyclic operator dependency: aa -> aa"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps, err := Plan(tc.g, "aa", tc.instance)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ops, insts []string
			for _, s := range steps {
				ops = append(ops, s.Operator)
				insts = append(insts, s.Instance)
			}
			if !slices.Equal(ops, tc.operators) || !slices.Equal(insts, tc.instances) {
				t.Fatalf("plan = %v %v\nwant %v %v", ops, insts, tc.operators, tc.instances)
			}
			if last := steps[len(steps)-1]; last.Parent != "" {
				t.Fatalf("top-level step has parent %q", last.Parent)
			}
		})
	}
}

// TestPlanOutput is `ferry resolve -o plan` (resolve.WriteGraph) over
// resolved KUDO closures: the KEP's tree in its order with its instance
// names, and a dependency that is also a root installed twice, once as
// AA's dependency and once as a top-level instance of its own.
func TestPlanOutput(t *testing.T) {
	repo := newRepo(t, kepFixtures(), nil)
	pinned := regexp.MustCompile(`:[^ ]+@sha256:[0-9a-f]{64}`)
	for _, tc := range []struct {
		name  string
		roots []string
		want  []string
	}{
		{name: "KEP tree", roots: []string{"aa"}, want: []string{
			"1. kudo.operator ee instance aa.bb.ee (dependency of aa.bb)",
			"2. kudo.operator gg instance aa.bb.gg (dependency of aa.bb)",
			"3. kudo.operator bb instance aa.bb (dependency of aa)",
			"4. kudo.operator cc instance aa.cc (dependency of aa)",
			"5. kudo.operator aa instance aa",
		}},
		{name: "a dependency also a root", roots: []string{"aa", "bb"}, want: []string{
			"1. kudo.operator ee instance bb.ee (dependency of bb)",
			"2. kudo.operator gg instance bb.gg (dependency of bb)",
			"3. kudo.operator bb instance bb",
			"4. kudo.operator ee instance aa.bb.ee (dependency of aa.bb)",
			"5. kudo.operator gg instance aa.bb.gg (dependency of aa.bb)",
			"6. kudo.operator bb instance aa.bb (dependency of aa)",
			"7. kudo.operator cc instance aa.cc (dependency of aa)",
			"8. kudo.operator aa instance aa",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var roots []resolve.Root
			for _, r := range tc.roots {
				roots = append(roots, resolve.Root{Ref: Source(repo.URL, r), Format: "kudo"})
			}
			g, err := resolve.Resolve(context.Background(), roots, resolve.Options{Registry: registrytest.Client(t), Formats: []format.Format{New()}})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := resolve.WriteGraph(&buf, g, resolve.OutputPlan); err != nil {
				t.Fatal(err)
			}
			got := pinned.ReplaceAllString(strings.ReplaceAll(buf.String(), SourcePrefix+repo.URL+"/", ""), "")
			if want := strings.Join(tc.want, "\n") + "\n"; got != want {
				t.Fatalf("plan:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestPlanInstanceNames pins instance names to the tasks that create
// them: KEP-29's hierarchy (keps/0029-operator-dependencies.md
// "Server-Side": aa.bb.ee, the task's instanceName else the operator's
// name below the parent's) and the name KUDO's server gives the Instance
// (kudobuilder/kudo pkg/engine/task/task_kudo_operator.go,
// dependencyInstanceName: the task's instanceName, else
// PARENT-OPERATOR). Two tasks installing one operator are two instances
// when their names differ; when KUDO would apply one Instance for both
// (applyInstance patches an existing one), the plan is an error naming
// both tasks.
func TestPlanInstanceNames(t *testing.T) {
	twin := func(a, b string) Graph {
		return Graph{
			"twin": {Name: "twin", Children: []Child{{Key: "zk", Task: "zk-a", InstanceName: a}, {Key: "zk", Task: "zk-b", InstanceName: b}}},
			"zk":   {Name: "zk"},
		}
	}
	deep := kepTree()
	deep["bb"].Children[0].InstanceName = "shared"
	deep["aa"].Children[1].InstanceName = "shared"
	hierarchy := kepTree()
	hierarchy["aa"].Children[1].InstanceName = "bb" // KEP name aa.bb twice
	for _, tc := range []struct {
		name      string
		g         Graph
		root      string
		instance  string
		instances []string
		cluster   []string
		err       []string
	}{
		{name: "KEP tree", g: kepTree(), root: "aa",
			instances: []string{"aa.bb.ee", "aa.bb.gg", "aa.bb", "aa.cc", "aa"},
			cluster:   []string{"aa-bb-ee", "aa-bb-gg", "aa-bb", "aa-cc", "aa"}},
		{name: "top-level instance", g: kepTree(), root: "aa", instance: "prod",
			instances: []string{"prod.bb.ee", "prod.bb.gg", "prod.bb", "prod.cc", "prod"},
			cluster:   []string{"prod-bb-ee", "prod-bb-gg", "prod-bb", "prod-cc", "prod"}},
		{name: "two tasks, distinct instanceNames", g: twin("zk-one", "zk-two"), root: "twin",
			instances: []string{"twin.zk-one", "twin.zk-two", "twin"},
			cluster:   []string{"zk-one", "zk-two", "twin"}},
		{name: "two tasks, one named", g: twin("", "zk-two"), root: "twin",
			instances: []string{"twin.zk", "twin.zk-two", "twin"},
			cluster:   []string{"twin-zk", "zk-two", "twin"}},
		{name: "two tasks, no instanceName", g: twin("", ""), root: "twin",
			err: []string{`task "zk-a" of instance twin (operator zk)`, `task "zk-b" of instance twin (operator zk)`, "twin.zk", "spec.instanceName"}},
		{name: "two tasks, one instanceName", g: twin("zk", "zk"), root: "twin",
			err: []string{`"zk-a"`, `"zk-b"`}},
		{name: "one instanceName in two branches", g: deep, root: "aa",
			err: []string{`task "ee" of instance aa.bb (operator ee)`, `task "cc" of instance aa (operator cc)`, `Instance "shared"`}},
		{name: "KEP names collide", g: hierarchy, root: "aa",
			err: []string{`task "bb" of instance aa (operator bb)`, `task "cc" of instance aa (operator cc)`, "instance aa.bb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps, err := Plan(tc.g, tc.root, tc.instance)
			if tc.err != nil {
				if err == nil {
					t.Fatalf("Plan = %+v, want an error", steps)
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var insts, cluster []string
			for _, s := range steps {
				insts = append(insts, s.Instance)
				cluster = append(cluster, s.Cluster)
			}
			if !slices.Equal(insts, tc.instances) || !slices.Equal(cluster, tc.cluster) {
				t.Fatalf("instances %v, cluster %v\nwant %v, %v", insts, cluster, tc.instances, tc.cluster)
			}
		})
	}
}
