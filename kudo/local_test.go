package kudo

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/resolve"
)

// localFixtures is a local package "app" and the repository it installs
// from: task zk installs Zookeeper (newest) as instance "zk" with app's
// parameter file zk.yaml, task legacy Zookeeper 3.4.14 as instance
// "legacy", and task helper the folder ./helper, whose task zk2 installs
// Zookeeper (newest) with helper's parameter file p.yaml and no
// instanceName.
func localFixtures() (app, helper fixture, repo []fixture) {
	helper = fixture{
		name: "helper", opv: "0.2.0",
		tasks:     []Task{{Name: "zk2", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "zookeeper", ParameterFile: "p.yaml"}}},
		templates: map[string]string{"p.yaml": "NODE_COUNT: \"1\"\n"},
	}
	app = fixture{
		name: "app", app: "1.0", opv: "0.1.0",
		tasks: []Task{
			{Name: "zk", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "zookeeper", InstanceName: "zk", ParameterFile: "zk.yaml"}},
			{Name: "legacy", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "zookeeper", AppVersion: "3.4.14", InstanceName: "legacy"}},
			{Name: "helper", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "./helper"}},
		},
		params:    []Parameter{{Name: "ZK_NODES", Default: "3"}},
		templates: map[string]string{"zk.yaml": "NODE_COUNT: \"{{ .Params.ZK_NODES }}\"\n"},
	}
	zk, zkOld := zookeeper("3.6.2", "0.1.0"), zookeeper("3.4.14", "0.3.0")
	zk.templates, zkOld.templates = nil, nil
	return app, helper, []fixture{zk, zkOld}
}

// localStep is what one plan.json step of a local package's install must
// say: tag and params empty where there are none; local set for a local
// package's own step.
type localStep struct {
	operator, tag, instance, parent, task string
	params, paramsText                    string
	local                                 string
}

// TestLocalInstall locks a local package given as ROOT (a folder, its
// .tgz) or as a ferry.yaml operators: entry with an instanceName, and
// installs the lock: the lock's kudo section keeps the tasks' instance
// names and parameter files, and kudo/plan.json makes the local package
// the parent of the operators its tasks install (KEP-29 names under the
// local instance, --skip-instance, parameter files written).
func TestLocalInstall(t *testing.T) {
	app, helper, repoPkgs := localFixtures()
	repo := newRepo(t, repoPkgs, nil)
	dir := t.TempDir()
	appFiles := app.files(t)
	for n, s := range helper.files(t) {
		appFiles["helper/"+n] = s
	}
	writeDir(t, filepath.Join(dir, "app"), appFiles)
	tgzPath := filepath.Join(dir, "app.tgz")
	if err := os.WriteFile(tgzPath, tgz(t, appFiles, false), 0o644); err != nil {
		t.Fatal(err)
	}
	settingsYAML := "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nkudo:\n  repositories:\n    community: " + repo.URL + "\n"
	steps := func(inst string) []localStep {
		return []localStep{
			{operator: "zookeeper", tag: "3.6.2_0.1.0", instance: inst + ".zk", parent: inst, task: "zk", params: "kudo/params/" + inst + ".zk/zk.yaml", paramsText: app.templates["zk.yaml"]},
			{operator: "zookeeper", tag: "3.4.14_0.3.0", instance: inst + ".legacy", parent: inst, task: "legacy"},
			{operator: "zookeeper", tag: "3.6.2_0.1.0", instance: inst + ".helper.zookeeper", parent: inst + ".helper", task: "zk2", params: "kudo/params/" + inst + ".helper.zookeeper/p.yaml", paramsText: helper.templates["p.yaml"]},
			{operator: "helper", instance: inst + ".helper", parent: inst, task: "helper", local: "./helper"},
			{operator: "app", instance: inst},
		}
	}
	for _, tc := range []struct {
		name string
		// root is the ROOT path; yaml, when set, is ferry.yaml instead.
		root, yaml string
		pkg        string // the local package as the lock names it
		instance   string
	}{
		{name: "folder ROOT", root: filepath.Join(dir, "app"), pkg: folderRef(filepath.Join(dir, "app")), instance: "app"},
		{name: "tgz ROOT", root: tgzPath, pkg: folderRef(tgzPath), instance: "app"},
		{name: "operators: entry with instanceName", yaml: settingsYAML + "operators:\n  - package: " + filepath.ToSlash(filepath.Join(dir, "app")) + "\n    instanceName: prod\n", pkg: filepath.ToSlash(filepath.Join(dir, "app")), instance: "prod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ms *mirrorset.MirrorSet
			var err error
			if tc.yaml != "" {
				ms, err = mirrorset.Parse([]byte(tc.yaml))
			} else {
				settings, perr := mirrorset.Parse([]byte(settingsYAML))
				if perr != nil {
					t.Fatal(perr)
				}
				var data []byte
				if !strings.HasSuffix(tc.root, ".tgz") {
					data = nil
				} else if data, err = os.ReadFile(tc.root); err != nil {
					t.Fatal(err)
				}
				var ok bool
				ms, ok, err = New().ReadInput(tc.root, data, settings)
				if !ok {
					t.Fatal("ReadInput does not read the package")
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			l := lockLocal(t, ms)
			var sec LockedSection
			if ok, err := l.Section(LockSection, &sec); !ok || err != nil {
				t.Fatalf("lock section %s: %v, %v", LockSection, ok, err)
			}
			if len(sec.Local) != 1 {
				t.Fatalf("kudo.local = %+v, want one package", sec.Local)
			}
			lo := sec.Local[0]
			if lo.Package != tc.pkg || lo.Name != "app" || lo.Instance != tc.instance || len(lo.Tasks) != 3 {
				t.Fatalf("kudo.local[0] = %+v", lo)
			}
			zk := lo.Tasks[0]
			src, dg, _ := strings.Cut(zk.Resolved, "@")
			if zk.InstanceName != "zk" || zk.ParameterFile != "zk.yaml" || zk.Parameters != app.templates["zk.yaml"] || l.PackageAt(src, dg) == nil {
				t.Errorf("task zk = %+v", zk)
			}
			if h := lo.Tasks[2]; h.Local == nil || h.Local.Package != "./helper" || h.Local.Tasks[0].Parameters != helper.templates["p.yaml"] {
				t.Errorf("task helper = %+v", h)
			}
			// The lock is written and read back as ferry.lock is.
			b, err := l.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if l, err = lock.Parse(b); err != nil {
				t.Fatalf("the lock does not read back: %v\n%s", err, b)
			}
			dest := installLocal(t, l)
			checkLocalPlan(t, dest, l, repo, steps(tc.instance))
			got, err := os.ReadFile(filepath.Join(dest, "kudo", "app-1.0_0.1.0.tgz"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(tgzPath)
			if err != nil {
				t.Fatal(err)
			}
			if tc.root != tgzPath {
				// A folder is packed as PackFolder packs it.
				if want, err = PackFolder(filepath.Join(dir, "app")); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the install's app tarball is not the local package's")
			}
		})
	}
}

// lockLocal resolves ms, locks it and records the KUDO section, as
// Env.Lock does.
func lockLocal(t *testing.T, ms *mirrorset.MirrorSet) *lock.Lock {
	t.Helper()
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
		t.Fatalf("resolve: %v", err)
	}
	l := lock.FromGraph(g, ms.Digest())
	if err := f.(Format).RecordLock(ms, g, l); err != nil {
		t.Fatalf("RecordLock: %v", err)
	}
	return l
}

// installLocal mirrors l and installs it, returning the install
// directory.
func installLocal(t *testing.T, l *lock.Lock) string {
	t.Helper()
	ctx := context.Background()
	mirror := registrytest.New(t)
	c := registrytest.Client(t)
	to, err := relocate.ParseMapping(mirror.Host + "/m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := relocate.Mirror(ctx, l, relocate.Options{Source: c, To: to, Formats: []format.Format{New()}, Concurrency: 2}); err != nil {
		t.Fatalf("mirror: %v", err)
	}
	dest := filepath.Join(t.TempDir(), "install")
	if _, err := install.Install(ctx, l, install.Options{Registry: c, Dest: dest, Writers: []install.Writer{New()}}); err != nil {
		t.Fatalf("install: %v", err)
	}
	return dest
}

// checkLocalPlan checks kudo/plan.json, the parameter files and
// install.sh against want.
func checkLocalPlan(t *testing.T, dest string, l *lock.Lock, repo *repoServer, want []localStep) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dest, InstallDir, InstallPlanFile))
	if err != nil {
		t.Fatal(err)
	}
	var plan InstallPlan
	if err := json.Unmarshal(b, &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != len(want) {
		t.Fatalf("plan.json has %d steps, want %d:\n%s", len(plan.Steps), len(want), b)
	}
	var lines []string
	for i, w := range want {
		st := plan.Steps[i]
		if st.Order != i+1 || st.Operator != w.operator || st.Instance != w.instance || st.Parent != w.parent || st.Task != w.task || st.Parameters != w.params || st.SkipInstance != (w.parent != "") {
			t.Errorf("step %d = %+v\nwant %+v", i+1, st, w)
		}
		if w.operator == "app" || w.local != "" {
			// A local package: carried as a tarball of its own, its
			// folder dependency in it, installed from there.
			const tarball = "kudo/app-1.0_0.1.0.tgz"
			if st.Source != "" || st.Digest != "" || st.Tarball != tarball || st.Local == "" || (w.local != "" && st.Local != w.local) {
				t.Errorf("local step %d = %+v", i+1, st)
			}
			if w.local != "" {
				if st.Folder != "helper" || st.Command != nil {
					t.Errorf("local folder step %d = %+v, want folder helper of %s", i+1, st, tarball)
				}
				continue
			}
			cmd := []string{"kubectl", "kudo", "install", "./" + tarball, "--instance", w.instance}
			if !reflect.DeepEqual(st.Command, cmd) {
				t.Errorf("step %d command = %q, want %q", i+1, st.Command, cmd)
			}
			lines = append(lines, strings.Join(cmd[1:], " "))
			data, err := os.ReadFile(filepath.Join(dest, filepath.FromSlash(tarball)))
			if err != nil {
				t.Fatal(err)
			}
			p, err := LoadArchive(data)
			if err != nil {
				t.Fatalf("%s: %v", tarball, err)
			}
			pkgs := map[string]*Package{}
			if err := folderPackages(p, "", pkgs); err != nil || p.Operator.Name != "app" || pkgs["/helper"] == nil || pkgs["/helper"].Operator.Name != "helper" {
				t.Errorf("%s holds %s and %v (%v), want app and its folder helper", tarball, p.Operator.Name, pkgs, err)
			}
			continue
		}
		tarball := "kudo/" + w.operator + "-" + w.tag + ".tgz"
		if versionTag(st.AppVersion, st.OperatorVersion) != w.tag || st.Tarball != tarball || l.PackageAt(st.Source, st.Digest) == nil {
			t.Errorf("step %d = %+v, want %s", i+1, st, tarball)
		}
		if got, err := os.ReadFile(filepath.Join(dest, filepath.FromSlash(tarball))); err != nil || string(got) != string(repo.tarballOf(w.operator, w.tag)) {
			t.Errorf("%s differs from the repository's tarball (%v)", tarball, err)
		}
		if w.params != "" {
			if got, err := os.ReadFile(filepath.Join(dest, filepath.FromSlash(w.params))); err != nil || string(got) != w.paramsText {
				t.Errorf("%s = %q (%v), want %q", w.params, got, err, w.paramsText)
			}
		}
		cmd := []string{"kubectl", "kudo", "install", "./" + tarball, "--instance", w.instance, "--skip-instance"}
		if !reflect.DeepEqual(st.Command, cmd) {
			t.Errorf("step %d command = %q, want %q", i+1, st.Command, cmd)
		}
		lines = append(lines, strings.Join(cmd[1:], " "))
	}
	checkScript(t, filepath.Join(dest, InstallDir, InstallScript), lines)
}

// TestLockSectionCheck parses locks whose kudo section is malformed.
func TestLockSectionCheck(t *testing.T) {
	const head = "apiVersion: ferry.dev/v1alpha1\nkind: Lock\ninputs: sha256:" + "0000000000000000000000000000000000000000000000000000000000000000" + "\npackages: []\n"
	for _, tc := range []struct {
		name, section, want string
	}{
		{"good", "kudo:\n  local:\n    - {package: ./app, name: app, operatorVersion: 0.1.0, instance: app, tasks: [{name: h, local: {package: ./h, name: h, operatorVersion: 1.0.0}}]}\n", ""},
		{"unknown key", "kudo:\n  local:\n    - {package: ./app, name: app, operatorVersion: 0.1.0, instance: app, instanceName: x}\n", "field instanceName not found"},
		{"no instance", "kudo:\n  local:\n    - {package: ./app, name: app, operatorVersion: 0.1.0}\n", "app has no instance"},
		{"task with neither", "kudo:\n  local:\n    - {package: ./app, name: app, operatorVersion: 0.1.0, instance: app, tasks: [{name: zk}]}\n", "task zk needs one of resolved and local"},
		{"resolved not SOURCE@DIGEST", "kudo:\n  local:\n    - {package: ./app, name: app, operatorVersion: 0.1.0, instance: app, tasks: [{name: zk, resolved: kudo+https://r/zookeeper}]}\n", "is not SOURCE@DIGEST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lock.Parse([]byte(head + tc.section))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestLockSectionSchema checks that lock/schema.json's kudo section names
// exactly the fields LocalOperator and LocalTask write.
func TestLockSectionSchema(t *testing.T) {
	type props struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	var s struct {
		Defs map[string]struct {
			props
			Properties map[string]struct {
				props
				Items props `json:"items"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(lock.Schema, &s); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]json.RawMessage) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	fields := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			out = append(out, strings.Split(rt.Field(i).Tag.Get("yaml"), ",")[0])
		}
		sort.Strings(out)
		return out
	}
	def := s.Defs["kudoLocal"]
	var opProps []string
	for k := range def.Properties {
		opProps = append(opProps, k)
	}
	sort.Strings(opProps)
	if got := fields(LocalOperator{}); !reflect.DeepEqual(got, opProps) {
		t.Errorf("LocalOperator fields %v, schema %v", got, opProps)
	}
	if got, want := fields(LocalTask{}), keys(def.Properties["tasks"].Items.Properties); !reflect.DeepEqual(got, want) {
		t.Errorf("LocalTask fields %v, schema %v", got, want)
	}
}

// TestFolderRef names ROOT paths as operators: folders.
func TestFolderRef(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"app", "./app"},
		{"./app/", "./app"},
		{"app/operator.yaml", "./app/operator.yaml"},
		{"app.tgz", "./app.tgz"},
		{".", "."},
		{"../ops/app", "../ops/app"},
		{"/srv/app", "/srv/app"},
	} {
		if got := folderRef(tc.in); got != tc.want || classify(got) != pkgFolder {
			t.Errorf("folderRef(%q) = %q (%v), want %q, a folder", tc.in, got, classify(got), tc.want)
		}
	}
}
