package bench

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestPushHelm: W5's generator pushes every chart at every version with
// Helm's client, each depending on the next level by range on an oci://
// repository, and deploys an image of its own only when asked.
func TestPushHelm(t *testing.T) {
	for _, tc := range []struct {
		name   string
		images bool
	}{{"charts only", false}, {"one image per chart", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			reg := registrytest.New(t)
			c := registrytest.Client(t)
			spec := HelmSpec{Charts: 3, Depth: 3, Tags: 3}
			root, err := PushHelm(ctx, c, reg.Host, reg.Host, "w5", t.TempDir(), spec, tc.images, 4)
			if err != nil {
				t.Fatal(err)
			}
			if want := "w5/charts/" + HelmName(0, 0); root != want {
				t.Fatalf("root %q, want %q", root, want)
			}
			versions := W2Versions(spec.Tags)
			for l := range spec.Depth {
				repo := registrytest.Repository(t, c, reg.Host+"/w5/charts/"+HelmName(l, 0))
				tags, err := client.ListTags(ctx, repo)
				if err != nil {
					t.Fatal(err)
				}
				slices.Sort(tags)
				if !slices.Equal(tags, versions) {
					t.Errorf("level %d: tags %v, want %v", l, tags, versions)
				}
			}
			hc, err := charttest.HelmClient()
			if err != nil {
				t.Fatal(err)
			}
			selected := versions[len(versions)-2]
			for l := range spec.Depth {
				pulled, err := hc.Pull(reg.Host + "/w5/charts/" + HelmName(l, 0) + ":" + selected)
				if err != nil {
					t.Fatal(err)
				}
				ch, err := loader.LoadArchive(bytes.NewReader(pulled.Chart.Data))
				if err != nil {
					t.Fatal(err)
				}
				if ch.Name() != HelmName(l, 0) || ch.Metadata.Version != selected {
					t.Errorf("level %d: chart %s %s, want %s %s", l, ch.Name(), ch.Metadata.Version, HelmName(l, 0), selected)
				}
				deps := ch.Metadata.Dependencies
				switch {
				case l+1 < spec.Depth && (len(deps) != 1 || deps[0].Name != HelmName(l+1, 0) || deps[0].Version != W2Range || deps[0].Repository != "oci://"+reg.Host+"/w5/charts"):
					t.Errorf("level %d: dependencies %+v, want %s %s on oci://%s/w5/charts", l, deps, HelmName(l+1, 0), W2Range, reg.Host)
				case l+1 == spec.Depth && len(deps) != 0:
					t.Errorf("last level: dependencies %+v, want none", deps)
				}
				image := reg.Host + "/w5/images/" + HelmName(l, 0) + ":v1"
				if len(ch.Templates) != 1 || strings.Contains(string(ch.Templates[0].Data), "image:") != tc.images ||
					(tc.images && !strings.Contains(string(ch.Templates[0].Data), "image: "+image)) {
					t.Errorf("level %d: templates %v; want one, deploying %s: %v", l, ch.Templates, image, tc.images)
				}
				repo := registrytest.Repository(t, c, reg.Host+"/w5/images/"+HelmName(l, 0))
				if _, err := repo.Resolve(ctx, "v1"); (err == nil) != tc.images {
					t.Errorf("level %d: image %s: %v, want it pushed: %v", l, image, err, tc.images)
				}
			}
		})
	}
}

func TestHelmExtra(t *testing.T) {
	for _, tc := range []struct {
		name           string
		kinds          map[string]int
		charts, images int
		want           string
	}{
		{"the minimum", map[string]int{"tags": 4, "manifest GET": 4, "blob GET": 4}, 4, 0, "none"},
		{"images' manifests", map[string]int{"tags": 4, "manifest GET": 6, "blob GET": 4}, 4, 2, "none"},
		{"tag list twice and referrers", map[string]int{"tags": 8, "manifest GET": 8, "blob GET": 4, "referrers": 4}, 4, 0, "tags +4, manifest GET +4, referrers=4"},
		{"a HEAD, one layer short", map[string]int{"tags": 2, "manifest GET": 2, "manifest HEAD": 2, "blob GET": 1}, 2, 0, "blob GET -1, manifest HEAD=2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := helmExtra(Stats{ByKind: tc.kinds}, tc.charts, tc.images); got != tc.want {
				t.Errorf("helmExtra = %q, want %q", got, tc.want)
			}
		})
	}
}
