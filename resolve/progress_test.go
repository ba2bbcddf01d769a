package resolve_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/resolve"
)

// TestProgress resolves closures with a terminal's Reporter (its
// resolution line, drawn to nowhere) and checks its last count: every
// package of the graph read once, none left queued, and the manifests'
// bytes counted, even when two edges choose one package version or the
// resolution takes several rounds (the late constraint, see
// TestLateConstraint) that visit packages again.
func TestProgress(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	type pkg struct {
		name, version string
		deps          [][2]string // name, range
	}
	for _, tc := range []struct {
		name   string
		format format.Format
		pkgs   []pkg
	}{
		// Porter's policy resolves each edge on its own: d is reached by
		// two edges that choose one version, one package read.
		{"diamond, an edge each", porter.Reader{}, []pkg{
			{"d", "1.0.0", nil},
			{"b", "1.0.0", [][2]string{{"d", "^1"}}},
			{"c", "1.0.0", [][2]string{{"d", ">=1.0 <2"}}},
			{"root", "1.0.0", [][2]string{{"b", "^1"}, {"c", "^1"}}},
		}},
		{"diamond, shared", sharedBundles{}, []pkg{
			{"d", "1.0.0", nil},
			{"b", "1.0.0", [][2]string{{"d", "^1"}}},
			{"c", "1.0.0", [][2]string{{"d", "^1"}}},
			{"root", "1.0.0", [][2]string{{"b", "^1"}, {"c", "^1"}}},
		}},
		{"late constraint", sharedBundles{}, []pkg{
			{"y", "1.0.0", nil},
			{"y", "2.0.0", nil},
			{"x", "1.4.0", [][2]string{{"y", "^1"}}},
			{"x", "1.9.0", [][2]string{{"y", ">=2"}}},
			{"w", "1.0.0", [][2]string{{"y", "<2"}}},
			{"z", "1.0.0", [][2]string{{"w", "^1"}}},
			{"c", "1.0.0", [][2]string{{"x", "<1.5"}}},
			{"b", "1.0.0", [][2]string{{"c", "^1"}}},
			{"a", "1.0.0", [][2]string{{"x", "^1"}}},
			{"root", "1.0.0", [][2]string{{"a", "^1"}, {"b", "^1"}, {"z", "^1"}}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := reg.Host + "/progress-" + strings.NewReplacer(" ", "-", ",", "").Replace(tc.name) + "/"
			for _, p := range tc.pkgs {
				var deps []fixture.Dep
				for _, d := range p.deps {
					deps = append(deps, fixture.Dep{Name: d[0], Bundle: h + d[0] + ":v1.0.0", Ranges: []string{d[1]}})
				}
				repo, err := c.Repository(h + p.name)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := fixture.PushBundle(ctx, repo, h+p.name, fixture.Bundle{Name: p.name, Version: p.version, Tags: []string{"v" + p.version}, Deps: deps}); err != nil {
					t.Fatal(err)
				}
			}
			bars := progress.NewBars(io.Discard, progress.BarsOptions{Phase: progress.Resolution})
			g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: h + "root:v1.0.0"}}, resolve.Options{Registry: c, Formats: []format.Format{tc.format}, Progress: bars})
			bars.Close()
			if err != nil {
				t.Fatal(err)
			}
			got := bars.Overall(0)
			if want := fmt.Sprintf("resolving · packages %d read, 0 queued · ", len(g.Packages)); !strings.HasPrefix(got, want) {
				t.Errorf("last line %q, want it to start %q", got, want)
			}
			if strings.HasSuffix(got, " 0.0 b") {
				t.Errorf("last line %q: no manifest bytes counted", got)
			}
		})
	}
}
