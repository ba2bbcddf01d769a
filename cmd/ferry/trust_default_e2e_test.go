package main

import (
	"context"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestE2ETrustDefault: three packages (acme/app, its dependency beta/db,
// and gamma/cache), one trust rule covering acme/. trust.default says what
// happens to the two no rule matches (PRODUCT.md, Trust): warn (the
// default once a rule exists) carries them, naming both in a warning and
// in -o json (`untrusted`); require exits 3 naming both before anything is
// written or copied; allow is silent.
func TestE2ETrustDefault(t *testing.T) {
	t.Parallel()
	w := newTrustWorld(t)
	h := w.src.Host
	cache := h + "/gamma/cache"
	b := fixture.Bundle{Name: "cache", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"redis"}}
	desc, err := fixture.PushBundle(context.Background(), registrytest.Repository(t, registrytest.Client(t), cache), cache, b)
	if err != nil {
		t.Fatal(err)
	}
	w.digests[cache] = desc.Digest
	w.sign(t, w.acme, w.app, false)
	unmatched := []string{w.db + "@" + w.digests[w.db].String(), cache + "@" + w.digests[cache].String()}
	yamlWith := func(def string) {
		rules := "  rules:\n    - match: " + h + "/acme/\n      keys: [keys/acme.pub]\n      required: true\n"
		trustSection := "trust:\n" + rules
		if def != "" {
			trustSection = "trust:\n  default: " + def + "\n" + rules
		}
		w.env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: "+w.app+":v1.0.0\n  - ref: "+cache+":v1.0.0\n"+trustSection)
	}
	type untrustedJSON struct {
		Untrusted []struct{ Source, Digest string } `json:"untrusted"`
	}
	names := func(t *testing.T, what string, u untrustedJSON) {
		t.Helper()
		var got []string
		for _, x := range u.Untrusted {
			got = append(got, x.Source+"@"+x.Digest)
		}
		if strings.Join(got, " ") != strings.Join(unmatched, " ") {
			t.Errorf("%s -o json untrusted = %v, want %v", what, got, unmatched)
		}
	}

	// warn, by default and by name: exit 0, both listed.
	for _, def := range []string{"", "warn"} {
		t.Run("warn "+def, func(t *testing.T) {
			yamlWith(def)
			r := w.env.Expect(0, []string{"lock"}, "2 packages match no trust rule", "trust.default: warn")
			for _, u := range unmatched {
				if !strings.Contains(r.Stderr, u) {
					t.Errorf("lock's warning does not name %s:\n%s", u, r.Stderr)
				}
			}
			if strings.Contains(r.Stderr, w.app+"@") {
				t.Errorf("the warning names app, which a rule covers:\n%s", r.Stderr)
			}
			var lj untrustedJSON
			outJSON(t, w.env, "lock", &lj, "lock")
			names(t, "lock", lj)
			if strings.Contains(w.env.ReadFile("ferry.lock"), "untrusted") {
				t.Error("ferry.lock holds the untrusted list")
			}
		})
	}
	yamlWith("warn")
	var mj, vj untrustedJSON
	r := outJSON(t, w.env, "mirror", &mj, "mirror", "--to", w.mirror.Host+"/m")
	names(t, "mirror", mj)
	if !strings.Contains(r.Stderr, "2 packages match no trust rule") {
		t.Errorf("mirror does not warn:\n%s", r.Stderr)
	}
	outJSON(t, w.env, "verify", &vj, "verify")
	names(t, "verify", vj)
	w.env.Expect(0, []string{"verify"}, "2 packages match no trust rule")

	// require: exit 3 naming both, nothing written or copied; verify of
	// the mirror made above finds both.
	yamlWith("require")
	good := w.env.ReadFile("ferry.lock")
	w.env.Expect(3, []string{"lock", "--lock", "r.lock"}, append([]string{"2 of 3 packages match no trust rule"}, unmatched...)...)
	e2eAbsent(t, w.env.Path("r.lock"))
	w.mirror.Reset()
	w.env.Expect(3, []string{"mirror", "--lock", "ferry.lock", "--to", w.mirror.Host + "/m2"}, unmatched...)
	if n := w.mirrorManifests(); n != 0 {
		t.Errorf("%d manifests pushed to the mirror under trust.default: require", n)
	}
	w.env.Expect(3, []string{"verify"}, append([]string{"untrusted", "trust.default: require"}, unmatched...)...)
	w.env.Expect(3, []string{"install", "--dest", "out"}, unmatched...)
	e2eAbsent(t, w.env.Path("out"))
	if w.env.ReadFile("ferry.lock") != good {
		t.Error("ferry.lock changed under trust.default: require")
	}

	// allow: silent.
	yamlWith("allow")
	for _, args := range [][]string{{"lock"}, {"mirror", "--to", w.mirror.Host + "/m"}, {"verify"}} {
		r := w.env.Expect(0, args)
		if strings.Contains(r.Stderr, "trust rule") || strings.Contains(r.Stderr, w.db+"@") {
			t.Errorf("ferry %s under trust.default: allow warns:\n%s", strings.Join(args, " "), r.Stderr)
		}
		var u untrustedJSON
		outJSON(t, w.env, map[string]string{"lock": "lock", "mirror": "mirror", "verify": "verify"}[args[0]], &u, args...)
		if len(u.Untrusted) != 0 {
			t.Errorf("ferry %s -o json under allow lists %v", strings.Join(args, " "), u.Untrusted)
		}
	}
}
