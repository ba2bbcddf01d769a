package util_test

import (
	"encoding/json"
	"testing"

	helmutil "helm.sh/helm/v4/pkg/release/v1/util"

	"github.com/ferryhq/ferry/internal/forked/helm/pkg/release/v1/util"
)

// TestSortManifestsHooksMatchHelm holds the patches of this package (the
// events map built on first use, sep compiled on first use: UPSTREAM.md
// patch 7) to Helm: every hook event name, test-success, an unknown one
// and several documents in a file sort into the same hooks and manifests.
func TestSortManifestsHooksMatchHelm(t *testing.T) {
	hook := func(name, events string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  annotations:\n    helm.sh/hook: " + events + "\n"
	}
	files := map[string]string{
		"t/hooks.yaml": hook("a", "pre-install,post-install") + "---\n" + hook("b", "pre-delete, post-delete") + "--- \n" +
			hook("c", "pre-upgrade,post-upgrade,pre-rollback,post-rollback") + "---\t\n" + hook("d", "test") + "---\n" + hook("e", "test-success") + "---\n" + hook("f", "no-such-event"),
		"t/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n",
	}
	gh, gm, gerr := util.SortManifests(files, nil, util.InstallOrder)
	wh, wm, werr := helmutil.SortManifests(files, nil, helmutil.InstallOrder)
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	if js(gh) != js(wh) || js(gm) != js(wm) || (gerr == nil) != (werr == nil) {
		t.Errorf("fork: %s %s %v\nhelm: %s %s %v", js(gh), js(gm), gerr, js(wh), js(wm), werr)
	}
	if len(gh) != 5 { // f has no known event
		t.Errorf("%d hooks, want 5", len(gh))
	}
}
