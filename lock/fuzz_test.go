package lock_test

import (
	"bytes"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/lock"
)

// fuzzAttribute is a package field a format registers (Crossplane's).
const fuzzAttribute = "crossplane"

func init() { lock.RegisterAttribute(fuzzAttribute) }

// fuzzSeedLock is a valid lock with every kind of field: a Porter bundle
// with a dependency and an image, a Crossplane package with an attribute,
// a replaced source, and a `mixins` section.
func fuzzSeedLock(tb testing.TB) []byte {
	tb.Helper()
	d := func(s string) string { return digest.FromString(s).String() }
	l := &lock.Lock{
		APIVersion: lock.APIVersion, Kind: lock.Kind, Inputs: d("inputs"), Input: "ferry.yaml",
		Roots: []string{"ghcr.io/acme/app", "xpkg.crossplane.io/acme/cfg@" + d("cfg")},
		Packages: []lock.Package{
			{Source: "ghcr.io/acme/app", Ref: "ghcr.io/acme/app:v1.0.0", Version: "v1.0.0", Digest: d("app"), Kind: "porter.bundle",
				MediaType: "application/vnd.oci.image.index.v1+json", Size: 1234,
				Dependencies: []lock.Dependency{{Name: "db", Ref: "docker.io/getporter/mysql:v0.1.3", Constraint: "^0.1", Resolved: "docker.io/getporter/mysql@" + d("db"), After: []string{"x"}, Role: "interface", Use: "db"}},
				Images:       []lock.Image{{Name: "invocation", Ref: "ghcr.io/acme/app-installer@" + d("img"), Digest: d("img"), Size: 99}}},
			{Source: "docker.io/getporter/mysql", Version: "v0.1.4", Digest: d("db"), Kind: "porter.bundle", Replaces: []string{"docker.io/old/mysql"}},
			{Source: "docker.io/old/mysql", ReplacedBy: "docker.io/getporter/mysql"},
			{Source: "xpkg.crossplane.io/acme/cfg", Version: "v2.0.0", Digest: d("cfg"), Kind: "crossplane.configuration", Attributes: map[string]string{fuzzAttribute: ">=v1.14"}},
		},
	}
	setMixins(l, []testMixin{{Name: "exec", Feed: "https://cdn.porter.sh/mixins/atom.xml", Version: "v1.2.3", Binaries: map[string]testBinary{
		"exec-linux-amd64": {Digest: d("bin"), Size: 10, URL: "https://cdn.porter.sh/mixins/exec/v1.2.3/exec-linux-amd64"},
	}}})
	data, err := l.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := lock.Parse(data); err != nil {
		tb.Fatalf("the seed lock does not parse: %v\n%s", err, data)
	}
	return data
}

// FuzzParse checks that a lock Parse accepts is valid and survives a
// round trip: marshalled, it parses again to a lock that marshals to the
// same bytes, and marshalling is canonical (a second Marshal of the first
// lock is byte-identical).
func FuzzParse(f *testing.F) {
	seed := fuzzSeedLock(f)
	f.Add(seed)
	f.Add(bytes.ReplaceAll(seed, []byte("  "), []byte("    ")))
	f.Add([]byte("apiVersion: ferry.dev/v1alpha1\nkind: Lock\ninputs: x\npackages: []\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := lock.Parse(data)
		if err != nil {
			return
		}
		if err := l.Validate(); err != nil {
			t.Fatalf("Parse accepted a lock Validate refuses: %v", err)
		}
		out, err := l.Marshal()
		if err != nil {
			t.Fatalf("Marshal of a parsed lock: %v", err)
		}
		again, err := l.Marshal()
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("Marshal is not deterministic:\n%s\n---\n%s", out, again)
		}
		l2, err := lock.Parse(out)
		if err != nil {
			t.Fatalf("a parsed lock, marshalled, does not parse: %v\n%s", err, out)
		}
		out2, err := l2.Marshal()
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the lock (%v):\n%s\n---\n%s", err, out, out2)
		}
	})
}
