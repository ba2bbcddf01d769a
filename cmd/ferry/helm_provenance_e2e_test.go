package main

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/ferryhq/ferry/indexrepo/indexrepotest"
	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestE2EHelmProvenance: a trust rule's `provenance: {keyring}` (issue 30
// point 5) on a chart of a classic repository whose .prov Helm's own
// signing code made: lock, mirror and verify pass with the publisher's
// keyring; a forged .prov (signed by another key) fails lock (exit 3,
// nothing written), and verify of the mirror fails against a keyring
// that does not hold the signer.
func TestE2EHelmProvenance(t *testing.T) {
	t.Parallel()
	env := clitest.New(t)
	mirror := registrytest.New(t)
	s := indexrepotest.New(t)

	acme, err := openpgp.NewEntity("Acme Charts", "", "charts@acme.example", nil)
	if err != nil {
		t.Fatal(err)
	}
	evil, err := openpgp.NewEntity("Evil", "", "evil@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	keyring := func(name string, e *openpgp.Entity) {
		var buf bytes.Buffer
		if err := e.Serialize(&buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(env.Path(name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keyring("acme.gpg", acme)
	keyring("evil.gpg", evil)

	ch := charttest.Chart(charttest.ChartSpec{Name: "web", Version: "1.0.0", Templates: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n"}})
	tgz, err := charttest.ChartArchive(ch)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(e *openpgp.Entity) []byte {
		out, err := charttest.Provenance(e, tgz, "web-1.0.0.tgz")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	idx, err := charttest.ChartIndex(map[string][]byte{"web-1.0.0.tgz": tgz}, "", time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	s.Put("/index.yaml", idx)
	s.Put("/web-1.0.0.tgz", tgz)
	s.Put("/web-1.0.0.tgz.prov", sign(acme))
	ferryYAML := func(keyring string) {
		env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\ncharts:\n  - repo: "+s.URL+"\n    name: web\n    version: 1.0.0\n"+
			"trust:\n  rules:\n    - match: "+s.URL+"/\n      provenance: {keyring: "+keyring+"}\n")
	}

	ferryYAML("acme.gpg")
	env.Expect(0, []string{"lock"})
	env.Expect(0, []string{"mirror", "--to", mirror.Host + "/m"})
	env.Expect(0, []string{"verify"})

	// The mirror checked against a keyring without the signer.
	ferryYAML("evil.gpg")
	env.Expect(3, []string{"verify"}, "provenance does not verify", "signature made by unknown entity")

	// A forged .prov at the source.
	ferryYAML("acme.gpg")
	s.Put("/web-1.0.0.tgz.prov", sign(evil))
	env.Expect(3, []string{"lock", "--lock", "x.lock"}, s.URL+"/web@", "provenance does not verify", "signature made by unknown entity")
	e2eAbsent(t, env.Path("x.lock"))
}
