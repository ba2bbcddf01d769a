package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/porter"
)

// realworldPorterDir holds porter.yaml files of getporter/examples and
// getporter/porter, unchanged (testdata/realworld/README.md).
var realworldPorterDir = filepath.Join("..", "..", "testdata", "realworld", "porter", "yaml")

// realworldPorterTags are the tags each bundle the real porter.yaml
// files depend on is published at, by its Docker-normalised name: the
// tag the reference names and a few around it, so that each strategy's
// choice differs.
var realworldPorterTags = map[string][]string{
	"docker.io/getporter/azure-mysql":            {"5.6", "5.7", "5.7.3", "5.8", "8.0"},
	"docker.io/getporter/azure-active-directory": {"v0.9.0", "v1.0.0-0", "v1.0.0", "v1.1.0"},
	"docker.io/getporter/azure-blob-storage":     {"v0.5.0", "v1.0.0", "v1.5.0", "v2.0.0", "v2.1.0", "v2.3.0", "v3.2.0", "v4.0.0"},
	"localhost:5000/mysql":                       {"v0.1.3", "v0.1.4", "v0.1.5", "v0.2.0"},
	"localhost:5000/mysql-interface":             {"v0.1.0", "v0.2.0"},
	"localhost:5000/diamond-app-a":               {"v0.1.0", "v0.1.1", "v0.2.0"},
	"localhost:5000/diamond-app-b":               {"v0.1.0", "v0.1.1", "v0.2.0"},
	"localhost:5000/wiring-infra":                {"v0.1.0", "v0.1.1", "v0.2.0"},
	"localhost:5000/wiring-app":                  {"v0.1.0", "v0.1.1", "v0.2.0"},
	"localhost:5000/mydb":                        {"v0.1.0", "v0.1.1", "v0.2.0"},
	"localhost:5000/myinfra":                     {"v0.1.0", "v0.1.1", "v0.2.0"},
	"localhost:5000/myapp":                       {"v1.2.3", "v1.2.4", "v1.3.0"},
}

// porterPick is Porter's choice of a dependency's tag, written from
// getporter/porter pkg/cnab/extended_bundle.go (ResolveVersion,
// strategyConstraintFromRef, computeStrategyConstraint,
// filterAndSelectTag) and pkg/cnab/config-adapter/adapter.go
// (generateDependencies: a porter.yaml `version` is the one range, and
// prereleases are allowed when it parses as a prerelease version):
// without a range, the reference's tag; with one, exact takes the
// reference's tag (an error without one), max-patch and max-minor the
// highest tag in range within the reference tag's major.minor or major,
// min the lowest in range; a prerelease tag only when allowed. An empty
// result is an error.
func porterPick(strategy, refTag, rng string, tags []string) string {
	if rng == "" || strategy == "exact" {
		return refTag
	}
	c, err := semver.NewConstraint(rng)
	if err != nil {
		return ""
	}
	pre := false
	if v, err := semver.NewVersion(rng); err == nil && v.Prerelease() != "" {
		pre = true
	}
	var narrow *semver.Constraints
	if rv, err := semver.NewVersion(refTag); err == nil && refTag != "" {
		switch strategy {
		case "max-patch":
			narrow, _ = semver.NewConstraint(fmt.Sprintf(">= %d.%d.0, < %d.%d.0", rv.Major(), rv.Minor(), rv.Major(), rv.Minor()+1))
		case "max-minor":
			narrow, _ = semver.NewConstraint(fmt.Sprintf(">= %d.0.0, < %d.0.0", rv.Major(), rv.Major()+1))
		}
	}
	var best string
	var bestV *semver.Version
	for _, t := range tags {
		v, err := semver.NewVersion(t)
		if err != nil || (!pre && v.Prerelease() != "") || !c.Check(v) || (narrow != nil && !narrow.Check(v)) {
			continue
		}
		if bestV == nil || (strategy == "min" && v.LessThan(bestV)) || (strategy != "min" && v.GreaterThan(bestV)) {
			best, bestV = t, v
		}
	}
	return best
}

// realworldPorterStrategies are Porter's version strategies
// (pkg/config/datastore.go DependencyVersionStrategy*); exact is its
// default.
var realworldPorterStrategies = []string{"exact", "max-patch", "max-minor", "min"}

// realworldPorterUnresolved are the STRATEGY/FILE pairs Porter cannot
// resolve, and what ferry's error must say: config-adapter.porter.yaml
// asks getporter/azure-active-directory and getporter/azure-blob-storage
// by a range alone, without a tag, which Porter's default strategy,
// exact, refuses (extended_bundle.go ResolveVersion: exact uses the
// reference's tag, and there is none).
var realworldPorterUnresolved = map[string]string{
	"exact/config-adapter": "needs a tag in the reference",
}

// TestRealworldPorterYAMLLockOffline locks every vendored porter.yaml as
// ROOT (`ferry lock DIR/porter.yaml --offline`) under each of Porter's
// version strategies. The bundles they depend on are published as real
// cnab-to-oci bundles at the references they name, normalised the Docker
// way (getporter/azure-mysql is docker.io/getporter/azure-mysql), each at
// a few tags (realworldPorterTags), in a loopback registry reached only
// through ferry.yaml `mirrors:` (docker.io and localhost:5000, which the
// porter repository's own test bundles name); the mixins come from a
// loopback feed. The lock names the public references, never the
// mirror, and each dependency is locked at the tag Porter's strategy
// picks (porterPick), the interface bundle a dependency names at its own
// tag; a file Porter cannot resolve under a strategy (a range without a
// tag under exact, nothing in range) fails naming the dependency.
func TestRealworldPorterYAMLLockOffline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mir := registrytest.New(t)
	c := registrytest.Client(t)
	hostPath := map[string]string{"docker.io": "dockerhub", "localhost:5000": "local5000"}
	for repoName, tags := range realworldPorterTags {
		ref, err := ociref.Parse(repoName)
		if err != nil {
			t.Fatal(err)
		}
		at := mir.Host + "/" + hostPath[ref.Registry] + "/" + strings.TrimPrefix(repoName, ref.Registry+"/")
		repo := registrytest.Repository(t, c, at)
		for _, tag := range tags {
			v := semver.MustParse(tag)
			b := fixture.Bundle{Name: repoName[strings.LastIndexByte(repoName, '/')+1:], Version: v.String(), Tags: []string{tag}}
			if _, err := fixture.PushBundle(ctx, repo, repoName, b); err != nil {
				t.Fatalf("%s:%s: %v", repoName, tag, err)
			}
		}
	}
	ents, err := os.ReadDir(realworldPorterDir)
	if err != nil {
		t.Fatal(err)
	}
	feedMixins := map[string]bool{}
	type file struct {
		name string
		m    *porter.Manifest
	}
	var files []file
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(realworldPorterDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m, err := porter.ParsePorterYAML(data)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		for _, mx := range m.Mixins {
			feedMixins[mx.Name] = true
		}
		files = append(files, file{strings.TrimSuffix(e.Name(), ".porter.yaml"), m})
	}
	if len(files) < 10 {
		t.Fatalf("%d porter.yaml files, want at least 10", len(files))
	}
	var mixins []string
	for n := range feedMixins {
		mixins = append(mixins, n)
	}
	sort.Strings(mixins)
	feed := mixintest.NewFeed(t, mixintest.Options{Mixins: mixins, Platforms: []string{"linux/amd64"}})

	env := clitest.New(t)
	env.Vars = append(env.Vars, mixin.FeedEnv+"="+feed.URL)
	var unresolved []string
	for _, strategy := range realworldPorterStrategies {
		var y strings.Builder
		fmt.Fprintf(&y, "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nporter:\n  versionStrategy: %s\nmirrors:\n", strategy)
		for host, p := range hostPath {
			fmt.Fprintf(&y, "  %q: %s/%s\n", host, mir.Host, p)
		}
		env.WriteFile("ferry.yaml", y.String())
		for _, f := range files {
			ranged := false
			for _, d := range f.m.Dependencies {
				ranged = ranged || d.Constraint != ""
			}
			if strategy != "exact" && !ranged {
				continue // the reference's tag under every strategy
			}
			data, err := os.ReadFile(filepath.Join(realworldPorterDir, f.name+".porter.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			root := env.WriteFile(filepath.Join(f.name, "porter.yaml"), string(data))
			// Porter's picks, and what cannot be picked.
			var want, failing []string
			for _, d := range f.m.Dependencies {
				ref, err := ociref.ParseNormalized(d.Ref, "")
				if err != nil {
					t.Fatal(err)
				}
				tag := porterPick(strategy, ref.Tag, d.Constraint, realworldPorterTags[ref.Repo()])
				if tag == "" {
					failing = append(failing, d.Name)
					continue
				}
				want = append(want, ref.Repo()+":"+tag)
				if d.InterfaceRef != "" {
					iref, err := ociref.ParseNormalized(d.InterfaceRef, "")
					if err != nil {
						t.Fatal(err)
					}
					want = append(want, iref.Repo()+":"+iref.Tag)
				}
			}
			sort.Strings(want)
			os.Remove(env.Path("ferry.lock"))
			r := env.Run("lock", root, "--offline", "--config", env.Path("ferry.yaml"))
			name := strategy + "/" + f.name
			if len(failing) > 0 {
				unresolved = append(unresolved, name)
				if r.Code == 0 {
					t.Errorf("%s: locked, but Porter resolves no tag for %v", name, failing)
				}
				for _, d := range f.m.Dependencies {
					ref, _ := ociref.ParseNormalized(d.Ref, "")
					if slices.Contains(failing, d.Name) && !strings.Contains(r.Stderr, ref.Repo()) {
						t.Errorf("%s: the error does not name %s:\n%s", name, ref.Repo(), r.Stderr)
					}
				}
				if why, ok := realworldPorterUnresolved[name]; !ok || !strings.Contains(r.Stderr, why) {
					t.Errorf("%s: error %q, want one saying %q", name, r.Stderr, why)
				}
				t.Logf("%s: as Porter, no tag for %v: %s", name, failing, strings.TrimSpace(r.Stderr))
				continue
			}
			if r.Code != 0 {
				t.Errorf("%s: ferry lock exit %d:\n%s", name, r.Code, r.Stderr)
				continue
			}
			l, err := lock.Read(env.Path("ferry.lock"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range l.Packages {
				if strings.Contains(p.Source, "127.0.0.1") {
					t.Errorf("%s: the lock names the mirror %s", name, p.Source)
				}
				if p.Kind == format.KindPorterBundle {
					got = append(got, p.Source+":"+p.Version)
				}
			}
			sort.Strings(got)
			ms, err := mixin.FromLock(l)
			if err != nil {
				t.Fatal(err)
			}
			var gotMixins, wantMixins []string
			for _, m := range ms {
				gotMixins = append(gotMixins, m.Name)
			}
			for _, m := range f.m.Mixins {
				wantMixins = append(wantMixins, m.Name)
			}
			sort.Strings(gotMixins)
			sort.Strings(wantMixins)
			if !slices.Equal(gotMixins, wantMixins) {
				t.Errorf("%s: mixins locked %v, want %v", name, gotMixins, wantMixins)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: bundles locked:\n  %s\nwant (Porter's %s strategy):\n  %s", name, strings.Join(got, "\n  "), strategy, strings.Join(want, "\n  "))
			}
		}
	}
	var wantUnresolved []string
	for n := range realworldPorterUnresolved {
		wantUnresolved = append(wantUnresolved, n)
	}
	sort.Strings(unresolved)
	sort.Strings(wantUnresolved)
	if !slices.Equal(unresolved, wantUnresolved) {
		t.Errorf("unresolved %v, want %v", unresolved, wantUnresolved)
	}
}
