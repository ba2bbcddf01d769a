package mirrorset_test

import (
	"bytes"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/mirrorset"
)

// FuzzParse checks that a ferry.yaml Parse accepts survives a round trip:
// marshalled, it parses again and marshals to the same bytes, with the
// same roots, replaces and uses.
func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	f.Add([]byte("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n- ref: alpine\nuse:\n  a/b: {ref: getporter/mysql:v0.1.3, force: true}\ncrossplane: {defaultRegistry: xpkg.crossplane.io}\n"))
	f.Add([]byte("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nporter: {versionStrategy: exact}\npackages: [{ref: 'localhost:5000/a/b@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := mirrorset.Parse(data)
		if err != nil {
			return
		}
		out, err := yaml.Marshal(m)
		if err != nil {
			t.Fatalf("marshalling a parsed ferry.yaml: %v", err)
		}
		m2, err := mirrorset.Parse(out)
		if err != nil {
			t.Fatalf("a parsed ferry.yaml, marshalled, does not parse: %v\n%s", err, out)
		}
		out2, err := yaml.Marshal(m2)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the ferry.yaml (%v):\n%s\n---\n%s", err, out, out2)
		}
		r1, r2 := m.Roots(), m2.Roots()
		if len(r1) != len(r2) {
			t.Fatalf("roots differ after a round trip: %+v, %+v", r1, r2)
		}
		for i := range r1 {
			if r1[i].Ref != r2[i].Ref || r1[i].Constraint != r2[i].Constraint {
				t.Fatalf("roots differ after a round trip: %+v, %+v", r1, r2)
			}
		}
	})
}
