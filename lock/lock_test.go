package lock_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
)

var (
	dApp = digest.FromString("app").String()
	dWeb = digest.FromString("web").String()
	dAPI = digest.FromString("api").String()
	dDB  = digest.FromString("db").String()
	dDB2 = digest.FromString("db2").String()
	dImg = digest.FromString("img").String()
	dBin = digest.FromString("bin").String()
)

// diamond is a small valid lock: app -> web, api -> db, plus a replaced
// source and a mixin.
func diamond() *lock.Lock {
	dep := func(name, target, d string) lock.Dependency {
		return lock.Dependency{Name: name, Ref: target + ":v1", Constraint: "^1", Resolved: target + "@" + d}
	}
	l := &lock.Lock{
		APIVersion: lock.APIVersion, Kind: lock.Kind, Inputs: digest.FromString("inputs").String(),
		Roots: []string{"r.io/app"},
		Packages: []lock.Package{
			{Source: "r.io/web", Version: "v1.1.0", Digest: dWeb, Kind: "porter.bundle", Dependencies: []lock.Dependency{dep("db", "r.io/db", dDB)}},
			{Source: "r.io/app", Ref: "r.io/app:v1.0.0", Version: "v1.0.0", Digest: dApp, Kind: "porter.bundle",
				Dependencies: []lock.Dependency{dep("web", "r.io/web", dWeb), dep("api", "r.io/api", dAPI)},
				Images:       []lock.Image{{Name: "nginx", Ref: "r.io/app@" + dImg, Digest: dImg}}},
			{Source: "r.io/old-db", ReplacedBy: "r.io/db"},
			{Source: "r.io/db", Version: "v1.2.0", Digest: dDB, Kind: "porter.bundle", Replaces: []string{"r.io/old-db"}},
			{Source: "r.io/api", Version: "v1.0.1", Digest: dAPI, Kind: "porter.bundle", Dependencies: []lock.Dependency{dep("db", "r.io/db", dDB)}},
		},
	}
	setMixins(l, []testMixin{{Name: "exec", Feed: "https://feed", Version: "v1.2.3", Binaries: map[string]testBinary{
		"exec-linux-amd64": {Digest: dBin, Size: 10, URL: "https://feed/exec-linux-amd64"},
	}}})
	return l
}

// testMixin is the shape of a format's lock section, as the mixin format
// writes `mixins:`; the lock keeps sections without knowing them.
func init() {
	// The mixin format registers `mixins` with its own check; this
	// stand-in checks what the tests need: every binary digest parses.
	lock.RegisterSection("mixins", func(n *yaml.Node) error {
		var ms []testMixin
		if err := n.Decode(&ms); err != nil {
			return err
		}
		for _, m := range ms {
			for _, b := range m.Binaries {
				if _, err := digest.Parse(b.Digest); err != nil {
					return fmt.Errorf("%s: %w", m.Name, err)
				}
			}
		}
		return nil
	})
}

type testMixin struct {
	Name     string                `yaml:"name"`
	Feed     string                `yaml:"feed"`
	Version  string                `yaml:"version"`
	Mirror   string                `yaml:"mirror,omitempty"`
	Binaries map[string]testBinary `yaml:"binaries"`
}

type testBinary struct {
	Digest string `yaml:"digest"`
	Size   int64  `yaml:"size"`
	URL    string `yaml:"url"`
}

func setMixins(l *lock.Lock, ms []testMixin) {
	if err := l.SetSection("mixins", ms); err != nil {
		panic(err)
	}
}

func mixins(l *lock.Lock) []testMixin {
	var ms []testMixin
	if _, err := l.Section("mixins", &ms); err != nil {
		panic(err)
	}
	return ms
}

func TestMarshalDeterministic(t *testing.T) {
	a, err := diamond().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	l := diamond()
	slices.Reverse(l.Packages)
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatalf("package order changes the lock:\n%s\n---\n%s", a, b)
	}
	back, err := lock.Parse(a)
	if err != nil {
		t.Fatalf("Parse(Marshal()): %v\n%s", err, a)
	}
	c, err := back.Marshal()
	if err != nil || string(c) != string(a) {
		t.Fatalf("round trip differs (%v):\n%s\n---\n%s", err, a, c)
	}
	if !strings.HasPrefix(string(a), "apiVersion: ferry.dev/v1alpha1\nkind: Lock\ninputs: sha256:") {
		t.Errorf("lock does not open with its header:\n%s", a)
	}
	if i, j := strings.Index(string(a), "source: r.io/api"), strings.Index(string(a), "source: r.io/web"); i < 0 || j < i {
		t.Errorf("packages are not sorted by source")
	}
}

func TestWriteAtomicAndUntouched(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ferry.lock")
	if err := diamond().Write(path); err != nil {
		t.Fatal(err)
	}
	st1, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Make the file read-only: an identical write must not replace it.
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := diamond().Write(path); err != nil {
		t.Fatal(err)
	}
	st2, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(st1, st2) || st2.Mode().Perm() != 0o444 {
		t.Errorf("an identical lock was rewritten")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	l, err := lock.Read(path)
	if err != nil || len(l.Packages) != 5 {
		t.Fatalf("Read: %v", err)
	}
}

func TestParseRejects(t *testing.T) {
	good, err := diamond().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data string
		want string
	}{
		{"empty", "", "not a valid lock"},
		{"not yaml", "{{{", "not a valid lock"},
		{"wrong kind", strings.Replace(string(good), "kind: Lock", "kind: MirrorSet", 1), "kind"},
		{"wrong apiVersion", strings.Replace(string(good), "ferry.dev/v1alpha1", "ferry.dev/v9", 1), "apiVersion"},
		{"unknown field", strings.Replace(string(good), "inputs:", "extra: 1\ninputs:", 1), "extra"},
		{"unknown package field", strings.Replace(string(good), "    version: v1.1.0", "    versoin: v1.1.0", 1), `unknown key "versoin"`},
		{"bad digest", strings.Replace(string(good), "digest: "+dWeb, "digest: sha256:nothex", 1), "r.io/web"},
		{"bad resolved", strings.Replace(string(good), "resolved: r.io/web@"+dWeb, "resolved: r.io/web", 1), "dependency web"},
		{"no digest", strings.Replace(string(good), "digest: "+dAPI, "digest: \"\"", 1), "r.io/api"},
		{"bad image digest", strings.Replace(string(good), "digest: "+dImg, "digest: md5:x", 1), "image nginx"},
		{"duplicate package", strings.Replace(strings.Replace(string(good), "source: r.io/web", "source: r.io/api", 1), "digest: "+dWeb, "digest: "+dAPI, 1), "locked twice"},
		{"no source", strings.Replace(string(good), "source: r.io/web", "source: \"\"", 1), "no source"},
		{"a section's own check", strings.Replace(string(good), dBin, "sha256:zz", 1), "mixins: exec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.data == string(good) {
				t.Fatal("test case changed nothing")
			}
			_, err := lock.Parse([]byte(tt.data))
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", tt.data)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
			path := filepath.Join(t.TempDir(), "bad.lock")
			if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := lock.Read(path); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), path) {
				t.Errorf("Read: %v (exit %d), want exit 2 naming the file", err, exitcode.Of(err))
			}
		})
	}
	if _, err := lock.Read(filepath.Join(t.TempDir(), "none.lock")); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "ferry lock") {
		t.Errorf("missing lock: %v", err)
	}
}

func TestGraphFromLock(t *testing.T) {
	g := diamond().Graph()
	plan, err := g.Plan()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, p := range plan {
		order = append(order, p.Source)
	}
	if want := []string{"r.io/db", "r.io/web", "r.io/api", "r.io/app"}; !slices.Equal(order, want) {
		t.Errorf("plan = %v, want %v", order, want)
	}
	if g.Replaced["r.io/old-db"] != "r.io/db" {
		t.Errorf("replaced = %v", g.Replaced)
	}
	if got := diamond().Locked(); len(got) != 4 || len(got["r.io/db"]) != 1 || got["r.io/db"][0].Version != "v1.2.0" || got["r.io/db"][0].Digest.String() != dDB {
		t.Errorf("Locked() = %v", got)
	}
}

func TestWhy(t *testing.T) {
	l := diamond()
	tests := []struct {
		ref        string
		source     string
		replacedBy string
		paths      []string
		err        string
	}{
		{ref: "db", source: "r.io/db", paths: []string{
			"r.io/app:v1.0.0 -> r.io/api:v1.0.1 -> r.io/db:v1.2.0",
			"r.io/app:v1.0.0 -> r.io/web:v1.1.0 -> r.io/db:v1.2.0",
		}},
		{ref: "r.io/web:v9", source: "r.io/web", paths: []string{"r.io/app:v1.0.0 -> r.io/web:v1.1.0"}},
		{ref: "r.io/app@" + dApp, source: "r.io/app", paths: []string{"r.io/app:v1.0.0"}},
		{ref: "old-db", source: "r.io/old-db", replacedBy: "r.io/db", paths: []string{
			"r.io/app:v1.0.0 -> r.io/api:v1.0.1 -> r.io/db:v1.2.0 (replaces r.io/old-db)",
			"r.io/app:v1.0.0 -> r.io/web:v1.1.0 -> r.io/db:v1.2.0 (replaces r.io/old-db)",
		}},
		{ref: "r.io/nope", err: "not in the lock"},
		{ref: "nope", err: "no package"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			ans, err := l.Why(tt.ref)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Why(%q) = %v, %v; want error %q", tt.ref, ans, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, p := range ans.Paths {
				paths = append(paths, strings.Join(p, " -> "))
			}
			if ans.Source != tt.source || ans.ReplacedBy != tt.replacedBy || !slices.Equal(paths, tt.paths) {
				t.Errorf("Why(%q) = %s (replaced by %q) %q", tt.ref, ans.Source, ans.ReplacedBy, paths)
			}
		})
	}
	// Only the parents that named the replaced source explain the redirect:
	// web asks for old-db, api asks for db itself.
	l.Package("r.io/web").Dependencies[0].Ref = "r.io/old-db:v1"
	ans, err := l.Why("old-db")
	if err != nil {
		t.Fatal(err)
	}
	if want := "r.io/app:v1.0.0 -> r.io/web:v1.1.0 -> r.io/db:v1.2.0 (replaces r.io/old-db)"; len(ans.Paths) != 1 || strings.Join(ans.Paths[0], " -> ") != want {
		t.Errorf("Why(old-db) with one declaring parent = %q, want only %q", ans.Paths, want)
	}
	// A last path element shared by two sources is ambiguous.
	l.Packages = append(l.Packages, lock.Package{Source: "other/db", Version: "v1", Digest: dDB})
	if _, err := l.Why("db"); err == nil || !strings.Contains(err.Error(), "several") {
		t.Errorf("ambiguous why: %v", err)
	}
}

func TestDiff(t *testing.T) {
	changed := diamond()
	changed.Package("r.io/db").Version, changed.Package("r.io/db").Digest = "v1.3.0", dDB2
	changed.Packages = slices.DeleteFunc(changed.Packages, func(p lock.Package) bool { return p.Source == "r.io/api" })
	changed.Packages = append(changed.Packages, lock.Package{Source: "r.io/cache", Version: "v2.0.0", Digest: dImg})
	mirrored := diamond()
	for i := range mirrored.Packages {
		mirrored.Packages[i].Mirror = "m/" + mirrored.Packages[i].Source
	}
	mm := mixins(mirrored)
	mm[0].Mirror = "m/porter-mixins/exec@" + dImg
	setMixins(mirrored, mm)
	rebinned := diamond()
	rm := mixins(rebinned)
	rm[0].Binaries["exec-linux-amd64"] = testBinary{Digest: dDB, Size: 10, URL: "https://feed/exec-linux-amd64"}
	setMixins(rebinned, rm)

	tests := []struct {
		name string
		a, b *lock.Lock
		want []string
	}{
		{"same", diamond(), diamond(), nil},
		{"mirroring is not a change", diamond(), mirrored, nil},
		{"versions, removals and additions", diamond(), changed, []string{
			"- package r.io/api v1.0.1 " + dAPI,
			"~ package r.io/db v1.2.0 -> v1.3.0 (" + dDB + " -> " + dDB2 + ")",
			"+ package r.io/cache v2.0.0 " + dImg,
		}},
		{"a mixin binary swapped", diamond(), rebinned, []string{"! REPLACED mixin exec v1.2.3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lock.Diff(tt.a, tt.b)
			if len(got) != len(tt.want) {
				t.Fatalf("Diff = %v, want %v", got, tt.want)
			}
			for i, c := range got {
				if !strings.HasPrefix(c.String(), tt.want[i]) {
					t.Errorf("change %d = %q, want %q", i, c, tt.want[i])
				}
			}
		})
	}
}

// TestMarshalJSON: `ferry lock -o json` carries the formats' sections.
func TestMarshalJSON(t *testing.T) {
	b, err := json.Marshal(diamond())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Kind     string      `json:"kind"`
		Packages []any       `json:"packages"`
		Mixins   []testMixin `json:"mixins"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if got.Kind != lock.Kind || len(got.Packages) != 5 || len(got.Mixins) != 1 || got.Mixins[0].Name != "exec" {
		t.Errorf("JSON lock = %s", b)
	}
}
