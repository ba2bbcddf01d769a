package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/kudo"
)

// TestE2EKudoTarballURLRoot: a ROOT that is the URL of a KUDO operator
// tarball is recognised by its content (operator.yaml at its root, as
// kudobuilder/kudo pkg/kudoctl/packages/reader/parser.go reads it), not
// read as a Helm chart repository: locked as the KUDO package at that
// URL with the images its templates deploy, mirrored, and installed with
// the repository and the image registry stopped. A Helm chart archive's
// URL and a tarball of neither kind are bad input saying what they are.
func TestE2EKudoTarballURLRoot(t *testing.T) {
	t.Parallel()
	w := newKudoE2EWorld(t)
	chart, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "web", Version: "1.0.0"}))
	if err != nil {
		t.Fatal(err)
	}
	w.repo.srv.Put("/v1/web-1.0.0.tgz", chart)
	w.repo.srv.Put("/v1/junk-1.0.0.tgz", []byte("not a tarball"))
	env := e2eEnv(t)
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"web-1.0.0.tgz", []string{"is a Helm chart archive"}},
		{"junk-1.0.0.tgz", []string{"neither a KUDO operator package"}},
	} {
		env.Expect(2, []string{"lock", w.repo.URL + "/" + tc.file}, tc.want...)
	}

	url := w.repo.URL + "/zookeeper-3.6.2_0.1.0.tgz"
	env.MustRun("lock", url)
	first := env.ReadFile("ferry.lock")
	env.MustRun("lock", url)
	if again := env.ReadFile("ferry.lock"); again != first {
		t.Errorf("a second ferry lock changed the lock:\n%s\nwas\n%s", again, first)
	}
	l := e2eReadLock(t, env, "ferry.lock")
	var kinds []string
	for _, p := range l.Resolved() {
		kinds = append(kinds, p.Kind+" "+p.Source)
	}
	slices.Sort(kinds)
	want := []string{"image " + w.src.Host + "/acme/zookeeper", "kudo.operator " + kudo.SourcePrefix + url}
	if !slices.Equal(kinds, want) {
		t.Fatalf("locked %v, want %v", kinds, want)
	}
	mirror := registrytest.New(t)
	env.MustRun("mirror", "--to", mirror.Host+"/m")
	env.MustRun("verify")
	w.repo.srv.Close()
	w.src.Stop()
	env.MustRun("install", "--dest", "out")
	var plan kudo.InstallPlan
	e2eJSONFile(t, env.Path(filepath.Join("out", kudo.InstallDir, kudo.InstallPlanFile)), &plan)
	if len(plan.Steps) != 1 || plan.Steps[0].Operator != "zookeeper" || plan.Steps[0].Tarball != "kudo/zookeeper-3.6.2_0.1.0.tgz" || plan.Steps[0].Instance != "zookeeper" {
		t.Fatalf("kudo/plan.json = %+v", plan.Steps)
	}
	if got := env.ReadFile("out/kudo/zookeeper-3.6.2_0.1.0.tgz"); got != string(w.repo.tarballs["zookeeper-3.6.2_0.1.0.tgz"]) {
		t.Errorf("kudo/zookeeper-3.6.2_0.1.0.tgz differs from the URL's tarball")
	}
}
