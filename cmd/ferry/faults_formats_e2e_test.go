package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/faultproxy"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

// The faults of TestFaultsAllFormats: 10% of requests to every registry
// and every HTTP source, every transient kind, 429s with Docker Hub's
// rate-limit headers, stalls of 0.1 to 0.8 s against a read timeout of
// 0.5 s (some only slow a request, others outlast the timeout). Short
// stalls and small fixtures keep ten seeds within CI's time.
const (
	allFormatsRate        = 0.10
	allFormatsStallMin    = 100 * time.Millisecond
	allFormatsStallMax    = 800 * time.Millisecond
	allFormatsReadTimeout = "500ms"
	// allFormatsPassword is in the docker config for every host of the
	// run (sent as HTTP Basic to the mixin feed and the KUDO repository,
	// as Helm sends a classic repository's): no output may show it.
	allFormatsPassword = "faults-PASSWORD-marker"
)

// retryLineRE is a retry line at the default log level; its first group
// is set when the line names the request ("retrying PUT HOST/PATH").
var retryLineRE = regexp.MustCompile(`msg="retrying ([A-Z]+ [^ /]+/v2/\S*)?.* \((\d+) of (\d+)\): `)

// TestFaultsAllFormats mirrors a closure of every format — a Porter
// bundle with its invocation and component images, a mixin, a Crossplane
// Configuration and the Provider it depends on, a Helm chart and the image
// it deploys, a KUDO operator and its image, and a plain image — with
// every registry and HTTP source behind a fault-injecting proxy, for ten
// seeds: the first run of lock, mirror --to, verify --deep, mirror
// --to-archive, mirror --from-archive into a private registry and install
// from it must each succeed; every blob in the mirrors and the
// install must be intact; retries
// must show at the default log level as "retrying … (N of 6): …"; no
// output may show an upload token (_state=) or a credential.
func TestFaultsAllFormats(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		total   faultproxy.Stats
		retries int
		limited int
	)
	start := time.Now()
	t.Run("seed", func(t *testing.T) {
		for seed := uint64(1); seed <= 10; seed++ {
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				t.Parallel()
				st, lines := allFormatsRun(t, seed)
				t.Logf("seed %d: %s; %d retry lines", seed, st, len(lines))
				mu.Lock()
				defer mu.Unlock()
				total = total.Add(st)
				retries += len(lines)
				for _, l := range lines {
					if strings.Contains(l, "remaining "+faultproxy.RateLimitRemaining) {
						limited++
					}
				}
			})
		}
	})
	t.Logf("all seeds, %s: %s; %d retry lines, %d naming a rate limit", time.Since(start).Round(time.Second), total, retries, limited)
	if t.Failed() {
		return
	}
	for _, k := range faultproxy.AllKinds() {
		if total.ByKind[k] == 0 {
			t.Errorf("no %s fault was injected over ten seeds: the test does not exercise it (%s)", k, total)
		}
	}
	if retries == 0 || limited == 0 {
		t.Errorf("%d retry lines, %d naming Docker Hub's rate-limit headers, at the default log level: want some of each", retries, limited)
	}
}

// allFormatsRun is one seed's pipeline; it returns the faults injected
// and the retry lines ferry printed.
func allFormatsRun(t *testing.T, seed uint64) (faultproxy.Stats, []string) {
	ctx := context.Background()
	src := registrytest.New(t)
	mirror := registrytest.New(t)
	var proxies []*faultproxy.Proxy
	proxy := func(target string, n uint64) *faultproxy.Proxy {
		p, err := faultproxy.Start(target, faultproxy.Options{
			Seed: seed*10 + n, RetryAfter: -1, RateLimitHeaders: true,
			StallMin: allFormatsStallMin, StallMax: allFormatsStallMax,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		proxies = append(proxies, p)
		return p
	}
	srcP := proxy(src.Host, 1)
	mirrorP := proxy(mirror.Host, 2)
	private := registrytest.New(t)
	privateP := proxy(private.Host, 5)
	feed := mixintest.NewFeed(t, mixintest.Options{Mixins: []string{"exec"}, Versions: []string{"v1.2.3"}, Platforms: []string{"linux/amd64"}})
	feedP := proxy(strings.TrimPrefix(feed.Base, "http://"), 3)

	// The closure, published through the proxies while they inject no
	// faults, so that every reference names a proxy.
	c := e2eClient(t)
	h := srcP.Addr
	image := func(name, tag string) string {
		t.Helper()
		repo := e2eRepo(t, c, h+"/"+name)
		desc, err := fixture.PushImage(ctx, repo, fmt.Sprintf("allformats-%d-%s", seed, name), 4<<10, 48<<10)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.Tag(ctx, desc, tag); err != nil {
			t.Fatal(err)
		}
		return h + "/" + name + ":" + tag
	}
	// Porter: a bundle with an invocation and a component image, built
	// with the exec mixin.
	if _, err := fixture.PushBundle(ctx, e2eRepo(t, c, h+"/porter/app"), h+"/porter/app", fixture.Bundle{
		Name: "app", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"web"}, Mixins: map[string]string{"exec": "v1.2.3"},
	}); err != nil {
		t.Fatal(err)
	}
	// Crossplane: a Configuration depending on a Provider by range.
	xpRepo := func(name string) string { return h + "/xp/" + name }
	if _, err := fixture.PushXpkg(ctx, e2eRepo(t, c, xpRepo("provider-nop")), fixture.Xpkg{Kind: "Provider", Name: "provider-nop", Tags: []string{"v0.1.0"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.PushXpkg(ctx, e2eRepo(t, c, xpRepo("platform")), fixture.Xpkg{Kind: "Configuration", Name: "platform", Tags: []string{"v1.0.0"},
		DependsOn: []fixture.XpkgDependency{{Provider: xpRepo("provider-nop"), Version: ">=v0.1.0"}}}); err != nil {
		t.Fatal(err)
	}
	// Helm: an OCI chart deploying an image.
	tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "web", Version: "1.0.0",
		Templates: map[string]string{"d.yaml": deployment("web", image("images/web", "1.0"))}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := charttest.PushChart(tgz, h+"/charts", chartCreated); err != nil {
		t.Fatal(err)
	}
	// KUDO: an operator deploying an image, in a repository behind faults.
	zk := image("acme/zookeeper", "3.6.2")
	kudoRepo := newKudoE2ERepo(t, []kudoE2EOperator{{name: "zookeeper", app: "3.6.2", opv: "0.1.0", templates: map[string]string{"d.yaml": deployment("zk", zk)}}})
	kudoP := proxy(strings.TrimPrefix(kudoRepo.srv.URL, "http://"), 4)
	// A plain image.
	nginx := image("lib/nginx", "1.25.0")
	for _, p := range proxies {
		p.Take()
		p.SetRate(allFormatsRate)
	}

	env := clitest.New(t)
	env.Vars = append(env.Vars, mixin.FeedEnv+"=http://"+feedP.Addr+"/mixins/atom.xml", "XDG_CACHE_HOME="+filepath.Join(t.TempDir(), "cache"))
	// Every host has credentials: the HTTP sources get them as Basic
	// authentication with every request.
	auth := base64.StdEncoding.EncodeToString([]byte("ferry:" + allFormatsPassword))
	auths := map[string]any{}
	for _, p := range proxies {
		auths[p.Addr] = map[string]string{"auth": auth}
	}
	cfg, err := json.Marshal(map[string]any{"auths": auths})
	if err != nil {
		t.Fatal(err)
	}
	env.WriteFile("docker/config.json", string(cfg))
	env.WriteFile("ferry.yaml", fmt.Sprintf(`apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: %[1]s/porter/app:v1.0.0
  - ref: %[1]s/xp/platform:v1.0.0
charts:
  - ref: oci://%[1]s/charts/web
    version: 1.0.0
operators:
  - package: zookeeper
    repo: test
kudo:
  repositories: {test: "http://%[2]s/v1"}
images:
  - ref: %[3]s
mixins:
  - name: exec
    version: v1.2.3
    feed: http://%[4]s/mixins/atom.xml
platforms: [linux/amd64]
`, h, kudoP.Addr, nginx, feedP.Addr))

	var lines []string
	named := 0
	secrets := []string{"_state=", allFormatsPassword, auth, "Authorization", "Basic "}
	config := env.Path("docker/config.json")
	first := func(env *clitest.Env, args ...string) {
		t.Helper()
		args = append(args, "--read-timeout", allFormatsReadTimeout, "--registry-config", config)
		began := time.Now()
		r := env.Run(args...)
		out := r.Stdout + r.Stderr
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("seed %d: ferry %s shows %q:\n%s", seed, strings.Join(args, " "), s, faultsTail(out))
			}
		}
		for _, l := range strings.Split(r.Stderr, "\n") {
			if !strings.Contains(l, "retrying") {
				continue
			}
			lines = append(lines, l)
			if m := retryLineRE.FindStringSubmatch(l); m == nil || m[3] < "1" || m[3] > "6" || len(m[3]) != 1 || strings.Contains(l, "?") {
				t.Errorf("seed %d: retry line not of the form `retrying … (N of M): …` with M at most 6, or with a query: %s", seed, l)
			} else if m[1] != "" {
				named++
			}
		}
		if r.Code != 0 {
			t.Fatalf("seed %d: first run of ferry %s: exit %d after %s\nstdout:\n%s\nstderr:\n%s", seed, strings.Join(args, " "), r.Code,
				time.Since(began).Round(time.Millisecond), faultsTail(r.Stdout), faultsTail(r.Stderr))
		}
	}
	stats := func() faultproxy.Stats {
		var st faultproxy.Stats
		for _, p := range proxies {
			st = st.Add(p.Stats())
		}
		return st
	}

	first(env, "lock")
	l := e2eReadLock(t, env, "ferry.lock")
	var kinds []string
	for _, p := range l.Resolved() {
		kind, _, _ := strings.Cut(p.Kind, ".")
		if !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
	}
	slices.Sort(kinds)
	if want := []string{"crossplane", "helm", "image", "kudo", "porter"}; !slices.Equal(kinds, want) {
		t.Fatalf("seed %d: the lock holds kinds %v, want %v", seed, kinds, want)
	}
	if ms := mxMixinsOf(t, env); len(ms) != 1 {
		t.Fatalf("seed %d: the lock holds mixins %v, want exec", seed, ms)
	}
	first(env, "mirror", "--to", mirrorP.Addr+"/m", "-j", "4")
	first(env, "verify", "--deep")
	// Across an air gap: the archive is written from the source, and
	// imported into a private registry (mixins included: their import
	// takes the same retrying path), which install then reads.
	first(env, "mirror", "--to-archive", "closure.tar")
	air := clitest.New(t)
	if err := os.Rename(env.Path("closure.tar"), air.Path("closure.tar")); err != nil {
		t.Fatal(err)
	}
	first(air, "mirror", "--from-archive", "closure.tar", "--to", privateP.Addr+"/p", "-j", "4")
	first(air, "install", "--dest", "out")

	// Afterwards, through a clean path: every blob the mirror stored is
	// intact, and verify --deep passes.
	st := stats()
	for _, p := range proxies {
		p.SetRate(0)
	}
	if len(lines) > 0 && named == 0 {
		t.Errorf("seed %d: no retry line names its request (retrying METHOD HOST/v2/…):\n%s", seed, strings.Join(lines, "\n"))
	}
	for name, reg := range map[string]*registrytest.Registry{"mirror": mirror, "private": private} {
		faultsCheckBlobs(t, name, filepath.Join(reg.Root, "docker", "registry", "v2", "blobs"), "data")
	}
	faultsCheckBlobs(t, "install", air.Path("out/blobs"), "")
	env.Expect(0, []string{"verify", "--deep", "--registry-config", config}, "re-hashed")
	air.Expect(0, []string{"verify", "--deep", "--registry-config", config}, "re-hashed")
	if ms := mxMixinsOf(t, air); len(ms) != 1 {
		t.Errorf("seed %d: the imported lock holds mixins %v, want exec", seed, ms)
	}
	if _, err := os.Stat(air.Path("out/index.json")); err != nil {
		t.Errorf("seed %d: install wrote no layout: %v", seed, err)
	}
	return st, lines
}

// mxMixinsOf returns the names of the mixins env's ferry.lock holds.
func mxMixinsOf(t *testing.T, env *clitest.Env) []string {
	t.Helper()
	ms, err := mixin.FromLock(e2eReadLock(t, env, "ferry.lock"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name+"@"+m.Version)
	}
	return names
}
