package kudo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/resolve"
)

// kepFixtures is KEP-29's example tree as repository packages: AA needs
// BB and CC; BB needs EE and GG, GG with a parameter file of BB's.
func kepFixtures() []fixture {
	dep := func(name string) Task {
		return Task{Name: name, Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: name}}
	}
	gg := dep("gg")
	gg.Spec.ParameterFile = "gg-params.yaml"
	return []fixture{
		{name: "aa", opv: "0.1.0", tasks: []Task{dep("bb"), dep("cc")}},
		{name: "bb", app: "2.0", opv: "0.2.0", tasks: []Task{dep("ee"), gg},
			templates: map[string]string{"gg-params.yaml": "SIZE: \"{{ .Params.GG_SIZE }}\"\n"},
			params:    []Parameter{{Name: "GG_SIZE", Default: "3"}}},
		{name: "cc", opv: "0.1.0"},
		{name: "ee", opv: "0.1.0"},
		{name: "gg", opv: "1.0.0", params: []Parameter{{Name: "SIZE", Default: "1"}}},
	}
}

// kafkaFixtures is the KEP's Kafka → Zookeeper example, deploying no
// image (the install needs none), Zookeeper named by the task and given
// Kafka's parameter file, and a second task installing Zookeeper 3.4.14
// as instance "legacy": two versions of one operator.
func kafkaFixtures() []fixture {
	k := kafka("2.5.0", "1.3.1", TaskSpec{Package: "zookeeper", InstanceName: "zk", ParameterFile: "zookeeper.yaml"})
	k.templates = map[string]string{"zookeeper.yaml": "NODE_COUNT: \"{{ .Params.BROKER_COUNT }}\"\n"}
	k.tasks = append(k.tasks, Task{Name: "legacy-zk", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "zookeeper", AppVersion: "3.4.14", InstanceName: "legacy"}})
	zk, zkOld := zookeeper("3.6.2", "0.1.0"), zookeeper("3.4.14", "0.3.0")
	zk.templates, zkOld.templates = nil, nil
	return []fixture{k, zk, zkOld}
}

// kudoInstall is a KUDO closure resolved from a repository, locked and
// mirrored, to install with the KUDO writer as ferry install does.
type kudoInstall struct {
	repo   *repoServer
	mirror *registrytest.Registry
	lock   *lock.Lock
	dest   string
}

// newKudoInstall resolves root from a repository serving pkgs, locks it
// and mirrors it.
func newKudoInstall(t *testing.T, pkgs []fixture, root string) *kudoInstall {
	t.Helper()
	ctx := context.Background()
	k := &kudoInstall{repo: newRepo(t, pkgs, nil), mirror: registrytest.New(t), dest: filepath.Join(t.TempDir(), "install")}
	c := registrytest.Client(t)
	formats := []format.Format{New()}
	g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: Source(k.repo.URL, root), Format: "kudo"}}, resolve.Options{Registry: c, Formats: formats})
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	k.lock = lock.FromGraph(g, "sha256:inputs")
	to, err := relocate.ParseMapping(k.mirror.Host + "/m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := relocate.Mirror(ctx, k.lock, relocate.Options{Source: c, To: to, Formats: formats, Concurrency: 2}); err != nil {
		t.Fatalf("mirror: %v", err)
	}
	return k
}

// install installs the lock from the mirror into k.dest.
func (k *kudoInstall) install(t *testing.T) error {
	t.Helper()
	_, err := install.Install(context.Background(), k.lock, install.Options{Registry: registrytest.Client(t), Dest: k.dest, Writers: []install.Writer{New()}})
	return err
}

// layerDigest is the digest of the tarball the repository serves for
// name at tag: the artifact's layer.
func (k *kudoInstall) layerDigest(name, tag string) digest.Digest {
	return digest.FromBytes(k.repo.tarballOf(name, tag))
}

// flip changes the first byte of the file at p (same size).
func flip(t *testing.T, p string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantStep is what one plan.json step must say.
type wantStep struct {
	operator, tag, instance, parent string
	// params is the parameter file's copy, from's template.
	params, from string
	// in is the tarball carrying a folder dependency, folder its folder.
	in, folder string
}

// folderFixtures is AA carrying a folder dependency, child, in its
// tarball; child needs EE from the repository.
func folderFixtures(t *testing.T) []fixture {
	child := fixture{name: "child", opv: "0.9.0", tasks: []Task{{Name: "ee", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "ee"}}}}
	extra := map[string]string{}
	for n, s := range child.files(t) {
		extra["child/"+n] = s
	}
	return []fixture{
		{name: "aa", opv: "0.1.0", tasks: []Task{{Name: "child", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "./child"}}}, extra: extra},
		{name: "ee", opv: "0.1.0"},
	}
}

// TestWriteInstall installs KUDO closures from a mirror through
// install.Install and reads kudo/: the tarballs byte for byte as the
// repository served them, plan.json in KEP-29's order with the KEP's
// instance names and --skip-instance on every dependency, the parent's
// parameter files, and install.sh running the same commands. A tarball
// tampered with in the mirror or in the install's layout is refused.
func TestWriteInstall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pkgs   []fixture
		root   string
		want   []wantStep
		tamper string // "mirror" or "layout": the root's tarball changes there
	}{
		{name: "KEP tree", pkgs: kepFixtures(), root: "aa", want: []wantStep{
			{operator: "ee", tag: "0.1.0", instance: "aa.bb.ee", parent: "aa.bb"},
			{operator: "gg", tag: "1.0.0", instance: "aa.bb.gg", parent: "aa.bb", params: "kudo/params/aa.bb.gg/gg-params.yaml", from: "bb"},
			{operator: "bb", tag: "2.0_0.2.0", instance: "aa.bb", parent: "aa"},
			{operator: "cc", tag: "0.1.0", instance: "aa.cc", parent: "aa"},
			{operator: "aa", tag: "0.1.0", instance: "aa"},
		}},
		{name: "Kafka and Zookeeper", pkgs: kafkaFixtures(), root: "kafka", want: []wantStep{
			{operator: "zookeeper", tag: "3.6.2_0.1.0", instance: "kafka.zk", parent: "kafka", params: "kudo/params/kafka.zk/zookeeper.yaml", from: "kafka"},
			{operator: "zookeeper", tag: "3.4.14_0.3.0", instance: "kafka.legacy", parent: "kafka"},
			{operator: "kafka", tag: "2.5.0_1.3.1", instance: "kafka"},
		}},
		{name: "folder dependency", pkgs: folderFixtures(t), root: "aa", want: []wantStep{
			{operator: "ee", tag: "0.1.0", instance: "aa.child.ee", parent: "aa.child"},
			{operator: "child", tag: "0.9.0", instance: "aa.child", parent: "aa", in: "kudo/aa-0.1.0.tgz", folder: "child"},
			{operator: "aa", tag: "0.1.0", instance: "aa"},
		}},
		{name: "tarball tampered with in the mirror", pkgs: kafkaFixtures(), root: "kafka", tamper: "mirror"},
		{name: "tarball tampered with in the install's layout", pkgs: kafkaFixtures(), root: "kafka", tamper: "layout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKudoInstall(t, tc.pkgs, tc.root)
			layer := k.layerDigest("kafka", "2.5.0_1.3.1")
			switch tc.tamper {
			case "mirror":
				hex := layer.Encoded()
				flip(t, filepath.Join(k.mirror.Root, "docker", "registry", "v2", "blobs", "sha256", hex[:2], hex, "data"))
				err := k.install(t)
				if exitcode.Of(err) != exitcode.Mismatch {
					t.Fatalf("install from a tampered mirror: %v (exit %d), want exit 3", err, exitcode.Of(err))
				}
				if _, err := os.Stat(k.dest); !os.IsNotExist(err) {
					t.Fatalf("%s written by a failed install", k.dest)
				}
				return
			case "layout":
				if err := k.install(t); err != nil {
					t.Fatal(err)
				}
				flip(t, filepath.Join(k.dest, "blobs", "sha256", layer.Encoded()))
				tree := filepath.Join(t.TempDir(), "tree")
				if err := os.CopyFS(tree, os.DirFS(k.dest)); err != nil {
					t.Fatal(err)
				}
				if err := os.RemoveAll(filepath.Join(tree, InstallDir)); err != nil {
					t.Fatal(err)
				}
				err := New().WriteInstall(tree, k.lock, nil)
				if !errors.Is(err, content.ErrMismatchedDigest) {
					t.Fatalf("WriteInstall over a tampered layout: %v, want a digest mismatch", err)
				}
				if _, err := os.Stat(filepath.Join(tree, InstallDir, "kafka-2.5.0_1.3.1.tgz")); !os.IsNotExist(err) {
					t.Fatalf("tampered tarball written")
				}
				return
			}
			if err := k.install(t); err != nil {
				t.Fatal(err)
			}
			var plan InstallPlan
			b, err := os.ReadFile(filepath.Join(k.dest, InstallDir, InstallPlanFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &plan); err != nil {
				t.Fatal(err)
			}
			if len(plan.Steps) != len(tc.want) {
				t.Fatalf("plan.json has %d steps, want %d:\n%s", len(plan.Steps), len(tc.want), b)
			}
			var lines []string
			for i, w := range tc.want {
				st := plan.Steps[i]
				tarball := "kudo/" + w.operator + "-" + w.tag + ".tgz"
				if w.in != "" {
					// Installed with the tarball carrying it, by no
					// command of its own.
					if st.Tarball != w.in || st.Folder != w.folder || st.Command != nil || st.Instance != w.instance || st.Parent != w.parent || !st.SkipInstance {
						t.Errorf("step %d = %+v\nwant %+v", i+1, st, w)
					}
					continue
				}
				if st.Order != i+1 || st.Operator != w.operator || versionTag(st.AppVersion, st.OperatorVersion) != w.tag || st.Instance != w.instance || st.Parent != w.parent || st.Tarball != tarball || st.Parameters != w.params {
					t.Errorf("step %d = %+v\nwant %+v", i+1, st, w)
				}
				if st.SkipInstance != (w.parent != "") {
					t.Errorf("step %d (%s): skipInstance = %v", i+1, st.Instance, st.SkipInstance)
				}
				if p := k.lock.PackageAt(st.Source, st.Digest); p == nil || p.Kind != format.KindKudoOperator {
					t.Errorf("step %d names %s@%s, not a locked operator", i+1, st.Source, st.Digest)
				}
				// The tarball is the repository's, byte for byte.
				got, err := os.ReadFile(filepath.Join(k.dest, filepath.FromSlash(tarball)))
				if err != nil || !bytes.Equal(got, k.repo.tarballOf(w.operator, w.tag)) {
					t.Errorf("%s differs from the repository's tarball (%v)", tarball, err)
				}
				if w.params != "" {
					parent := tc.pkgs[slices.IndexFunc(tc.pkgs, func(f fixture) bool { return f.name == w.from })]
					got, err := os.ReadFile(filepath.Join(k.dest, filepath.FromSlash(w.params)))
					if err != nil || string(got) != parent.templates[st.ParameterFile] {
						t.Errorf("%s = %q (%v), want %s's template %s", w.params, got, err, parent.name, st.ParameterFile)
					}
				}
				cmd := []string{"kubectl", "kudo", "install", "./" + tarball, "--instance", w.instance}
				if w.parent != "" {
					cmd = append(cmd, "--skip-instance")
				}
				if !slices.Equal(st.Command, cmd) {
					t.Errorf("step %d command = %q, want %q", i+1, st.Command, cmd)
				}
				lines = append(lines, strings.Join(cmd[1:], " "))
			}
			checkScript(t, filepath.Join(k.dest, InstallDir, InstallScript), lines)
		})
	}
}

// checkScript runs install.sh with a kubectl that records its arguments,
// from another directory, with KUDO_REPO set and extra arguments: it must
// run every command of the plan in order, from the install directory,
// --repo=KUDO_REPO and the extra arguments last.
func checkScript(t *testing.T, script string, want []string) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		if runtime.GOOS == "windows" {
			t.Skip("no POSIX sh on Windows")
		}
		t.Fatalf("install.sh is POSIX sh, and this system has none on PATH: %v", err)
	}
	bin := t.TempDir()
	record := filepath.Join(bin, "calls")
	fake := "#!/bin/sh\n" +
		"for a in \"$@\"; do printf '%s ' \"$a\" >> '" + record + "'; done\n" +
		"[ -f \"$3\" ] || { echo \"missing $3\" >&2; exit 1; }\n" +
		"echo >> '" + record + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, script, "--namespace", "prod")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "KUBECTL="+filepath.Join(bin, "kubectl"), "KUDO_REPO=mirror repo")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		got = append(got, strings.TrimSpace(l))
	}
	var wantLines []string
	for _, w := range want {
		wantLines = append(wantLines, w+" --repo=mirror repo --namespace prod")
	}
	if !slices.Equal(got, wantLines) {
		t.Fatalf("install.sh ran:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
	}
}
