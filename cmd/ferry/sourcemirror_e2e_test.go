package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestSourceMirrorsLocalRoot: a local chart given as ROOT deploys images
// of a registry that cannot be reached (a stopped one); the ferry.yaml
// beside the chart maps that registry to a loopback mirror and excludes
// one image. Offline, ferry reads the mirror alone; the lock names the
// original source, is the same bytes on a second run, and resolve -o json
// says where each package was read. A key ferry.yaml does not know is an
// error there too.
func TestSourceMirrorsLocalRoot(t *testing.T) {
	ctx := context.Background()
	dead := registrytest.New(t)
	dead.Stop()
	mir := registrytest.New(t)
	c := registrytest.Client(t)
	repo := registrytest.Repository(t, c, mir.Host+"/cache/images/web")
	desc, err := fixture.PushImage(ctx, repo, "mirrored-web")
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, "1.0"); err != nil {
		t.Fatal(err)
	}
	env := clitest.New(t)
	ch := charttest.Chart(charttest.ChartSpec{Name: "app", Version: "0.1.0", Templates: map[string]string{
		"web.yaml":  deployment("web", dead.Host+"/images/web:1.0"),
		"skip.yaml": deployment("skip", dead.Host+"/images/skip:1.0"),
	}})
	if _, err := charttest.SaveChartDir(ch, env.Dir); err != nil {
		t.Fatal(err)
	}
	source := dead.Host + "/images/web"
	for _, tc := range []struct {
		name   string
		config string
		args   []string
		code   int
		want   []string
	}{
		{name: "unknown key", config: "bogusKey: 1\n", args: []string{"resolve", "./app"}, code: 2, want: []string{"unknown key bogusKey"}},
		{name: "exclude is honoured, mirror read", config: fmt.Sprintf("mirrors:\n  %s: %s/cache\nexclude: [%s/images/skip]\n", dead.Host, mir.Host, dead.Host),
			args: []string{"lock", "./app", "--offline"}, code: 0},
		{name: "without the mirror, offline reads nothing", config: fmt.Sprintf("exclude: [%s/images/skip]\n", dead.Host),
			args: []string{"resolve", "./app", "--offline"}, code: 1, want: []string{"offline, and no mirror serves it"}},
		{name: "--mirror-source", config: fmt.Sprintf("exclude: [%s/images/skip]\n", dead.Host),
			args: []string{"resolve", "./app", "--offline", "--mirror-source", dead.Host + "=" + mir.Host + "/cache"}, code: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n"+tc.config)
			env.Expect(tc.code, tc.args, tc.want...)
		})
	}

	// The lock keeps the original name, and is the same bytes again.
	env.WriteFile("ferry.yaml", fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nmirrors:\n  %s: [%s/cache]\nexclude: [%s/images/skip]\n", dead.Host, mir.Host, dead.Host))
	env.MustRun("lock", "./app", "--offline")
	first := env.ReadFile("ferry.lock")
	if !strings.Contains(first, "source: "+source+"\n") || strings.Contains(first, mir.Host) || strings.Contains(first, "skip") {
		t.Errorf("lock does not name the source alone:\n%s", first)
	}
	env.MustRun("lock", "./app", "--offline", "--update")
	if again := env.ReadFile("ferry.lock"); again != first {
		t.Errorf("lock changed between runs:\n%s\n---\n%s", first, again)
	}
	var out struct {
		Packages []struct{ Source, ReadFrom string }
	}
	if err := json.Unmarshal([]byte(env.MustRun("resolve", "./app", "--offline", "-o", "json").Stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Packages) != 1 || out.Packages[0].Source != source || out.Packages[0].ReadFrom != mir.Host+"/cache/images/web" {
		t.Errorf("resolve -o json packages = %+v", out.Packages)
	}

	// --config names another ferry.yaml; the one beside is not read.
	env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nbogusKey: 1\n")
	other := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(other, []byte(fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nmirrors:\n  %s: %s/cache\nexclude: [%s/images/skip]\n", dead.Host, mir.Host, dead.Host)), 0o644); err != nil {
		t.Fatal(err)
	}
	env.MustRun("resolve", "./app", "--offline", "--config", other)
}
