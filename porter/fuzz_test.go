package porter

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/ociref"
)

// realworldBundles returns the bytes of every realworld bundle.json.
func realworldBundles(tb testing.TB) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(realworld, "*.bundle.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no realworld bundles in %s: %v", realworld, err)
	}
	var out [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

// checkQualified checks that a dependency reference Porter's Qualify
// accepts prints as a reference Qualify reads back to itself.
func checkQualified(t *testing.T, ref string) {
	t.Helper()
	if ref == "" {
		return
	}
	r, err := Reader{}.Qualify(ref, ociref.Reference{})
	if err != nil {
		return
	}
	again, err := Reader{}.Qualify(r.String(), ociref.Reference{})
	if err != nil || again != r {
		t.Fatalf("Qualify(%q) = %s; qualified again: %+v, %v", ref, r, again, err)
	}
}

// checkDependencies checks what every reader of dependencies relies on:
// each has a name, names are unique, After names siblings only, an
// interface-only dependency has no reference, and a reference that
// qualifies is stable.
func checkDependencies(t *testing.T, deps []format.Dependency) {
	t.Helper()
	names := map[string]bool{}
	for _, d := range deps {
		if d.Name == "" {
			t.Fatalf("dependency without a name: %+v", d)
		}
		if names[d.Name] {
			t.Fatalf("dependency %q listed twice", d.Name)
		}
		names[d.Name] = true
		if d.Interface && d.Ref != "" {
			t.Fatalf("interface-only dependency %q has ref %q", d.Name, d.Ref)
		}
		checkQualified(t, d.Ref)
		checkQualified(t, d.InterfaceRef)
		if d.InterfaceDocument != nil {
			_, _ = InterfaceFromDocument(d.InterfaceDocument)
		}
	}
	for _, d := range deps {
		for _, a := range d.After {
			if !names[a] || a == d.Name {
				t.Fatalf("dependency %q is after %q, which is not a sibling", d.Name, a)
			}
		}
	}
}

// FuzzParseBundle checks that a bundle.json ParseBundle accepts has a name
// and version and survives a round trip (marshalled and parsed again, it
// marshals to the same bytes), and that what is read from it
// (dependencies, mixins, declarations) is well formed and deterministic.
func FuzzParseBundle(f *testing.F) {
	for _, data := range realworldBundles(f) {
		f.Add(data)
	}
	f.Add([]byte(`{"name":"a","version":"1.0.0","custom":{"io.cnab.dependencies":{"sequence":["b"],"requires":{"b":{"bundle":"b/c","version":{"ranges":["1.x"]}}}}}}`))
	f.Add([]byte(`{"name":"a","version":"1.0.0","custom":{"org.getporter.dependencies@v2":{"requires":{"x":{"interface":{"document":{"outputs":{"o":{"definition":"d"}}}}}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBundle(data)
		if err != nil {
			return
		}
		if b.Name == "" || b.Version == "" {
			t.Fatalf("accepted a bundle without name or version: %+v", b)
		}
		out, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("marshalling a parsed bundle: %v", err)
		}
		b2, err := ParseBundle(out)
		if err != nil {
			t.Fatalf("a parsed bundle, marshalled, does not parse: %v\n%s", err, out)
		}
		out2, err := json.Marshal(b2)
		if err != nil || string(out2) != string(out) {
			t.Fatalf("round trip changed the bundle:\n%s\n%s (%v)", out, out2, err)
		}
		deps, err := b.Dependencies()
		deps2, err2 := b2.Dependencies()
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(deps, deps2) {
			t.Fatalf("dependencies differ after a round trip or between calls: %+v (%v), %+v (%v)", deps, err, deps2, err2)
		}
		if err == nil {
			checkDependencies(t, deps)
		}
		mixins, _ := b.Mixins()
		if !sort.SliceIsSorted(mixins, func(i, j int) bool { return mixins[i].Name < mixins[j].Name }) {
			t.Fatalf("mixins not sorted by name: %+v", mixins)
		}
		_, _ = b.Declarations()
	})
}

// FuzzParsePorterYAML checks that a porter.yaml ParsePorterYAML accepts
// has a name, dependencies with unique names and wiring between siblings
// only, and mixins with names; seeds are the porter.yaml files embedded
// in the realworld bundles.
func FuzzParsePorterYAML(f *testing.F) {
	for _, data := range realworldBundles(f) {
		var b struct {
			Custom struct {
				Porter struct {
					Manifest string `json:"manifest"`
				} `json:"sh.porter"`
			} `json:"custom"`
		}
		if err := json.Unmarshal(data, &b); err != nil {
			f.Fatal(err)
		}
		if b.Custom.Porter.Manifest == "" {
			continue
		}
		y, err := base64.StdEncoding.DecodeString(b.Custom.Porter.Manifest)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(y)
	}
	f.Add([]byte("name: a\nmixins:\n- exec@1.x\n- helm3:\n    mixin: {version: ^1.0, source: https://example.com/atom.xml}\n    clientVersion: 3.1.0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParsePorterYAML(data)
		if err != nil {
			return
		}
		if m.Name == "" {
			t.Fatalf("accepted a porter.yaml without a name: %+v", m)
		}
		checkDependencies(t, m.Dependencies)
		for _, mx := range m.Mixins {
			if mx.Name == "" {
				t.Fatalf("mixin without a name: %+v", m.Mixins)
			}
		}
		again, err := ParsePorterYAML(data)
		if err != nil || !reflect.DeepEqual(m, again) {
			t.Fatalf("parsing twice differs: %+v, %+v (%v)", m, again, err)
		}
	})
}
