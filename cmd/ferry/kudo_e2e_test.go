package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/kudo"
	"github.com/ferryhq/ferry/lock"
)

// kudoE2EWorld is a source registry holding the images the packages'
// templates deploy, a KUDO repository with the KEP's Kafka → Zookeeper
// example and its AA tree, and the versions expected in the lock.
type kudoE2EWorld struct {
	src  *registrytest.Registry
	repo *kudoE2ERepo
	// images are the image repositories pushed (SRC/acme/NAME), by
	// name, each at the tag the templates name.
	images map[string]string
}

// newKudoE2EWorld publishes:
//
//   - zookeeper 3.4.14_0.3.0 and 3.6.2_0.1.0, each deploying its own
//     image repository at its appVersion;
//   - kafka 2.5.0_1.3.1, whose task zookeeper-operator asks zookeeper
//     unpinned (the newest, 3.6.2_0.1.0) and whose task legacy-zk asks
//     operatorVersion 0.3.0 alone with instanceName legacy (3.4.14_0.3.0),
//     and which deploys the image its params.yaml names;
//   - KEP-29's tree: aa (deploying an image) needs bb and cc, bb needs
//     ee and gg.
func newKudoE2EWorld(t *testing.T) *kudoE2EWorld {
	t.Helper()
	ctx := context.Background()
	w := &kudoE2EWorld{src: registrytest.New(t), images: map[string]string{}}
	c := registrytest.Client(t)
	for name, tag := range map[string]string{"kafka": "2.5.0", "zookeeper": "3.6.2", "zookeeper-legacy": "3.4.14", "aa": "0.1.0"} {
		repo := registrytest.Repository(t, c, w.src.Host+"/acme/"+name)
		desc, err := fixture.PushImage(ctx, repo, "kudo-"+name, 256)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.Tag(ctx, desc, tag); err != nil {
			t.Fatal(err)
		}
		w.images[name] = w.src.Host + "/acme/" + name + ":" + tag
	}
	img := func(repo string) map[string]string {
		return map[string]string{"deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Name }}
  namespace: {{ .Namespace }}
spec:
  template:
    spec:
      containers:
        - name: main
          image: ` + repo + `
`}
	}
	w.repo = newKudoE2ERepo(t, []kudoE2EOperator{
		{name: "zookeeper", app: "3.4.14", opv: "0.3.0", templates: img(w.src.Host + "/acme/zookeeper-legacy:{{ .AppVersion }}")},
		{name: "zookeeper", app: "3.6.2", opv: "0.1.0", templates: img(w.src.Host + "/acme/zookeeper:{{ .AppVersion }}")},
		{
			name: "kafka", app: "2.5.0", opv: "1.3.1",
			tasks: []kudo.Task{
				{Name: "zookeeper-operator", Kind: kudo.TaskKindKudoOperator, Spec: kudo.TaskSpec{Package: "zookeeper"}},
				{Name: "legacy-zk", Kind: kudo.TaskKindKudoOperator, Spec: kudo.TaskSpec{Package: "zookeeper", OperatorVersion: "0.3.0", InstanceName: "legacy"}},
			},
			params:    []kudo.Parameter{{Name: "KAFKA_IMAGE", Default: w.src.Host + "/acme/kafka"}},
			templates: img("{{ .Params.KAFKA_IMAGE }}:{{ .AppVersion }}"),
		},
		{name: "aa", opv: "0.1.0", deps: []string{"bb", "cc"}, templates: img(w.images["aa"])},
		{name: "bb", opv: "0.2.0", deps: []string{"ee", "gg"}},
		{name: "cc", opv: "0.3.0"},
		{name: "ee", opv: "0.4.0"},
		{name: "gg", opv: "0.5.0"},
	})
	return w
}

// kudoE2EYAML is a ferry.yaml with operators kafka and aa of repository
// URL; extra is appended.
func kudoE2EYAML(url, extra string) string {
	return fmt.Sprintf(`apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
operators:
  - package: kafka
    repo: test
  - package: aa
    repo: test
kudo:
  repositories: {test: %q}
%s`, url, extra)
}

// kudoE2ELocked returns the lock's KUDO operators as "NAME:VERSION",
// sorted, and its images as "SOURCE:VERSION".
func kudoE2ELocked(t *testing.T, l *lock.Lock, repoURL string) (ops, images []string) {
	t.Helper()
	for _, p := range l.Resolved() {
		switch p.Kind {
		case "kudo.operator":
			ops = append(ops, strings.TrimPrefix(p.Source, kudo.SourcePrefix+repoURL+"/")+":"+p.Version)
		case "image":
			images = append(images, p.Source+":"+p.Version)
		default:
			t.Errorf("lock: %s of kind %q", p.Source, p.Kind)
		}
	}
	slices.Sort(ops)
	slices.Sort(images)
	return ops, images
}

// kudoE2ECheckDigests checks that every KUDO operator of l is the
// artifact of the repository's tarball for its version, read from
// repoURL: the manifest digest pins the exact tarball bytes.
func kudoE2ECheckDigests(t *testing.T, l *lock.Lock, repo *kudoE2ERepo, repoURL string) {
	t.Helper()
	for _, p := range l.Resolved() {
		if p.Kind != "kudo.operator" {
			continue
		}
		name := strings.TrimPrefix(p.Source, kudo.SourcePrefix+repoURL+"/")
		var op *kudoE2EOperator
		for i, o := range repo.ops {
			if o.name == name && o.tag() == p.Version {
				op = &repo.ops[i]
			}
		}
		if op == nil {
			t.Errorf("lock: %s:%s is no package of the repository", p.Source, p.Version)
			continue
		}
		_, desc, err := kudo.Artifact(repo.tarballs[op.file()], kudo.Config{Name: op.name, AppVersion: op.app, OperatorVersion: op.opv, Repository: repoURL})
		if err != nil {
			t.Fatal(err)
		}
		if p.Digest != desc.Digest.String() {
			t.Errorf("lock: %s:%s is %s, the artifact of the repository's tarball %s", p.Source, p.Version, p.Digest, desc.Digest)
		}
		if want := "sha256:" + kudoE2ESum(repo.tarballs[op.file()]); p.Attributes[kudo.AttributeTarballDigest] != want {
			t.Errorf("lock: %s:%s records tarballDigest %q, the repository index's digest is %s", p.Source, p.Version, p.Attributes[kudo.AttributeTarballDigest], want)
		}
	}
}

// kudoE2ESum is b's sha256 in hex, as KUDO's index.yaml writes it.
func kudoE2ESum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestE2EKudoClosure runs the KEP's Kafka → Zookeeper example (one
// dependency unpinned, one asked by operatorVersion alone under its own
// instance name) and the AA tree through lock, mirror, verify, an
// archive carried into a second registry and install, with the KUDO
// repository and the source registry stopped after the mirror; then
// `ferry serve` on the mirror's storage answers a KUDO repository from
// which a fresh `ferry lock` resolves the same packages.
func TestE2EKudoClosure(t *testing.T) {
	t.Parallel()
	w := newKudoE2EWorld(t)
	env := e2eEnv(t)
	env.WriteFile("ferry.yaml", kudoE2EYAML(w.repo.URL, ""))
	// ferry resolve -o plan: Kafka's Zookeeper instances before Kafka.
	plan := env.MustRun("resolve", "-o", "plan").Stdout
	var planned []string
	for _, line := range strings.Split(strings.TrimSpace(plan), "\n") {
		if _, rest, ok := strings.Cut(line, " instance "); ok {
			name, _, _ := strings.Cut(rest, " ")
			planned = append(planned, name)
		}
	}
	if want := []string{"kafka.zookeeper", "kafka.legacy", "kafka", "aa.bb.ee", "aa.bb.gg", "aa.bb", "aa.cc", "aa"}; !slices.Equal(planned, want) {
		t.Errorf("ferry resolve -o plan instances %q, want %q:\n%s", planned, want, plan)
	}
	env.MustRun("lock")
	l := e2eReadLock(t, env, "ferry.lock")
	wantOps := []string{"aa:0.1.0", "bb:0.2.0", "cc:0.3.0", "ee:0.4.0", "gg:0.5.0", "kafka:2.5.0_1.3.1", "zookeeper:3.4.14_0.3.0", "zookeeper:3.6.2_0.1.0"}
	var wantImages []string
	for _, ref := range w.images {
		wantImages = append(wantImages, ref)
	}
	slices.Sort(wantImages)
	ops, images := kudoE2ELocked(t, l, w.repo.URL)
	if !slices.Equal(ops, wantOps) {
		t.Errorf("locked operators %q\nwant %q", ops, wantOps)
	}
	if !slices.Equal(images, wantImages) {
		t.Errorf("locked images %q\nwant %q", images, wantImages)
	}
	kudoE2ECheckDigests(t, l, w.repo, w.repo.URL)

	// Mirror, then stop the sources: everything below reads the mirror.
	mirror := registrytest.New(t)
	to := mirror.Host + "/m"
	env.MustRun("mirror", "--to", to)
	// The archive is written while the sources run: `mirror
	// --to-archive` reads the sources, not the mirror.
	env.MustRun("mirror", "--lock", "ferry.lock", "--to-archive", "kudo.tar")
	w.src.Stop()
	w.repo.srv.Close()
	env.MustRun("verify")
	env.MustRun("verify", "--deep")
	l = e2eReadLock(t, env, "ferry.lock")
	for _, p := range l.Resolved() {
		if p.Kind == "kudo.operator" && !strings.HasPrefix(p.Mirror, to+"/kudo-operators/") {
			t.Errorf("%s:%s mirrored at %q, want %s/kudo-operators/NAME", p.Source, p.Version, p.Mirror, to)
		}
	}

	// Across the gap: the archive imports into a second registry.
	air := registrytest.New(t)
	env.MustRun("mirror", "--lock", "ferry.lock", "--from-archive", "kudo.tar", "--to", air.Host+"/air")
	env.MustRun("verify", "--deep", "--mirror", air.Host+"/air")

	// Install from the second registry: the KEP's order, dependencies
	// with --skip-instance, the repository's exact tarballs.
	env.MustRun("install", "--dest", "out", "--mirror", air.Host+"/air")
	var installPlan kudo.InstallPlan
	e2eJSONFile(t, env.Path(filepath.Join("out", kudo.InstallDir, kudo.InstallPlanFile)), &installPlan)
	type step struct{ op, tag, instance, parent string }
	want := []step{
		{"zookeeper", "3.6.2_0.1.0", "kafka.zookeeper", "kafka"},
		{"zookeeper", "3.4.14_0.3.0", "kafka.legacy", "kafka"},
		{"kafka", "2.5.0_1.3.1", "kafka", ""},
		{"ee", "0.4.0", "aa.bb.ee", "aa.bb"},
		{"gg", "0.5.0", "aa.bb.gg", "aa.bb"},
		{"bb", "0.2.0", "aa.bb", "aa"},
		{"cc", "0.3.0", "aa.cc", "aa"},
		{"aa", "0.1.0", "aa", ""},
	}
	var got []step
	for _, st := range installPlan.Steps {
		got = append(got, step{st.Operator, strings.TrimSuffix(strings.TrimPrefix(st.Tarball, kudo.InstallDir+"/"+st.Operator+"-"), ".tgz"), st.Instance, st.Parent})
	}
	// ferry.yaml's root order (kafka, then aa), each root's closure in
	// KEP-29's order.
	if !slices.Equal(got, want) {
		t.Errorf("kudo/plan.json steps\n%+v\nwant\n%+v", got, want)
	}
	for i, st := range installPlan.Steps {
		if st.Order != i+1 {
			t.Errorf("step %d has order %d", i+1, st.Order)
		}
		skip := slices.Contains(st.Command, "--skip-instance")
		if st.SkipInstance != (st.Parent != "") || skip != st.SkipInstance {
			t.Errorf("step %d (%s): skipInstance %v, command %q; want --skip-instance exactly on dependencies", i+1, st.Instance, st.SkipInstance, st.Command)
		}
		data, err := os.ReadFile(env.Path(filepath.Join("out", filepath.FromSlash(st.Tarball))))
		if err != nil {
			t.Fatal(err)
		}
		orig, ok := w.repo.tarballs[strings.TrimPrefix(st.Tarball, kudo.InstallDir+"/")]
		if !ok || kudoE2ESum(data) != kudoE2ESum(orig) {
			t.Errorf("%s: sha256 %s, not the repository's tarball", st.Tarball, kudoE2ESum(data))
		}
	}
	// install.sh runs the same commands in the same order.
	var cmds []string
	for _, line := range strings.Split(env.ReadFile(filepath.Join("out", kudo.InstallDir, kudo.InstallScript)), "\n") {
		if strings.Contains(line, "'kudo' 'install'") {
			cmds = append(cmds, line)
		}
	}
	if len(cmds) != len(want) {
		t.Fatalf("install.sh has %d kudo install commands, want %d", len(cmds), len(want))
	}
	for i, w := range want {
		if !strings.Contains(cmds[i], "'./kudo/"+w.op+"-"+w.tag+".tgz' '--instance' '"+w.instance+"'") || strings.Contains(cmds[i], "'--skip-instance'") != (w.parent != "") {
			t.Errorf("install.sh command %d: %s\nwant %s as %s, --skip-instance %v", i+1, cmds[i], w.op, w.instance, w.parent != "")
		}
	}

	// ferry serve on the mirror's storage answers a KUDO repository; a
	// fresh lock resolves the same operators from it, the images from
	// the registry it serves too (the sources are still stopped).
	mirror.Stop()
	addr, _ := clitest.Serve(t, mirror.Root)
	served := "http://" + addr + "/kudo"
	resp, err := http.Get(served + "/index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ib, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/index.yaml: %d %v", served, resp.StatusCode, err)
	}
	idx, err := kudo.ParseIndex(ib)
	if err != nil {
		t.Fatalf("served index.yaml: %v\n%s", err, ib)
	}
	var listed []string
	for name, vs := range idx.Entries {
		for _, v := range vs {
			listed = append(listed, name+":"+v.Tag())
			orig := w.repo.tarballs[name+"-"+v.Tag()+".tgz"]
			if v.Digest != kudoE2ESum(orig) {
				t.Errorf("served index: %s %s digest %s, the repository's tarball is %s", name, v.Tag(), v.Digest, kudoE2ESum(orig))
			}
			if len(v.URLs) == 0 {
				t.Errorf("served index: %s %s has no URL", name, v.Tag())
				continue
			}
			resp, err := http.Get(v.URLs[0])
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || kudoE2ESum(b) != kudoE2ESum(orig) {
				t.Errorf("GET %s: %d %v, sha256 %s, want the repository's tarball %s", v.URLs[0], resp.StatusCode, err, kudoE2ESum(b), kudoE2ESum(orig))
			}
		}
	}
	slices.Sort(listed)
	if !slices.Equal(listed, wantOps) {
		t.Errorf("served index lists %q, want %q", listed, wantOps)
	}
	var replace strings.Builder
	replace.WriteString("replace:\n")
	for name := range w.images {
		fmt.Fprintf(&replace, "  - {from: %s/acme/%s, to: %s/m/acme/%s}\n", w.src.Host, name, addr, name)
	}
	fresh := e2eEnv(t)
	fresh.WriteFile("ferry.yaml", kudoE2EYAML(served, replace.String()))
	fresh.MustRun("lock")
	fl := e2eReadLock(t, fresh, "ferry.lock")
	ops, _ = kudoE2ELocked(t, fl, served)
	if !slices.Equal(ops, wantOps) {
		t.Errorf("locked from ferry serve: operators %q\nwant %q", ops, wantOps)
	}
	kudoE2ECheckDigests(t, fl, w.repo, served)
	if b, _ := json.Marshal(fl.Resolved()); bytes.Contains(b, []byte(w.repo.URL)) {
		t.Errorf("the fresh lock names the stopped repository")
	}
}

// TestE2EKudoBadInput: each bad KUDO input is a clear error naming the
// package and the chain that led to it, with the exit code PRODUCT.md
// gives ("Exit codes": 2 for the user's own bad input file, 3 when a
// tarball and its index disagree, 1 for a graph that cannot be
// resolved), and no lock is written.
func TestE2EKudoBadInput(t *testing.T) {
	t.Parallel()
	op := func(name string, tasks ...kudo.Task) kudoE2EOperator {
		return kudoE2EOperator{name: name, opv: "1.0.0", tasks: tasks}
	}
	dep := func(task, pkg string) kudo.Task {
		return kudo.Task{Name: task, Kind: kudo.TaskKindKudoOperator, Spec: kudo.TaskSpec{Package: pkg}}
	}
	malformed := "name: broken\noperatorVersion: [1.0.0\n"
	broken := op("broken")
	broken.raw = malformed
	tampered := op("tampered")
	repo := newKudoE2ERepo(t, nil)
	repo.publish(t, func(idx *kudo.IndexFile) {
		// The index records the digest of other bytes.
		idx.Entries["tampered"][0].Digest = kudoE2ESum([]byte("other bytes"))
	},
		op("zookeeper"),
		broken,
		op("usesbroken", dep("broken-operator", "broken")),
		op("typo", dep("zk", "zookeper")),
		tampered,
		op("usestampered", dep("t", "tampered")),
		op("aa", dep("bb", "bb")),
		op("bb", dep("aa", "aa")),
		op("nopkg", kudo.Task{Name: "zk", Kind: kudo.TaskKindKudoOperator}),
		op("wrapper", dep("inner", "nopkg")),
	)
	params := "apiVersion: kudo.dev/v1beta1\nparameters: []\n"
	localOp := func(name, tasks string) string {
		return "apiVersion: kudo.dev/v1beta1\nname: " + name + "\noperatorVersion: 0.1.0\ntasks:\n" + tasks
	}
	for _, tc := range []struct {
		name string
		// files are local files written (a package folder being
		// built); root is ferry.yaml's operator (package: ROOT, repo:
		// test); args are ferry's, `lock` when nil.
		files map[string]string
		root  string
		args  []string
		code  int
		want  []string
		// chain, when set, must match the output.
		chain string
	}{
		{
			name:  "malformed operator.yaml, local root",
			files: map[string]string{"pkg/operator.yaml": malformed, "pkg/params.yaml": params},
			args:  []string{"lock", "pkg/operator.yaml"}, code: 2,
			want: []string{"pkg/operator.yaml: malformed KUDO package: operator.yaml: yaml: line 1"},
		},
		{
			name: "malformed operator.yaml in a local folder dependency",
			files: map[string]string{
				"pkg/operator.yaml": localOp("local", "  - {name: helper, kind: KudoOperator, spec: {package: ./helper}}\n"), "pkg/params.yaml": params,
				"pkg/helper/operator.yaml": malformed,
			},
			root: "./pkg", code: 2,
			want: []string{"operators[0]: ./pkg: local: task \"helper\": package ./helper:", "malformed KUDO package: operator.yaml"},
		},
		{
			name: "malformed operator.yaml in a repository dependency", root: "usesbroken", code: 1,
			want:  []string{"malformed KUDO package: operator.yaml: yaml: line 1"},
			chain: `/usesbroken:1\.0\.0 -> \S+/broken \(via broken-operator\): fetching \S+/broken:1\.0\.0: `,
		},
		{
			name: "unknown package name", root: "typo", code: 1,
			want:  []string{`operator "zookeper": not in the index of KUDO repository ` + repo.URL, "it lists: aa, bb, broken"},
			chain: `/typo:1\.0\.0 -> \S+/zookeper \(via zk\): `,
		},
		{
			name: "unknown root package name", root: "nosuch", code: 1,
			want: []string{`operator "nosuch": not in the index`},
		},
		{
			name: "tarball digest differs from the index", root: "usestampered", code: 3,
			want:  []string{"tampered-1.0.0.tgz: package tarball does not match the repository index's digest: the index says sha256:" + kudoE2ESum([]byte("other bytes")) + ", the download is sha256:" + kudoE2ESum(repo.tarballs["tampered-1.0.0.tgz"])},
			chain: `/usestampered:1\.0\.0 -> \S+/tampered \(via t\): `,
		},
		{
			name: "cycle", root: "aa", code: 1,
			chain: `dependency cycle: \S+/aa:1\.0\.0 -> \S+/bb:1\.0\.0 -> \S+/aa:1\.0\.0`,
		},
		{
			name: "cycle of local folders",
			files: map[string]string{
				"aa/operator.yaml": localOp("aa", "  - {name: bb, kind: KudoOperator, spec: {package: ../bb}}\n"), "aa/params.yaml": params,
				"bb/operator.yaml": localOp("bb", "  - {name: aa, kind: Operator, spec: {package: ../aa}}\n"), "bb/params.yaml": params,
			},
			args: []string{"lock", "aa"}, code: 2,
			want: []string{"aa: cyclic operator dependency: aa -> bb -> aa"},
		},
		{
			name: "KudoOperator task without package", root: "wrapper", code: 1,
			want:  []string{`nopkg: task "zk" of kind KudoOperator has no spec.package`},
			chain: `/wrapper:1\.0\.0 -> \S+/nopkg \(via inner\): `,
		},
		{
			name:  "KudoOperator task without package, local root",
			files: map[string]string{"pkg/operator.yaml": localOp("local", "  - {name: zk, kind: KudoOperator, spec: {operatorVersion: 0.3.0}}\n"), "pkg/params.yaml": params},
			root:  "./pkg", code: 2,
			want: []string{`operators[0]: ./pkg: local: task "zk" of kind KudoOperator has no spec.package`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := clitest.New(t)
			for name, content := range tc.files {
				env.WriteFile(name, content)
			}
			root := tc.root
			if root == "" {
				root = "zookeeper"
			}
			env.WriteFile("ferry.yaml", fmt.Sprintf(`apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
operators:
  - package: %s
    repo: test
kudo:
  repositories: {test: %q, community: %q}
`, root, repo.URL, repo.URL))
			args := tc.args
			if args == nil {
				args = []string{"lock"}
			}
			r := env.Expect(tc.code, args, tc.want...)
			t.Logf("ferry %s: exit %d\n%s", strings.Join(args, " "), r.Code, r.Stderr)
			if tc.chain != "" && !regexp.MustCompile(tc.chain).MatchString(r.Stderr) {
				t.Errorf("output does not match %s", tc.chain)
			}
			e2eAbsent(t, env.Path("ferry.lock"))
		})
	}
}

// TestE2EKudoLockKeeps: a dependency asked by operatorVersion alone, one
// asked by appVersion alone and one unpinned (one operator locked at two
// versions) keep their locked versions when re-resolved in the mirror
// (verify --resolve) and when the repository publishes newer matching
// ones, until `ferry lock --update NAME` moves them to the newest KUDO
// would pick.
func TestE2EKudoLockKeeps(t *testing.T) {
	t.Parallel()
	zk := func(app, opv string) kudoE2EOperator { return kudoE2EOperator{name: "zookeeper", app: app, opv: opv} }
	task := func(name string, spec kudo.TaskSpec) kudo.Task {
		spec.Package = "zookeeper"
		return kudo.Task{Name: name, Kind: kudo.TaskKindKudoOperator, Spec: spec}
	}
	repo := newKudoE2ERepo(t, []kudoE2EOperator{
		zk("3.4.14", "0.3.0"),
		zk("3.6.2", "0.1.0"),
		{name: "kafka", app: "2.5.0", opv: "1.3.1", tasks: []kudo.Task{
			task("by-opv", kudo.TaskSpec{OperatorVersion: "0.3.0", InstanceName: "by-opv"}),
			task("by-app", kudo.TaskSpec{AppVersion: "3.4.14", InstanceName: "by-app"}),
			task("newest", kudo.TaskSpec{InstanceName: "newest"}),
		}},
	})
	env := e2eEnv(t)
	env.WriteFile("ferry.yaml", fmt.Sprintf(`apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
operators:
  - package: kafka
    repo: test
kudo:
  repositories: {test: %q}
`, repo.URL))
	edges := func() []string {
		t.Helper()
		l := e2eReadLock(t, env, "ferry.lock")
		var out []string
		for _, p := range l.Resolved() {
			for _, d := range p.Dependencies {
				i := strings.LastIndexByte(d.Resolved, '@')
				v := "?"
				if q := l.PackageAt(d.Resolved[:i], d.Resolved[i+1:]); q != nil {
					v = q.Version
				}
				out = append(out, d.Name+"="+v)
			}
		}
		slices.Sort(out)
		return out
	}
	env.MustRun("lock")
	if got, want := edges(), []string{"by-app=3.4.14_0.3.0", "by-opv=3.4.14_0.3.0", "newest=3.6.2_0.1.0"}; !slices.Equal(got, want) {
		t.Fatalf("locked edges %q, want %q", got, want)
	}
	// Re-resolved in the mirror alone, the closure is the lock's: the
	// unpinned edge keeps 3.6.2_0.1.0, not the other locked version.
	mirror := registrytest.New(t)
	env.MustRun("mirror", "--to", mirror.Host+"/m")
	env.MustRun("verify", "--resolve")
	first := env.ReadFile("ferry.lock")
	// Newer versions for each: 3.5.0_0.3.0 (operatorVersion 0.3.0),
	// 3.4.14_0.4.0 (appVersion 3.4.14), 3.7.0_0.1.0 (the newest).
	repo.publish(t, nil, zk("3.5.0", "0.3.0"), zk("3.4.14", "0.4.0"), zk("3.7.0", "0.1.0"))
	env.MustRun("lock")
	if got := env.ReadFile("ferry.lock"); got != first {
		t.Errorf("ferry lock changed the lock after the repository published newer versions: %q", edges())
	}
	env.MustRun("lock", "--update", "zookeeper")
	if got, want := edges(), []string{"by-app=3.4.14_0.4.0", "by-opv=3.5.0_0.3.0", "newest=3.7.0_0.1.0"}; !slices.Equal(got, want) {
		t.Errorf("after --update zookeeper: %q, want %q", got, want)
	}
}
