package signature_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ferryhq/ferry/internal/cosigntest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/signature"
)

// slsaV1Predicate is a SLSA provenance v1 predicate as GitHub's
// slsa-github-generator writes one (trimmed).
const slsaV1Predicate = `{
  "buildDefinition": {
    "buildType": "https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1",
    "externalParameters": {"workflow": {"ref": "refs/heads/main", "repository": "https://github.com/acme/app", "path": ".github/workflows/release.yml"}},
    "resolvedDependencies": [{"uri": "git+https://github.com/acme/app@refs/heads/main", "digest": {"gitCommit": "4f1d6ee7b6c3f5b8a39b0a2c1b4f7d61a4c2e9f0"}}]
  },
  "runDetails": {"builder": {"id": "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/generator_container_slsa3.yml@refs/tags/v2.1.0"}}
}`

// TestRealCosignAttest: the real cosign v2 and v3 attest an image on a
// loopback registry in each layout they write, cosign verify-attestation
// accepts it, and so does ferry's verifier, with the statement cosign
// signed; another key is rejected.
func TestRealCosignAttest(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		cosign   func(testing.TB) *cosigntest.Cosign
		extra    []string
		wantKind signature.Kind
	}{
		{name: "cosign v2 classic .att", cosign: cosigntest.V2, wantKind: signature.KindAtt},
		{name: "cosign v3 default", cosign: cosigntest.V3, wantKind: signature.KindReferrer},
		{name: "cosign v3 classic .att", cosign: cosigntest.V3, extra: []string{"--new-bundle-format=false"}, wantKind: signature.KindAtt},
		{name: "cosign v2 bundle referrer (--new-bundle-format)", cosign: cosigntest.V2, extra: []string{"--new-bundle-format"}, wantKind: signature.KindReferrer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cosign(t)
			reg := registrytest.New(t)
			cl := registrytest.Client(t)
			repo := registrytest.Repository(t, cl, reg.Host+"/acme/app")
			img, err := fixture.PushImage(ctx, repo, "acme/app")
			if err != nil {
				t.Fatal(err)
			}
			d := img.Digest
			ref := reg.Host + "/acme/app@" + d.String()
			keyPath, pubPath := c.GenerateKeyPair(t)
			_, otherPub := c.GenerateKeyPair(t)
			pred := filepath.Join(t.TempDir(), "provenance.json")
			if err := os.WriteFile(pred, []byte(slsaV1Predicate), 0o644); err != nil {
				t.Fatal(err)
			}
			c.AttestImage(t, keyPath, ref, pred, "slsaprovenance1", tc.extra...)
			if err := c.VerifyAttestation(t, pubPath, ref, "slsaprovenance1"); err != nil {
				t.Fatalf("cosign verify-attestation: %v", err)
			}
			k, err := signature.LoadPublicKey(pubPath)
			if err != nil {
				t.Fatal(err)
			}
			other, err := signature.LoadPublicKey(otherPub)
			if err != nil {
				t.Fatal(err)
			}
			atts, rejected, err := (&signature.Verifier{Keys: []*signature.PublicKey{other, k}}).VerifyAttestations(ctx, repo, d, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(atts) != 1 || len(rejected) != 0 {
				t.Fatalf("verified %+v, rejected %v; want one attestation", atts, rejected)
			}
			a := atts[0]
			if a.Kind != tc.wantKind || a.KeySource != pubPath || a.Statement.PredicateType != "https://slsa.dev/provenance/v1" {
				t.Errorf("attestation %+v, want kind %s, key %s, SLSA v1", a.Signature, tc.wantKind, pubPath)
			}
			// The signature verifier does not take an attestation for a
			// signature.
			if _, err := (&signature.Verifier{Keys: []*signature.PublicKey{k}}).VerifyImage(ctx, repo, d); err == nil {
				t.Errorf("an attestation verified as a signature")
			}
			atts, rejected, err = (&signature.Verifier{Keys: []*signature.PublicKey{other}}).VerifyAttestations(ctx, repo, d, nil, false)
			if err != nil || len(atts) != 0 || len(rejected) != 1 {
				t.Fatalf("another key: verified %+v, rejected %v, err %v", atts, rejected, err)
			}
			t.Logf("another key: %v", rejected[0])
		})
	}
}
