package kudo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ferryhq/ferry/mirrorset"
)

// TestRealworldFolderDependencies locks KUDO's own test of a folder
// dependency (kudobuilder/kudo
// pkg/kudoctl/resources/dependencies/testdata/operator-with-dependencies:
// parent's task deploy-child names `package: "../child-operator"`, which
// pkg/kudoctl/resources/dependencies/resolve.go resolves against the
// parent's folder) given as ROOT: it installs an operator though it names
// no published package and deploys no image, so it locks (no package,
// the tree in kudo.local) and installs in KEP-29's order, the child
// first, as a dependency of the parent's instance with both its names.
func TestRealworldFolderDependencies(t *testing.T) {
	dir := filepath.Join("..", "testdata", "realworld", "kudo-local", "operator-with-dependencies", "parent-operator")
	data, err := os.ReadFile(filepath.Join(dir, OperatorFileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		data []byte
	}{
		{"folder", dir, nil},
		{"operator.yaml", filepath.Join(dir, OperatorFileName), data},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, ok, err := New().ReadInput(tc.path, tc.data, &mirrorset.MirrorSet{})
			if !ok || err != nil {
				t.Fatalf("ReadInput = %v, %v", ok, err)
			}
			l := lockLocal(t, ms)
			if n := len(l.Resolved()); n != 0 {
				t.Fatalf("locked %d packages, want none", n)
			}
			var sec LockedSection
			if ok, err := l.Section(LockSection, &sec); !ok || err != nil || len(sec.Local) != 1 {
				t.Fatalf("kudo section %v %v %+v", ok, err, sec)
			}
			if lo := sec.Local[0]; lo.Name != "parent" || len(lo.Tasks) != 1 || lo.Tasks[0].Name != "deploy-child" || lo.Tasks[0].Local == nil ||
				lo.Tasks[0].Local.Package != "../child-operator" || lo.Tasks[0].Local.Name != "child" || lo.Tasks[0].Local.AppVersion != "3.2.1" {
				t.Fatalf("kudo.local = %+v", lo)
			}
			dest := installLocal(t, l)
			b, err := os.ReadFile(filepath.Join(dest, InstallDir, InstallPlanFile))
			if err != nil {
				t.Fatal(err)
			}
			var plan InstallPlan
			if err := json.Unmarshal(b, &plan); err != nil {
				t.Fatal(err)
			}
			type step struct{ op, local, instance, cluster, parent, task string }
			want := []step{
				{"child", "../child-operator", "parent.child", "parent-child", "parent", "deploy-child"},
				{"parent", "", "parent", "parent", "", ""},
			}
			if len(plan.Steps) != len(want) {
				t.Fatalf("plan.json:\n%s", b)
			}
			for i, st := range plan.Steps {
				got := step{st.Operator, st.Local, st.Instance, st.ClusterInstance, st.Parent, st.Task}
				if i == 1 {
					got.local = ""
				}
				// ../child-operator is outside the tarball kubectl kudo
				// package create would make of the parent: the tree is
				// not carried, but installed from its folders.
				if got != want[i] || st.SkipInstance != (i == 0) || st.Tarball != "" || st.Folder != "" {
					t.Errorf("step %d = %+v, want %+v", i+1, got, want[i])
				}
			}
		})
	}
}
