package mixin

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin/mixintest"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/verify"
)

// TestExtensionRoundTrip runs the format through every step of a run, as
// the pipeline calls it: Lock, Prepare and Push (each binary downloaded
// once), Verify, StagePorterHome (both layouts), Archive and Import.
func TestExtensionRoundTrip(t *testing.T) {
	ctx := context.Background()
	host := runtime.GOOS + "/" + runtime.GOARCH
	fs := mixintest.NewFeed(t, mixintest.Options{Platforms: slices.Compact([]string{"linux/amd64", host})})
	mirror := registrytest.New(t)
	run := newRun(t)
	in := inputs(t, map[string]any{
		KeyMixins:    []Entry{{Name: "exec", Version: "1.x", Feed: fs.URL}, {Name: "exec", Version: "v1.0.0", Feed: fs.URL}},
		KeyPlatforms: []string{host},
	})
	l := &lock.Lock{APIVersion: lock.APIVersion, Kind: lock.Kind}
	f := Format{}
	if err := f.Lock(ctx, run, in, nil, l, nil); err != nil {
		t.Fatal(err)
	}
	tr, err := f.Prepare(ctx, run, l)
	if err != nil {
		t.Fatal(err)
	}
	to := relocate.Mapping{Host: mirror.Host, Prefix: "m"}
	moved, err := tr.Push(ctx, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 2 || moved[0].Format != "mixin" || !strings.HasPrefix(moved[0].Mirror, mirror.Host+"/m/porter-mixins/exec@sha256:") {
		t.Fatalf("moved %+v", moved)
	}
	downloads := map[string]int{}
	for _, p := range fs.Requests() {
		downloads[p]++
	}
	for p, n := range downloads {
		if n != 1 {
			t.Errorf("%s requested %d times in one run", p, n)
		}
	}
	locked, err := FromLock(l)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range locked {
		if m.Mirror == "" {
			t.Errorf("%s %s: no mirror recorded", m.Name, m.Version)
		}
	}

	for _, deep := range []bool{false, true} {
		rep := &verify.Report{}
		if err := f.Verify(ctx, run, l, verify.Options{Deep: deep}, rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) != 0 || rep.Manifests != 2 {
			t.Errorf("verify (deep %v): %d manifests, problems %+v", deep, rep.Manifests, rep.Problems)
		}
	}

	// PORTER_HOME, over an earlier install that holds other files.
	fs.Close()
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(filepath.Join(home, "mixins", "exec"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		ph, err := StagePorterHome(ctx, run.Client, l, nil, home, runtime.GOOS, runtime.GOARCH)
		if err != nil {
			t.Fatal(err)
		}
		if err := ph.Commit(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ph.Mixins, []string{"exec@v1.2.3"}) || len(ph.Cached) != 2 {
			t.Errorf("installed %q, cached %q", ph.Mixins, ph.Cached)
		}
	}
	src := strings.ReplaceAll(strings.TrimPrefix(fs.Base, "http://"), ":", "_")
	clientFile := "exec"
	if runtime.GOOS == "windows" {
		clientFile += ".exe"
	}
	client := BinaryName("exec", runtime.GOOS, runtime.GOARCH)
	for rel, want := range map[string][]byte{
		"config.toml":                                                     []byte("x"),
		"mixins/exec/" + clientFile:                                       mixintest.Content("v1.2.3", client),
		"mixins/exec/runtimes/exec-runtime":                               mixintest.Content("v1.2.3", "exec-linux-amd64"),
		"mixins/" + src + "/mixins/exec/v1.2.3/" + clientFile:             mixintest.Content("v1.2.3", client),
		"mixins/" + src + "/mixins/exec/v1.2.3/runtimes/exec-linux-amd64": mixintest.Content("v1.2.3", "exec-linux-amd64"),
		"mixins/" + src + "/mixins/exec/v1.0.0/" + clientFile:             mixintest.Content("v1.0.0", client),
		"mixins/" + src + "/mixins/exec/v1.0.0/runtimes/exec-linux-amd64": mixintest.Content("v1.0.0", "exec-linux-amd64"),
	} {
		got, err := os.ReadFile(filepath.Join(home, filepath.FromSlash(rel)))
		if err != nil {
			t.Error(err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from the feed's bytes", rel)
		}
	}
	if got := entries(t, filepath.Dir(home)); len(got) != 1+len(entries(t, home)) {
		t.Errorf("beside PORTER_HOME: %q: staging left behind", got)
	}

	// An archive, imported into another mirror.
	dir := t.TempDir()
	store, err := oci.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Archive(ctx, store); err != nil {
		t.Fatal(err)
	}
	ros, err := oci.NewFromFS(ctx, os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	other := registrytest.New(t)
	moved, err = f.Import(ctx, run, ros, l, relocate.Mapping{Host: other.Host})
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 2 || !strings.HasPrefix(moved[0].Mirror, other.Host+"/porter-mixins/exec@sha256:") {
		t.Fatalf("imported %+v", moved)
	}
	rep := &verify.Report{}
	if err := f.Verify(ctx, run, l, verify.Options{Deep: true}, rep); err != nil || len(rep.Problems) != 0 {
		t.Errorf("verify after import: %v %+v", err, rep.Problems)
	}
}
