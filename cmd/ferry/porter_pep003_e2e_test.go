package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestPorterPEP003 runs issue 31's Porter rows through the binary, the
// source registry stopped before install:
//   - a sharing group whose members ask for mysql 5.7.x and 5.x resolves
//     jointly to v5.7.3 under highest (PEP003: one installation per group);
//   - plan.json carries the app's wiring as its bundle.json declares it;
//   - an interface written without `document:` is checked: a `use:`
//     substitute lacking its output is refused;
//   - under exact, a tag outside its declared range is locked with a
//     warning on stderr and in `resolve -o json`'s and `lock -o json`'s
//     warnings.
func TestPorterPEP003(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := registrytest.New(t)
	mirror := registrytest.New(t)
	c := registrytest.Client(t)
	h := src.Host + "/pep3/"
	push := func(name, version string, b fixture.Bundle) {
		t.Helper()
		b.Name, b.Version, b.Tags = name, version, []string{"v" + version}
		if _, err := fixture.PushBundle(ctx, registrytest.Repository(t, c, h+name), h+name, b); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"5.6.0", "5.7.1", "5.7.3", "5.8.0", "8.0.0"} {
		push("mysql", v, fixture.Bundle{Outputs: map[string]string{"connstr": "string"}})
	}
	shared := func(ref, rng string) fixture.DepV2 {
		return fixture.DepV2{Name: "db", Bundle: ref, Version: rng, Sharing: map[string]any{"mode": true, "group": map[string]any{"name": "data"}}}
	}
	push("svc-a", "1.0.0", fixture.Bundle{DepsV2: []fixture.DepV2{shared(h+"mysql:v5.7.1", "5.7.x")}, Outputs: map[string]string{"url": "string"}})
	push("svc-b", "1.0.0", fixture.Bundle{DepsV2: []fixture.DepV2{shared(h+"mysql:v5.6.0", "5.x")}})
	push("app", "1.0.0", fixture.Bundle{DepsV2: []fixture.DepV2{
		{Name: "svc-a", Bundle: h + "svc-a:v1.0.0"},
		{Name: "svc-b", Bundle: h + "svc-b:v1.0.0",
			Parameters:  map[string]string{"upstream": "${ bundle.dependencies.svc-a.outputs.url }"},
			Credentials: map[string]string{"kubeconfig": "${ bundle.credentials.kubeconfig }"}},
	}})

	env := clitest.New(t) // FERRY_VERSION_STRATEGY=highest
	env.WriteFile("ferry.yaml", fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: %sapp:v1.0.0\n", h))
	env.MustRun("lock")
	l := e2eReadLock(t, env, "ferry.lock")
	var mysql []string
	for _, p := range l.Resolved() {
		if p.Source == h+"mysql" {
			mysql = append(mysql, p.Version)
		}
	}
	if strings.Join(mysql, ",") != "v5.7.3" {
		t.Errorf("the sharing group locked mysql at %v, want v5.7.3 alone", mysql)
	}

	env.MustRun("mirror", "--to", mirror.Host+"/m")
	src.Stop()
	dest := env.Path("installed")
	env.MustRun("install", "--dest", dest)
	data, err := os.ReadFile(filepath.Join(dest, install.PlanFile))
	if err != nil {
		t.Fatal(err)
	}
	var plan install.Plan
	if err := json.Unmarshal(data, &plan); err != nil {
		t.Fatal(err)
	}
	var wiring []install.Wiring
	for _, st := range plan.Steps {
		if st.Source == h+"app" {
			wiring = st.Wiring
		}
	}
	if len(wiring) != 1 || wiring[0].Dependency != "svc-b" {
		t.Fatalf("plan.json: app's wiring %+v, want svc-b's", wiring)
	}
	up := wiring[0].Parameters["upstream"]
	if up.Template != "${ bundle.dependencies.svc-a.outputs.url }" || len(up.Sources) != 1 || up.Sources[0] != (install.WiringRef{Dependency: "svc-a", Output: "url"}) {
		t.Errorf("plan.json: svc-b's upstream parameter %+v", up)
	}
	if kc := wiring[0].Credentials["kubeconfig"]; len(kc.Sources) != 1 || kc.Sources[0].Credential != "kubeconfig" {
		t.Errorf("plan.json: svc-b's kubeconfig credential %+v", kc)
	}

	// porter/app-1.0.0/bundle.json, for `porter install --cnab-file`:
	// every dependency and image at the mirror, by digest, no range.
	bj, err := os.ReadFile(filepath.Join(dest, "porter", "app-1.0.0", "bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	var bundle struct {
		InvocationImages []struct{ Image string } `json:"invocationImages"`
		Custom           map[string]struct {
			Requires map[string]map[string]any `json:"requires"`
		} `json:"custom"`
	}
	if err := json.Unmarshal(bj, &bundle); err != nil {
		t.Fatal(err)
	}
	for _, im := range bundle.InvocationImages {
		if !strings.HasPrefix(im.Image, mirror.Host+"/m/") || !strings.Contains(im.Image, "@sha256:") {
			t.Errorf("bundle.json: invocation image %s is not the mirror's, by digest", im.Image)
		}
	}
	reqs := bundle.Custom["org.getporter.dependencies@v2"].Requires
	for _, name := range []string{"svc-a", "svc-b"} {
		ref, _ := reqs[name]["bundle"].(string)
		if !strings.HasPrefix(ref, mirror.Host+"/m/") || !strings.Contains(ref, ":v1.0.0@sha256:") {
			t.Errorf("bundle.json: dependency %s is %q, want the mirror's, by tag and digest", name, ref)
		}
	}
	if _, ok := reqs["svc-b"]["parameters"]; !ok {
		t.Errorf("bundle.json: svc-b lost its wiring: %v", reqs["svc-b"])
	}

	// The interface without document (PEP003's own example, `interface:
	// {outputs: [...]}`) is checked against a substitute.
	ienv := clitest.New(t)
	srcIface := registrytest.New(t)
	hi := srcIface.Host + "/pep3/"
	pushTo := func(name, version string, b fixture.Bundle) {
		t.Helper()
		b.Name, b.Version, b.Tags = name, version, []string{"v" + version}
		if _, err := fixture.PushBundle(ctx, registrytest.Repository(t, c, hi+name), hi+name, b); err != nil {
			t.Fatal(err)
		}
	}
	pushTo("mysql", "5.7.3", fixture.Bundle{Outputs: map[string]string{"connstr": "string"}})
	pushTo("iface-app", "1.0.0", fixture.Bundle{DepsV2: []fixture.DepV2{{Name: "db", Bundle: hi + "mysql:v5.7.3",
		Interface: map[string]any{"outputs": []any{map[string]any{"name": "dbCon", "type": "string"}}}}}})
	ienv.WriteFile("ferry.yaml", fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: %siface-app:v1.0.0\nuse:\n  db: %smysql:v5.7.3\n", hi, hi))
	r := ienv.Run("lock")
	if r.Code == 0 || !strings.Contains(r.Stderr, `output "dbCon" (string)`) {
		t.Errorf("lock with a substitute lacking the interface's output: exit %d\n%s", r.Code, r.Stderr)
	}

	// A porter.yaml ROOT's dependency: the bundle it resolves to is
	// checked against its interface, written with or without document:.
	for name, iface := range map[string]string{
		"short form": "interface:\n          outputs:\n            - {name: dbCon, type: string}\n",
		"document":   "interface:\n          document:\n            outputs:\n              - {name: dbCon, type: string}\n",
	} {
		penv := clitest.New(t)
		penv.WriteFile("porter.yaml", fmt.Sprintf("name: app\nversion: 1.0.0\ndependencies:\n  requires:\n    - name: db\n      bundle:\n        reference: %smysql:v5.7.3\n        %s", hi, iface))
		r := penv.Run("lock", "porter.yaml")
		if r.Code == 0 || !strings.Contains(r.Stderr, `dependency "db" resolved to `+hi+"mysql:v5.7.3") || !strings.Contains(r.Stderr, `output "dbCon" (string)`) {
			t.Errorf("%s: a porter.yaml dependency lacking its interface's output: exit %d\n%s", name, r.Code, r.Stderr)
		}
	}

	// exact: a tag outside its range is locked, with a warning.
	xenv := clitest.New(t)
	xenv.Vars = append(xenv.Vars, "FERRY_VERSION_STRATEGY=exact")
	xenv.WriteFile("porter.yaml", fmt.Sprintf("name: app\nversion: 1.0.0\ndependencies:\n  requires:\n    - name: db\n      bundle:\n        reference: %smysql:v5.7.3\n        version: 8.x\n", hi))
	lr := xenv.MustRun("lock", "porter.yaml", "--lock", "porter.ferry.lock")
	if !strings.Contains(lr.Stderr, "warning: ") || !strings.Contains(lr.Stderr, `tag v5.7.3 is outside its declared range "8.x"`) {
		t.Errorf("lock under exact: no warning for a tag outside its range:\n%s", lr.Stderr)
	}
	if p := e2eReadLock(t, xenv, "porter.ferry.lock").Package(hi + "mysql"); p == nil || p.Version != "v5.7.3" {
		t.Errorf("lock under exact: mysql %+v, want v5.7.3 (Porter's exact takes the reference's tag)", p)
	}
	for _, args := range [][]string{{"resolve", "porter.yaml", "-o", "json"}, {"lock", "porter.yaml", "--lock", "json.lock", "-o", "json"}} {
		var rep struct {
			Warnings []string `json:"warnings"`
		}
		jr := xenv.MustRun(args...)
		if err := json.Unmarshal([]byte(jr.Stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], `tag v5.7.3 is outside its declared range "8.x"`) {
			t.Errorf("%s: warnings = %q", strings.Join(args, " "), rep.Warnings)
		}
	}
}
