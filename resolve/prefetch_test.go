package resolve_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/resolve"
)

// TestReadAhead holds every read of b's manifest until the tag list of
// a1, a child of b's sibling a, has been requested: the closure resolves
// only if a package's children are read as soon as it is read, not when
// its whole level is. It resolves what a level-by-level resolution does,
// with the same requests: every object read once, every tag list listed
// once, nothing beyond each package's minimum.
func TestReadAhead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format format.Format
	}{
		{"shared versions", sharedBundles{}},
		{"an edge each", porter.Reader{Strategy: porter.StrategyHighest}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var once sync.Once
			a1Listed := make(chan struct{})
			var armed, held atomic.Bool
			wrap := func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					switch {
					case strings.HasSuffix(r.URL.Path, "/ahead/a1/tags/list"):
						once.Do(func() { close(a1Listed) })
					case armed.Load() && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/ahead/b/manifests/"):
						select {
						case <-a1Listed:
						case <-time.After(10 * time.Second): // only reached when b's level holds a's children back
							held.Store(true)
						case <-r.Context().Done():
						}
					}
					next.ServeHTTP(w, r)
				})
			}
			reg := registrytest.New(t, registrytest.WithWrap(wrap))
			c := testClient(t)
			h := reg.Host
			dep := func(name string) fixture.Dep {
				return fixture.Dep{Name: name, Bundle: h + "/ahead/" + name + ":v1.0.0", Ranges: []string{"^1.0"}}
			}
			// Two versions of each, the newer chosen; a and b share d.
			pushBundles(t, c, h, map[string][]fixture.Bundle{
				"ahead/root": {bundle("root", "1.0.0", dep("a"), dep("b"))},
				"ahead/a":    {bundle("a", "1.0.0", dep("a1")), bundle("a", "1.1.0", dep("a1"), dep("d"))},
				"ahead/b":    {bundle("b", "1.0.0", dep("b1")), bundle("b", "1.1.0", dep("b1"), dep("d"))},
				"ahead/a1":   {bundle("a1", "1.0.0"), bundle("a1", "1.2.0")},
				"ahead/b1":   {bundle("b1", "1.0.0"), bundle("b1", "1.2.0")},
				"ahead/d":    {bundle("d", "1.0.0"), bundle("d", "1.3.0")},
			})
			reg.Reset()
			armed.Store(true)
			c = testClient(t) // no cached scheme or tokens
			g, err := resolve.Resolve(context.Background(), []resolve.Root{{Ref: h + "/ahead/root:v1.0.0"}}, resolve.Options{Registry: c, Formats: []format.Format{tc.format}})
			if err != nil {
				t.Fatal(err)
			}
			if held.Load() {
				t.Error("a1's tag list was not requested while b's manifest was held: a package's children wait for its whole level")
			}
			got := versions(g, h)
			want := map[string]string{"ahead/root": "v1.0.0", "ahead/a": "v1.1.0", "ahead/b": "v1.1.0", "ahead/a1": "v1.2.0", "ahead/b1": "v1.2.0", "ahead/d": "v1.3.0"}
			if len(got) != len(want) {
				t.Errorf("versions %v, want %v", got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s at %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
			seen := map[string]int{}
			for _, r := range reg.Requests() {
				if r.Path != "/v2/" {
					seen[r.Method+" "+r.Path]++
				}
			}
			for k, n := range seen {
				if n > 1 {
					t.Errorf("%s requested %d times", k, n)
				}
			}
			// Per package: tag list (not for the root, named by tag),
			// index, config manifest and bundle.json.
			if want := 6*3 + 5; len(seen) != want {
				var keys []string
				for k := range seen {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				t.Errorf("%d distinct requests, want %d:\n%s", len(seen), want, strings.Join(keys, "\n"))
			}
		})
	}
}

// TestConcurrencyBoundsReads resolves a wide closure, read ahead, with
// Options.Concurrency 2: no more than two requests are ever in flight.
func TestConcurrencyBoundsReads(t *testing.T) {
	var inflight, peak atomic.Int64
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v2/" {
				n := inflight.Add(1)
				defer inflight.Add(-1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	reg := registrytest.New(t, registrytest.WithWrap(wrap))
	c := testClient(t)
	h := reg.Host
	bundles := map[string][]fixture.Bundle{}
	var deps []fixture.Dep
	for _, name := range []string{"c1", "c2", "c3", "c4", "c5", "c6"} {
		deps = append(deps, fixture.Dep{Name: name, Bundle: h + "/bound/" + name + ":v1.0.0", Ranges: []string{"^1.0"}})
		bundles["bound/"+name] = []fixture.Bundle{bundle(name, "1.0.0", fixture.Dep{Name: name + "x", Bundle: h + "/bound/" + name + "x:v1.0.0", Ranges: []string{"^1.0"}})}
		bundles["bound/"+name+"x"] = []fixture.Bundle{bundle(name+"x", "1.0.0")}
	}
	bundles["bound/root"] = []fixture.Bundle{bundle("root", "1.0.0", deps...)}
	pushBundles(t, c, h, bundles)
	peak.Store(0)
	c = testClient(t)
	opts := porterOptions(c)
	opts.Concurrency = 2
	g, err := resolve.Resolve(context.Background(), []resolve.Root{{Ref: h + "/bound/root:v1.0.0"}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Packages) != 13 {
		t.Fatalf("%d packages, want 13", len(g.Packages))
	}
	if p := peak.Load(); p > 2 {
		t.Errorf("%d requests in flight, want at most Options.Concurrency (2)", p)
	}
}
