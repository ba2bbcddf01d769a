package kudo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/mirrorset"
)

// roots flattens a MirrorSet's packages for comparison.
func roots(m *mirrorset.MirrorSet) []string {
	var out []string
	for _, p := range m.Packages {
		s := p.Ref
		if p.Version != "" {
			s += " " + p.Version
		}
		if p.Kind != "" {
			s += " (" + p.Kind + ")"
		}
		out = append(out, s)
	}
	return out
}

// TestReadInput reads local packages as ROOT: a folder, its
// operator.yaml and its .tgz; a folder dependency relative to the
// package naming it; repository dependencies in ferry.yaml's community
// repository.
func TestReadInput(t *testing.T) {
	dir := t.TempDir()
	// flink needs kafka from the repository and a local helper operator
	// in a sibling folder, which needs zookeeper at one version.
	flink := fixture{
		name: "flink", app: "1.12.0", opv: "0.3.0",
		tasks: []Task{
			{Name: "deploy-kafka", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "kafka", AppVersion: "2.5.0", OperatorVersion: "1.3.1", InstanceName: "kafka"}},
			{Name: "deploy-helper", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "../helper"}},
		},
		templates: map[string]string{"jobmanager.yaml": "spec:\n  containers:\n    - image: flink:{{ .AppVersion }}\n"},
	}
	helper := fixture{
		name: "helper", opv: "0.1.0",
		tasks:     []Task{{Name: "zk", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "zookeeper", OperatorVersion: "0.3.0"}}},
		templates: map[string]string{"job.yaml": "image: ghcr.io/acme/helper@sha256:" + strings.Repeat("a", 64) + "\n"},
	}
	writeDir(t, filepath.Join(dir, "flink"), flink.files(t))
	writeDir(t, filepath.Join(dir, "helper"), helper.files(t))
	settings, err := mirrorset.Parse([]byte("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nkudo:\n  repositories:\n    community: https://kudo.example.com/repo/\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"kudo+https://kudo.example.com/repo/kafka:2.5.0_1.3.1",
		"kudo+https://kudo.example.com/repo/zookeeper operatorVersion=0.3.0",
		"docker.io/library/flink:1.12.0 (image)",
		"ghcr.io/acme/helper@sha256:" + strings.Repeat("a", 64) + " (image)",
	}
	flinkDir := filepath.Join(dir, "flink")
	opData, err := os.ReadFile(filepath.Join(flinkDir, OperatorFileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		data []byte
	}{
		{name: "folder", path: flinkDir},
		{name: "operator.yaml", path: filepath.Join(flinkDir, OperatorFileName), data: opData},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ok, err := New().ReadInput(tc.path, tc.data, settings)
			if err != nil || !ok {
				t.Fatalf("ReadInput = %v, %v", ok, err)
			}
			if got := roots(m); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("roots:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
	// A .tgz embeds its folder dependencies; one escaping it is refused.
	files := flink.files(t)
	for n, s := range helper.files(t) {
		files["helper/"+n] = s
	}
	t.Run("tgz with a nested folder", func(t *testing.T) {
		inner := flink
		inner.tasks = []Task{flink.tasks[0], {Name: "deploy-helper", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "./helper"}}}
		fs := inner.files(t)
		for n, s := range helper.files(t) {
			fs["helper/"+n] = s
		}
		m, ok, err := New().ReadInput(filepath.Join(dir, "flink.tgz"), tgz(t, fs, true), settings)
		if err != nil || !ok {
			t.Fatalf("ReadInput = %v, %v", ok, err)
		}
		if got := roots(m); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("roots:\n%s", strings.Join(got, "\n"))
		}
	})
	t.Run("tgz escaping", func(t *testing.T) {
		_, ok, err := New().ReadInput(filepath.Join(dir, "flink.tgz"), tgz(t, files, false), settings)
		if !ok || err == nil || !strings.Contains(err.Error(), "flink: task \"deploy-helper\": package ../helper: leaves the package tarball") {
			t.Fatalf("ReadInput = %v, %v", ok, err)
		}
	})
	// A Helm chart's .tgz is not KUDO's.
	t.Run("not kudo", func(t *testing.T) {
		chart := tgz(t, map[string]string{"nginx/Chart.yaml": "apiVersion: v2\nname: nginx\nversion: 1.0.0\n"}, false)
		if _, ok, err := New().ReadInput(filepath.Join(dir, "nginx-1.0.0.tgz"), chart, nil); ok || err != nil {
			t.Fatalf("ReadInput claims a chart: %v, %v", ok, err)
		}
		if _, ok, _ := New().ReadInput(filepath.Join(dir, "porter.yaml"), []byte("name: x\n"), nil); ok {
			t.Fatal("ReadInput claims porter.yaml")
		}
	})
}

// TestBadPackages: a malformed operator.yaml, a cycle of folder
// dependencies, a KudoOperator task without package; each an error
// naming the chain.
func TestBadPackages(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pkgs  map[string]fixture
		root  string
		want  string
		is    error
		extra map[string]string
	}{
		{
			name: "malformed operator.yaml",
			pkgs: map[string]fixture{"aa": {name: "aa", opv: "0.1.0", rawOperator: "apiVersion: kudo.dev/v1beta1\nname: aa\ntasks: [\n"}},
			root: "aa", want: "operator.yaml", is: ErrMalformed,
		},
		{
			name: "wrong apiVersion",
			pkgs: map[string]fixture{"aa": {name: "aa", opv: "0.1.0", apiVersion: "kudo.dev/v1alpha1"}},
			root: "aa", want: "expecting supported API version kudo.dev/v1beta1 but got kudo.dev/v1alpha1",
		},
		{
			name: "no operatorVersion",
			pkgs: map[string]fixture{"aa": {name: "aa", rawOperator: "apiVersion: kudo.dev/v1beta1\nname: aa\n"}},
			root: "aa", want: "operator aa has no operatorVersion", is: ErrMalformed,
		},
		{
			name: "cycle",
			pkgs: map[string]fixture{
				"aa": {name: "aa", opv: "0.1.0", tasks: []Task{{Name: "bb", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "../bb"}}}},
				"bb": {name: "bb", opv: "0.1.0", tasks: []Task{{Name: "aa", Kind: TaskKindOperator, Spec: TaskSpec{Package: "../aa"}}}},
			},
			root: "aa", want: "cyclic operator dependency: aa -> bb -> aa",
		},
		{
			name: "task without package",
			pkgs: map[string]fixture{
				"aa": {name: "aa", opv: "0.1.0", tasks: []Task{{Name: "bb", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "../bb"}}}},
				"bb": {name: "bb", opv: "0.1.0", tasks: []Task{{Name: "deploy-ee", Kind: TaskKindKudoOperator, Spec: TaskSpec{OperatorVersion: "1.0.0"}}}},
			},
			root: "aa", want: `aa -> bb: task "deploy-ee" of kind KudoOperator has no spec.package`,
		},
		{
			name: "missing folder",
			pkgs: map[string]fixture{"aa": {name: "aa", opv: "0.1.0", tasks: []Task{{Name: "bb", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "./nope"}}}}},
			root: "aa", want: `aa: task "bb": package ./nope:`,
		},
		{
			name: "missing parameter file",
			pkgs: map[string]fixture{"aa": {name: "aa", opv: "0.1.0", tasks: []Task{{Name: "bb", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "bb", ParameterFile: "bb-params.yaml"}}}}},
			root: "aa", want: `aa: task "bb": parameterFile bb-params.yaml is not in templates/`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for d, p := range tc.pkgs {
				writeDir(t, filepath.Join(dir, d), p.files(t))
			}
			root := filepath.Join(dir, tc.root)
			_, ok, err := New().ReadInput(root, nil, nil)
			if !ok || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadInput = %v, %v; want an error containing %q", ok, err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("error %v is not %v", err, tc.is)
			}
			// mirrorset.LoadFile prefixes ROOT's path: not twice.
			if strings.HasPrefix(err.Error(), root) {
				t.Fatalf("error %v begins with the path its caller names", err)
			}
			// The same package as a .tgz fails the same way (no
			// folder dependency can be reached from it, so only the
			// package's own errors).
			if len(tc.pkgs) == 1 && tc.pkgs[tc.root].tasks == nil {
				_, ok, err := New().ReadInput(root+".tgz", tgz(t, tc.pkgs[tc.root].files(t), false), nil)
				if !ok || err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf(".tgz: ReadInput = %v, %v", ok, err)
				}
			}
		})
	}
}

// TestSectionRoots reads ferry.yaml's operators: and kudo:.
func TestSectionRoots(t *testing.T) {
	dir := t.TempDir()
	writeDir(t, filepath.Join(dir, "local"), fixture{
		name: "local", opv: "0.1.0",
		tasks: []Task{{Name: "zk", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "zookeeper"}}},
	}.files(t))
	writeDir(t, filepath.Join(dir, "broken"), fixture{name: "broken", rawOperator: "name: broken\noperatorVersion: [1\n"}.files(t))
	for _, tc := range []struct {
		name string
		yaml string
		want []string
		err  string
		// read: the error is the local package's, found by reading
		// it (CheckSections reads no package).
		read bool
	}{
		{
			name: "repositories",
			yaml: "operators:\n  - package: kafka\n    operatorVersion: 1.3.1\n  - package: kafka\n    repo: acme\n    appVersion: 2.5.0\n    operatorVersion: 1.3.1\n  - package: https://get.example.com/zk-0.3.0.tgz\n  - package: " + filepath.Join(dir, "local") + "\n    repo: acme\nkudo:\n  repositories:\n    acme: https://kudo.acme.example/v1\n",
			want: []string{
				"kudo+https://kudo-repository.storage.googleapis.com/v1/kafka operatorVersion=1.3.1",
				"kudo+https://kudo.acme.example/v1/kafka:2.5.0_1.3.1",
				"kudo+https://get.example.com/zk-0.3.0.tgz",
				"kudo+https://kudo-repository.storage.googleapis.com/v1/zookeeper",
			},
		},
		{name: "malformed local package", yaml: "operators:\n  - package: " + filepath.Join(dir, "broken") + "\n", err: "operators[0]: " + filepath.Join(dir, "broken") + ": malformed KUDO package: operator.yaml: yaml: ", read: true},
		{name: "unknown repo", yaml: "operators:\n  - package: kafka\n    repo: nope\n", err: `operators[0]: KUDO repository "nope" is not defined`},
		{name: "no package", yaml: "operators:\n  - repo: community\n", err: "operators[0]: package is required"},
		{name: "bad URL", yaml: "kudo:\n  repositories:\n    x: ftp://x\n", err: `kudo.repositories.x: "ftp://x" is not an http(s)://`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := mirrorset.Parse([]byte("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n" + tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			got, err := New().SectionRoots(m)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				if err := (New()).CheckSections(m); err == nil && !tc.read {
					t.Fatal("CheckSections accepts it")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := roots(&mirrorset.MirrorSet{Packages: got})
			if strings.Join(s, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("roots:\n%s\nwant:\n%s", strings.Join(s, "\n"), strings.Join(tc.want, "\n"))
			}
			for _, p := range got {
				if p.Format != "kudo" {
					t.Fatalf("root %s has format %q", p.Ref, p.Format)
				}
			}
		})
	}
}

// TestLocalGraph plans a local package with a folder dependency and
// repository dependencies: the folder's operators come first.
func TestLocalGraph(t *testing.T) {
	op := &Operator{Name: "flink", Tasks: []OperatorTask{
		{Task: "deploy-kafka", Ref: "kudo+https://r.example/v1/kafka:2.5.0_1.3.1", InstanceName: "kafka"},
		{Task: "deploy-helper", Local: &Operator{Name: "helper", Tasks: []OperatorTask{{Task: "zk", Ref: "kudo+https://r.example/v1/zookeeper"}}}},
	}}
	g, root := LocalGraph(op)
	steps, err := Plan(g, root, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range steps {
		got = append(got, s.Operator+"="+s.Instance)
	}
	want := "kafka=flink.kafka zookeeper=flink.helper.zookeeper helper=flink.helper flink=flink"
	if strings.Join(got, " ") != want {
		t.Fatalf("plan = %s, want %s", strings.Join(got, " "), want)
	}
}
