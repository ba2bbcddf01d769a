package cosigntest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ferryhq/ferry/internal/cosigntest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// backends are the cosigns whose verdicts are compared: the in-process
// cosign always, and with FERRY_INTEROP=1 the real CLIs too.
func backends(t *testing.T, version func(testing.TB) *cosigntest.Cosign) []*cosigntest.Cosign {
	t.Helper()
	if !cosigntest.Interop() {
		return []*cosigntest.Cosign{version(t)}
	}
	inproc := version(t)
	v := inproc.Version
	return []*cosigntest.Cosign{{Version: v}, inproc}
}

// TestVerdicts: every layout the in-process cosign writes is accepted by
// its verify with the signer's key and refused with another key, for a
// subject that was not signed, and (attestations) for another predicate
// type; a blob signature is refused once the blob changes. With
// FERRY_INTEROP=1 the real CLI gives the same verdict on each, on what
// either backend wrote.
func TestVerdicts(t *testing.T) {
	ctx := context.Background()
	type layout struct {
		name   string
		cosign func(testing.TB) *cosigntest.Cosign
		extra  []string
		attest bool
	}
	layouts := []layout{
		{name: "v2 classic .sig", cosign: cosigntest.V2},
		{name: "v2 bundle", cosign: cosigntest.V2, extra: []string{"--new-bundle-format"}},
		{name: "v3 bundle", cosign: cosigntest.V3},
		{name: "v3 classic .sig", cosign: cosigntest.V3, extra: []string{"--new-bundle-format=false"}},
		{name: "v2 classic .att", cosign: cosigntest.V2, attest: true},
		{name: "v3 bundle attestation", cosign: cosigntest.V3, attest: true},
		{name: "v3 classic .att", cosign: cosigntest.V3, extra: []string{"--new-bundle-format=false"}, attest: true},
	}
	pred := filepath.Join(t.TempDir(), "provenance.json")
	if err := os.WriteFile(pred, []byte(`{"buildDefinition": {"buildType": "https://example.com/build/v1"}, "runDetails": {"builder": {"id": "https://example.com/builder"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range layouts {
		for _, writer := range backends(t, l.cosign) {
			name := l.name + "/written by " + kind(writer)
			t.Run(name, func(t *testing.T) {
				reg := registrytest.New(t)
				repo := registrytest.Repository(t, registrytest.Client(t), reg.Host+"/acme/app")
				signed, err := fixture.PushImage(ctx, repo, "acme/app")
				if err != nil {
					t.Fatal(err)
				}
				unsigned, err := fixture.PushImage(ctx, repo, "acme/other")
				if err != nil {
					t.Fatal(err)
				}
				key, pub := writer.GenerateKeyPair(t)
				_, otherPub := writer.GenerateKeyPair(t)
				ref := reg.Host + "/acme/app@" + signed.Digest.String()
				if l.attest {
					writer.AttestImage(t, key, ref, pred, "slsaprovenance1", l.extra...)
				} else {
					writer.SignImage(t, key, ref, l.extra...)
				}
				for _, verifier := range backends(t, l.cosign) {
					verify := func(pub, ref, typ string) error {
						if l.attest {
							return verifier.VerifyAttestation(t, pub, ref, typ)
						}
						return verifier.VerifyImage(t, pub, ref)
					}
					for _, c := range []struct {
						what, pub, ref, typ string
						ok                  bool
					}{
						{"the signer's key", pub, ref, "slsaprovenance1", true},
						{"another key", otherPub, ref, "slsaprovenance1", false},
						{"an unsigned image", pub, reg.Host + "/acme/app@" + unsigned.Digest.String(), "slsaprovenance1", false},
					} {
						if err := verify(c.pub, c.ref, c.typ); (err == nil) != c.ok {
							t.Errorf("verify by %s with %s: %v, want ok %v", kind(verifier), c.what, err, c.ok)
						}
					}
					if l.attest {
						if err := verify(pub, ref, "spdxjson"); err == nil {
							t.Errorf("verify-attestation by %s --type spdxjson accepted a SLSA provenance", kind(verifier))
						}
					}
				}
			})
		}
	}
	for _, version := range []func(testing.TB) *cosigntest.Cosign{cosigntest.V2, cosigntest.V3} {
		for _, writer := range backends(t, version) {
			t.Run("blob "+writer.Version+"/written by "+kind(writer), func(t *testing.T) {
				key, pub := writer.GenerateKeyPair(t)
				_, otherPub := writer.GenerateKeyPair(t)
				dir := t.TempDir()
				blob, sig := filepath.Join(dir, "ferry.lock"), filepath.Join(dir, "ferry.lock.sig")
				if err := os.WriteFile(blob, []byte("packages: []\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				writer.SignBlob(t, key, blob, sig)
				for _, verifier := range backends(t, version) {
					if err := verifier.VerifyBlob(t, pub, sig, blob); err != nil {
						t.Errorf("verify-blob by %s: %v", kind(verifier), err)
					}
					if err := verifier.VerifyBlob(t, otherPub, sig, blob); err == nil {
						t.Errorf("verify-blob by %s accepted another key", kind(verifier))
					}
				}
				if err := os.WriteFile(blob, []byte("packages: [x]\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				for _, verifier := range backends(t, version) {
					if err := verifier.VerifyBlob(t, pub, sig, blob); err == nil {
						t.Errorf("verify-blob by %s accepted a changed blob", kind(verifier))
					}
				}
			})
		}
	}
}

func kind(c *cosigntest.Cosign) string {
	if c.InProcess() {
		return "in-process cosign " + c.Version
	}
	return "cosign " + c.Version + " CLI"
}
