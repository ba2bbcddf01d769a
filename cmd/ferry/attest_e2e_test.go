package main

import (
	"os"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/cosigntest"
)

// TestE2EAttestations: a trust rule requiring a SLSA provenance v1
// attestation with a builder condition (issue 30 point 1), against a
// statement the real cosign v3 `attest` attached to acme/app as a Sigstore
// bundle referrer: lock, mirror and verify pass; a rule asking for
// another builder or another predicate type fails lock and mirror before
// anything is copied, and verify at the mirror, with exit 3 naming the
// package, the predicate type and why.
func TestE2EAttestations(t *testing.T) {
	t.Parallel()
	w := newTrustWorld(t)
	h := w.src.Host
	cosign := cosigntest.V3(t)
	key, pub := cosign.GenerateKeyPair(t)
	data, err := os.ReadFile(pub)
	if err != nil {
		t.Fatal(err)
	}
	w.env.WriteFile("keys/att.pub", string(data))
	const builder = "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/generator_container_slsa3.yml"
	w.env.WriteFile("provenance.json", `{"buildDefinition": {"buildType": "https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1",
  "externalParameters": {"workflow": {"ref": "refs/heads/main", "repository": "https://github.com/acme/app", "path": ".github/workflows/release.yml"}}},
  "runDetails": {"builder": {"id": "`+builder+`@refs/tags/v2.1.0"}}}`)
	app := w.app + "@" + w.digests[w.app].String()
	cosign.AttestImage(t, key, app, w.env.Path("provenance.json"), "slsaprovenance1")

	rule := func(att string) string {
		return "trust:\n  rules:\n    - match: " + h + "/acme/\n      keys: [keys/att.pub]\n      attestations:\n" + att
	}
	w.ferryYAML(rule("        - predicateType: https://slsa.dev/provenance/v1\n          builderId: ^" + builder + "@refs/tags/v2\n          sourceRepository: github.com/acme/app\n"))
	w.env.Expect(0, []string{"lock"})
	lockText := w.env.ReadFile("ferry.lock")
	if !strings.Contains(lockText, "rule: "+h+"/acme/") {
		t.Errorf("the lock records no artifact verified by the rule:\n%s", lockText)
	}
	w.env.Expect(0, []string{"mirror", "--to", w.mirror.Host + "/m"})
	w.env.Expect(0, []string{"verify"})

	for _, tc := range []struct {
		name, att string
		want      []string
	}{
		{"another builder", "        - type: slsaprovenance1\n          builderId: ^https://github.com/evil/\n",
			[]string{app, "https://slsa.dev/provenance/v1", "builder id " + builder + " at refs/tags/v2.1.0 does not match ^https://github.com/evil/"}},
		{"another predicate type", "        - type: cyclonedx\n",
			[]string{app, "https://cyclonedx.org/bom", "missing", "https://slsa.dev/provenance/v1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.ferryYAML(rule(tc.att))
			w.env.Expect(3, []string{"lock", "--lock", "x.lock"}, tc.want...)
			e2eAbsent(t, w.env.Path("x.lock"))
			w.mirror.Reset()
			w.env.Expect(3, []string{"mirror", "--to", w.mirror.Host + "/m2"}, tc.want...)
			if n := w.mirrorManifests(); n != 0 {
				t.Errorf("%d manifests pushed to the mirror by a run that fails its attestation rule", n)
			}
			w.env.Expect(3, []string{"verify"}, tc.want[1:]...)
		})
	}
}
