package in_toto_test

import (
	"encoding/json"
	"testing"

	realintoto "github.com/in-toto/in-toto-golang/in_toto"

	"github.com/ferryhq/ferry/internal/forked/in-toto-golang/in_toto"
)

// TestParity holds the copy's declarations (what rekor's dsse and intoto
// entry types read a DSSE payload into) to the real in-toto-golang's: the
// same constant, and statements that decode and encode alike.
func TestParity(t *testing.T) {
	if in_toto.PayloadType != realintoto.PayloadType {
		t.Errorf("PayloadType = %q, real %q", in_toto.PayloadType, realintoto.PayloadType)
	}
	for _, doc := range []string{
		`{"_type":"https://in-toto.io/Statement/v1","predicateType":"https://slsa.dev/provenance/v1","subject":[{"name":"a","digest":{"sha256":"deadbeef"}}],"predicate":{"x":1}}`,
		`{"_type":"https://in-toto.io/Statement/v0.1","predicateType":"https://slsa.dev/provenance/v0.2","subject":[{"name":"pkg","digest":{"sha512":"00"}}],"predicate":{"builder":{"id":"https://example.com/b"},"buildType":"t","invocation":{"configSource":{"uri":"git+https://example.com","digest":{"sha1":"ab"},"entryPoint":"e"}},"materials":[{"uri":"u","digest":{"sha256":"cd"}}],"metadata":{"buildStartedOn":"2024-01-02T03:04:05Z","completeness":{"parameters":true}}}}`,
		`{"_type":1}`,
		`{"subject":"not a list"}`,
		`{}`,
	} {
		var s, rs any = &in_toto.Statement{}, &realintoto.Statement{}
		var p, rp any = &in_toto.ProvenanceStatement{}, &realintoto.ProvenanceStatement{}
		for _, pair := range [][2]any{{s, rs}, {p, rp}} {
			err, rerr := json.Unmarshal([]byte(doc), pair[0]), json.Unmarshal([]byte(doc), pair[1])
			if (err == nil) != (rerr == nil) {
				t.Fatalf("%s: decoding %T: %v, real %v", doc, pair[0], err, rerr)
			}
			got, _ := json.Marshal(pair[0])
			want, _ := json.Marshal(pair[1])
			if string(got) != string(want) {
				t.Errorf("%s: %T encodes as\n%s\nreal\n%s", doc, pair[0], got, want)
			}
		}
	}
}
