package kudo

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/resolve"
)

// TestLocalTwinTasks: a local package (the ROOT folder) whose two tasks
// install one tarball are two instances named after the tasks (KEP-29
// hierarchy twin.INSTANCENAME; in the cluster the task's instanceName,
// kudobuilder/kudo pkg/engine/task/task_kudo_operator.go
// dependencyInstanceName), not one; without distinct instanceNames
// KUDO would apply one Instance for both, and the install is an error
// naming both tasks when the lock is written.
func TestLocalTwinTasks(t *testing.T) {
	zk := zookeeper("3.6.2", "0.1.0")
	zk.templates = nil
	repo := newRepo(t, []fixture{zk}, nil)
	url := repo.URL + "/zookeeper-3.6.2_0.1.0.tgz"
	for _, tc := range []struct {
		name      string
		a, b      string // the tasks' instanceNames
		instances []string
		cluster   []string
		err       []string
	}{
		{name: "distinct instanceNames", a: "one", b: "two",
			instances: []string{"twin.one", "twin.two", "twin"}, cluster: []string{"one", "two", "twin"}},
		{name: "one named", a: "", b: "two",
			instances: []string{"twin.zookeeper", "twin.two", "twin"}, cluster: []string{"twin-zookeeper", "two", "twin"}},
		{name: "none named", err: []string{`task "zk-a" of instance twin`, `task "zk-b" of instance twin`, "spec.instanceName"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := fixture{name: "twin", opv: "0.1.0", tasks: []Task{
				{Name: "zk-a", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: url, InstanceName: tc.a}},
				{Name: "zk-b", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: url, InstanceName: tc.b}},
			}}
			dir := t.TempDir()
			writeDir(t, filepath.Join(dir, "twin"), app.files(t))
			ms, _, err := New().ReadInput(filepath.Join(dir, "twin"), nil, &mirrorset.MirrorSet{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.err != nil {
				// Refused when the lock is written (RecordLock), before
				// anything is mirrored.
				f, err := New().Configure(ms)
				if err != nil {
					t.Fatal(err)
				}
				formats := []format.Format{f}
				roots, err := ms.AllRoots(formats)
				if err != nil {
					t.Fatal(err)
				}
				g, err := resolve.Resolve(context.Background(), roots, resolve.Options{Registry: registrytest.Client(t), Formats: formats})
				if err != nil {
					t.Fatal(err)
				}
				err = f.(Format).RecordLock(ms, g, lock.FromGraph(g, ms.Digest()))
				if err == nil || !errors.Is(err, errkind.BadInput) {
					t.Fatalf("RecordLock = %v, want bad input", err)
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			l := lockLocal(t, ms)
			dest := installLocal(t, l)
			b, err := os.ReadFile(filepath.Join(dest, InstallDir, InstallPlanFile))
			if err != nil {
				t.Fatal(err)
			}
			var plan InstallPlan
			if err := json.Unmarshal(b, &plan); err != nil {
				t.Fatal(err)
			}
			var insts, cluster []string
			for _, st := range plan.Steps {
				insts = append(insts, st.Instance)
				cluster = append(cluster, st.ClusterInstance)
			}
			if strings.Join(insts, " ") != strings.Join(tc.instances, " ") || strings.Join(cluster, " ") != strings.Join(tc.cluster, " ") {
				t.Fatalf("plan instances %v / %v, want %v / %v", insts, cluster, tc.instances, tc.cluster)
			}
		})
	}
}
