package ociref

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// realworld is the folder of upstream files (see its README); the fuzz
// targets take the references written in them as seeds.
const realworld = "../testdata/realworld"

// refField matches a reference-valued field in the realworld bundle.json
// (JSON) and crossplane.yaml (YAML) files.
var refField = regexp.MustCompile(`(?m)(?:"(?:image|bundle|reference)"\s*:\s*"([^"]+)")|(?:^\s*-?\s*(?:package|provider|configuration|function):\s*"?([^"\s#]+))`)

// realworldRefs returns every reference written in the realworld files.
func realworldRefs(tb testing.TB) []string {
	tb.Helper()
	var refs []string
	err := filepath.WalkDir(realworld, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".json") || strings.HasSuffix(path, ".yaml")) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range refField.FindAllStringSubmatch(string(data), -1) {
			refs = append(refs, m[1]+m[2])
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if len(refs) < 10 {
		tb.Fatalf("found %d references in %s, want at least 10", len(refs), realworld)
	}
	return refs
}

// fuzzRefs are seeds beyond the realworld ones: the shapes Parse accepts
// and the ones it must refuse without echoing credentials.
var fuzzRefs = []string{
	"ghcr.io/acme/app:v1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	"[::1]:5000/acme/app",
	"localhost/app",
	"127.0.0.1:5000/a/b/c/d:v1",
	"user:s3cret@ghcr.io/acme/app",
	"https://user:s3cret@ghcr.io/acme/app",
	"u:p@localhost:5000",
	"alpine",
	"getporter/mysql:v0.1.3",
	"index.docker.io/library/alpine",
}

// sameSecretFree checks that the error for s, which carries credentials,
// does not depend on them: the same reference with other credentials
// fails with the same message, so the message cannot hold them.
func sameSecretFree(t *testing.T, what string, s string, errOf func(string) error, err error) {
	t.Helper()
	at := userinfoAt(s)
	if at < 0 {
		return
	}
	const other = "u:p"
	alt := other + s[at:]
	if userinfoAt(alt) != len(other) {
		return // the credentials changed how the reference splits
	}
	if err == nil {
		t.Fatalf("%s(%q) accepted credentials", what, s)
	}
	altErr := errOf(alt)
	if altErr == nil || altErr.Error() != err.Error() {
		t.Fatalf("%s(%q) error depends on the credentials: %q, with %q: %v", what, s, err, alt, altErr)
	}
}

// FuzzParse checks that a reference Parse accepts is fully qualified and
// prints as a string that parses back to the same reference, and that an
// error for a reference with credentials does not depend on them.
func FuzzParse(f *testing.F) {
	for _, s := range append(realworldRefs(f), fuzzRefs...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		sameSecretFree(t, "Parse", s, func(s string) error { _, err := Parse(s); return err }, err)
		if err != nil {
			return
		}
		if r.Registry == "" || r.Repository == "" || !IsRegistry(r.Registry) {
			t.Fatalf("Parse(%q) = %+v: not fully qualified", s, r)
		}
		again, err := Parse(r.String())
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not parse: %v", s, r, err)
		}
		if again != r {
			t.Fatalf("Parse(%q) = %+v, Parse(%q) = %+v", s, r, r, again)
		}
	})
}

// FuzzParseNormalized checks that a normalised reference is fully
// qualified, parses back with Parse, and that normalising it again
// changes nothing.
func FuzzParseNormalized(f *testing.F) {
	for _, s := range append(realworldRefs(f), fuzzRefs...) {
		for _, def := range []string{"", "xpkg.crossplane.io", "localhost:5000"} {
			f.Add(s, def)
		}
	}
	f.Fuzz(func(t *testing.T, s, def string) {
		r, err := ParseNormalized(s, def)
		sameSecretFree(t, "ParseNormalized", strings.TrimSpace(s), func(s string) error { _, err := ParseNormalized(s, def); return err }, err)
		if err != nil {
			return
		}
		again, err := Parse(r.String())
		if err != nil || again != r {
			t.Fatalf("ParseNormalized(%q, %q) = %+v; Parse(%q) = %+v, %v", s, def, r, r, again, err)
		}
		norm, err := ParseNormalized(r.String(), def)
		if err != nil || norm != r {
			t.Fatalf("ParseNormalized(%q, %q) = %+v; normalised again: %+v, %v", s, def, r, norm, err)
		}
	})
}

// FuzzQualify checks that a qualified dependency parses back to itself,
// takes its parent's registry when it names none, and is left alone when
// qualified again.
func FuzzQualify(f *testing.F) {
	parents := []string{"pkg.acme.co/internal/configuration-example", "localhost:5000/app", "xpkg.crossplane.io/a/b/c:v1"}
	for i, s := range append(realworldRefs(f), fuzzRefs...) {
		f.Add(s, parents[i%len(parents)])
	}
	f.Fuzz(func(t *testing.T, dep, parentRef string) {
		parent, err := Parse(parentRef)
		if err != nil {
			return
		}
		r, err := Qualify(dep, parent)
		sameSecretFree(t, "Qualify", strings.TrimSpace(dep), func(s string) error { _, err := Qualify(s, parent); return err }, err)
		if err != nil {
			return
		}
		if again, err := Parse(r.String()); err != nil || again != r {
			t.Fatalf("Qualify(%q, %s) = %+v; Parse(%q) = %+v, %v", dep, parent, r, r, again, err)
		}
		if IsPartial(strings.TrimSpace(dep)) && r.Registry != parent.Registry {
			t.Fatalf("Qualify(%q, %s) = %s: a partial reference left its parent's registry", dep, parent, r)
		}
		if again, err := Qualify(r.String(), parent); err != nil || again != r {
			t.Fatalf("Qualify(%q, %s) = %s; qualified again: %+v, %v", dep, parent, r, again, err)
		}
	})
}
