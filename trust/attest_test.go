package trust_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"go.yaml.in/yaml/v3"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/cosigntest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/trust"
)

const (
	trustedBuilder = "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/generator_container_slsa3.yml"
	otherBuilder   = "https://github.com/evil/builder/.github/workflows/build.yml"
)

// slsaV1 is a SLSA provenance v1 predicate as slsa-github-generator's
// container workflow writes one (trimmed), built by builder.
func slsaV1(builder string) string {
	return `{
  "buildDefinition": {
    "buildType": "https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1",
    "externalParameters": {"workflow": {"ref": "refs/heads/main", "repository": "https://github.com/acme/app", "path": ".github/workflows/release.yml"}},
    "resolvedDependencies": [{"uri": "git+https://github.com/acme/app@refs/heads/main", "digest": {"gitCommit": "4f1d6ee7b6c3f5b8a39b0a2c1b4f7d61a4c2e9f0"}}]
  },
  "runDetails": {"builder": {"id": "` + builder + `@refs/tags/v2.1.0"}}
}`
}

// slsaV02 is a SLSA provenance v0.2 predicate (trimmed).
const slsaV02 = `{
  "builder": {"id": "` + trustedBuilder + `@refs/tags/v1.10.0"},
  "buildType": "https://github.com/slsa-framework/slsa-github-generator/container@v1",
  "invocation": {"configSource": {"uri": "git+https://github.com/acme/app@refs/heads/main", "digest": {"sha1": "4f1d6ee7b6c3f5b8a39b0a2c1b4f7d61a4c2e9f0"}, "entryPoint": ".github/workflows/release.yml"}}
}`

const spdxDoc = `{"spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0", "SPDXID": "SPDXRef-DOCUMENT", "name": "app", "documentNamespace": "https://acme.example/spdx/app", "creationInfo": {"created": "2026-01-01T00:00:00Z", "creators": ["Tool: syft"]}, "packages": []}`

// TestAttestations: a rule requiring attestations by predicate type is
// checked at the source (Check: lock, mirror) and in a mirror
// (CheckMirror: verify, install) against statements the real cosign v2
// and v3 `attest` made on a loopback registry, in the layout each writes by
// default (v2: the .att tag; v3: a Sigstore bundle referrer, listed
// through the referrers tag fallback) and the other one; keyless
// attestations are Sigstore bundles from an offline virtual Sigstore.
// cosign verify-attestation is the oracle of the rows that pass.
func TestAttestations(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	provV1, provV1Other, provV02, sbom := write("v1.json", slsaV1(trustedBuilder)), write("v1-other.json", slsaV1(otherBuilder)), write("v02.json", slsaV02), write("spdx.json", spdxDoc)

	vs, err := cosigntest.NewKeyless()
	if err != nil {
		t.Fatal(err)
	}
	if err := vs.WriteTrustedRoot(filepath.Join(dir, "root.json")); err != nil {
		t.Fatal(err)
	}
	const issuer = "https://token.actions.githubusercontent.com"

	cosigns := []struct {
		name   string
		cosign *cosigntest.Cosign
		extra  []string
	}{
		{"v2 .att", cosigntest.V2(t), nil},
		{"v3 bundle", cosigntest.V3(t), nil},
		{"v3 .att", cosigntest.V3(t), []string{"--new-bundle-format=false"}},
		{"v2 bundle", cosigntest.V2(t), []string{"--new-bundle-format"}},
	}
	for _, cv := range cosigns {
		cv := cv
		t.Run(cv.name, func(t *testing.T) {
			key, pub := cv.cosign.GenerateKeyPair(t)
			otherKey, _ := cv.cosign.GenerateKeyPair(t)
			prefix := reg.Host + "/" + strings.ReplaceAll(strings.ReplaceAll(cv.name, " ", ""), ".", "") + "/"
			push := func(name string) (*lock.Package, *remote.Repository, string) {
				src := prefix + name
				repo := registrytest.Repository(t, c, src)
				desc, err := fixture.PushImage(ctx, repo, src, 64)
				if err != nil {
					t.Fatal(err)
				}
				return &lock.Package{Source: src, Digest: desc.Digest.String(), MediaType: desc.MediaType, Size: desc.Size}, repo, src + "@" + desc.Digest.String()
			}
			attest := func(k, ref, pred, typ string) {
				cv.cosign.AttestImage(t, k, ref, pred, typ, cv.extra...)
			}
			pol, err := trust.New(&trust.Config{TrustedRoot: "root.json", Rules: []trust.RuleConfig{
				{Match: prefix + "slsa/", Keys: []string{pub}, Attestations: []trust.AttestationConfig{{
					Type: "slsaprovenance1", BuilderID: "^" + regexp.QuoteMeta(trustedBuilder) + "@", SourceRepository: "github.com/acme/app",
				}}},
				{Match: prefix + "slsa02/", Keys: []string{pub}, Attestations: []trust.AttestationConfig{{
					PredicateType: "https://slsa.dev/provenance/v0.2", BuilderID: "^https://github.com/slsa-framework/", SourceRepository: "https://github.com/acme/app.git",
				}}},
				{Match: prefix + "keyless-att/", Keys: []string{pub}, Attestations: []trust.AttestationConfig{{
					Type: trust.SLSAProvenanceV1, Keyless: []trust.Identity{{Issuer: issuer, SubjectRegexp: "^https://github.com/acme/"}},
				}}},
				{Match: prefix + "keyless/", Keys: []string{pub}, Attestations: []trust.AttestationConfig{{
					Type: trust.SLSAProvenanceV1, Keyless: []trust.Identity{{Issuer: issuer, SubjectRegexp: "^https://github.com/acme/"}},
				}}},
			}}, trust.Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}

			type row struct {
				name    string
				pkg     *lock.Package
				fail    []string // substrings of the failure; none: passes
				oracle  string   // the cosign --type verify-attestation accepts; "" for none
				records int      // attestation records verified by the rule
			}
			var rows []row

			p, _, ref := push("slsa/good")
			attest(key, ref, provV1, "slsaprovenance1")
			attest(key, ref, sbom, "spdxjson") // another predicate type, not required
			rows = append(rows, row{name: "good", pkg: p, oracle: "slsaprovenance1", records: 1})

			p, _, ref = push("slsa02/good")
			attest(key, ref, provV02, "slsaprovenance02")
			rows = append(rows, row{name: "good SLSA v0.2", pkg: p, oracle: "slsaprovenance02", records: 1})

			p, _, ref = push("slsa/wrong-key")
			attest(otherKey, ref, provV1, "slsaprovenance1")
			rows = append(rows, row{name: "wrong key", pkg: p, fail: []string{trust.SLSAProvenanceV1, "none verifies", "cosign.pub"}})

			p, _, ref = push("slsa/wrong-type")
			attest(key, ref, sbom, "spdxjson")
			rows = append(rows, row{name: "wrong predicate type", pkg: p, fail: []string{trust.SLSAProvenanceV1, "missing", "https://spdx.dev/Document"}})

			p, _, _ = push("slsa/missing")
			rows = append(rows, row{name: "missing", pkg: p, fail: []string{trust.SLSAProvenanceV1, "missing", "has no attestation"}})

			p, _, ref = push("slsa/builder")
			attest(key, ref, provV1Other, "slsaprovenance1")
			rows = append(rows, row{name: "SLSA builder mismatch", pkg: p, fail: []string{trust.SLSAProvenanceV1, "builder id " + otherBuilder + " at refs/tags/v2.1.0 does not match ^" + regexp.QuoteMeta(trustedBuilder)}})

			// The genuine attestation of one image, attached to another
			// in the same repository.
			p, repo, _ := push("slsa/moved")
			donor, err := fixture.PushImage(ctx, repo, "donor", 64)
			if err != nil {
				t.Fatal(err)
			}
			attest(key, p.Source+"@"+donor.Digest.String(), provV1, "slsaprovenance1")
			moveAttestations(t, ctx, repo, donor, digest.Digest(p.Digest))
			rows = append(rows, row{name: "subject digest mismatch", pkg: p, fail: []string{trust.SLSAProvenanceV1, "subject digest mismatch", donor.Digest.Encoded()}})

			// Keyless, as bundles (cosign v3 writes keyless attestations
			// so): the trusted identity, and another.
			for _, k := range []struct {
				name, subject string
				fail          []string
			}{
				{"keyless", "https://github.com/acme/app/.github/workflows/release.yml@refs/heads/main", nil},
				{"keyless, another identity", "https://github.com/evil/app/.github/workflows/release.yml@refs/heads/main", []string{trust.SLSAProvenanceV1, "none verifies", "keyless"}},
			} {
				p, repo, _ := push("keyless/" + strings.ReplaceAll(strings.ReplaceAll(k.name, " ", ""), ",", "-"))
				b, err := vs.SignImage(k.subject, issuer, digest.Digest(p.Digest), trust.SLSAProvenanceV1)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := cosigntest.PushBundleReferrer(ctx, repo, p.Descriptor(), b, trust.SLSAProvenanceV1); err != nil {
					t.Fatal(err)
				}
				records := 1
				if k.fail != nil {
					records = 0
				}
				rows = append(rows, row{name: k.name, pkg: p, fail: k.fail, records: records})

				// The same in cosign v2's classic keyless layout: the
				// envelope in a .att layer, the certificate and Rekor
				// entry in its annotations.
				p, repo, _ = push("keyless-att/" + strings.ReplaceAll(strings.ReplaceAll(k.name, " ", ""), ",", "-"))
				if _, err := vs.AttestImageClassic(ctx, repo, digest.Digest(p.Digest), k.subject, issuer, trust.SLSAProvenanceV1, nil); err != nil {
					t.Fatal(err)
				}
				rows = append(rows, row{name: k.name + " (.att)", pkg: p, fail: k.fail, records: records})
			}

			for _, tc := range rows {
				t.Run(tc.name, func(t *testing.T) {
					if tc.oracle != "" {
						if err := cv.cosign.VerifyAttestation(t, pub, tc.pkg.Source+"@"+tc.pkg.Digest, tc.oracle); err != nil {
							t.Fatalf("cosign verify-attestation rejects what the row expects to pass: %v", err)
						}
					}
					pkg := *tc.pkg
					recs, err := pol.Check(ctx, []*lock.Package{&pkg}, c, 1)
					repo := registrytest.Repository(t, c, pkg.Source)
					findings, _, merr := trust.CheckMirror(ctx, repo, pkg.Source, &pkg, pol)
					if merr != nil {
						t.Fatal(merr)
					}
					if tc.fail == nil {
						if err != nil {
							t.Fatalf("Check: %v", err)
						}
						if len(findings) > 0 {
							t.Fatalf("CheckMirror: %+v", findings)
						}
						n := 0
						for _, r := range recs[trust.Key(pkg.Source, pkg.Digest)] {
							if r.Rule != "" {
								n++
							}
						}
						if n != tc.records {
							t.Errorf("records %+v: %d verified by the rule, want %d", recs[trust.Key(pkg.Source, pkg.Digest)], n, tc.records)
						}
						return
					}
					if exitcode.Of(err) != exitcode.Mismatch {
						t.Fatalf("Check: err = %v, want exit 3", err)
					}
					for _, want := range append([]string{pkg.Source + "@" + pkg.Digest}, tc.fail...) {
						if !strings.Contains(err.Error(), want) {
							t.Errorf("Check: error does not name %q:\n%v", want, err)
						}
					}
					if len(findings) != 1 || !strings.Contains(findings[0].Detail, tc.fail[0]) || !strings.Contains(findings[0].Detail, tc.fail[1]) {
						t.Errorf("CheckMirror: %+v, want one finding naming %q", findings, tc.fail[:2])
					}
					t.Logf("%v", err)
				})
			}
		})
	}
}

// moveAttestations attaches the attestations of donor in repo to target
// instead, bytes unchanged: the classic .att manifest tagged for target,
// and each Sigstore bundle referrer re-pushed with target as its subject.
func moveAttestations(t *testing.T, ctx context.Context, repo *remote.Repository, donor ocispec.Descriptor, target digest.Digest) {
	t.Helper()
	desc, rc, err := repo.FetchReference(ctx, signature.AttestationTag(donor.Digest))
	if err == nil {
		raw, _ := io.ReadAll(rc)
		rc.Close()
		if err := repo.PushReference(ctx, desc, bytes.NewReader(raw), signature.AttestationTag(target)); err != nil {
			t.Fatal(err)
		}
		return
	}
	var refs []ocispec.Descriptor
	if err := repo.Referrers(ctx, donor, "", func(r []ocispec.Descriptor) error { refs = append(refs, r...); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(refs) == 0 {
		t.Fatal("the donor has no attestation")
	}
	for _, r := range refs {
		_, rc, err := repo.FetchReference(ctx, r.Digest.String())
		if err != nil {
			t.Fatal(err)
		}
		var m ocispec.Manifest
		err = json.NewDecoder(rc).Decode(&m)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		m.Subject = &ocispec.Descriptor{MediaType: donor.MediaType, Digest: target, Size: donor.Size}
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		d := ocispec.Descriptor{MediaType: m.MediaType, Digest: digest.FromBytes(raw), Size: int64(len(raw))}
		if d.MediaType == "" {
			d.MediaType = ocispec.MediaTypeImageManifest
		}
		if err := repo.Push(ctx, d, bytes.NewReader(raw)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAttestationConfig: the attestations of a rule read from ferry.yaml,
// and the bad ones are bad input.
func TestAttestationConfig(t *testing.T) {
	dir := t.TempDir()
	writeKey(t, dir, "a.pub")
	tests := []struct {
		name, yaml string
		want       string // predicate type URI of the first attestation
		err        string
	}{
		{name: "predicateType (PRODUCT.md)", yaml: "- match: a/\n  keys: [a.pub]\n  attestations: [{predicateType: 'https://slsa.dev/provenance/v1', builderId: '^https://github.com/acme/.*'}]\n", want: trust.SLSAProvenanceV1},
		{name: "cosign type name", yaml: "- match: a/\n  keys: [a.pub]\n  attestations: [{type: slsaprovenance1}]\n", want: trust.SLSAProvenanceV1},
		{name: "URI", yaml: "- match: a/\n  keys: [a.pub]\n  attestations: [{type: 'https://example.com/custom/v1'}]\n", want: "https://example.com/custom/v1"},
		{name: "spdx", yaml: "- match: a/\n  keys: [a.pub]\n  attestations: [{type: spdx}]\n", want: "https://spdx.dev/Document"},
		{name: "cyclonedx", yaml: "- match: a/\n  keys: [a.pub]\n  attestations: [{type: cyclonedx}]\n", want: "https://cyclonedx.org/bom"},
		{name: "SLSA v0.2 checks", yaml: "- match: a/\n  keys: [a.pub]\n  attestations:\n    - type: slsaprovenance02\n      builderId: b\n      sourceRepository: github.com/a/b\n", want: trust.SLSAProvenanceV02},
		{name: "own key", yaml: "- match: a/\n  attestations: [{type: spdx, keys: [a.pub]}]\n", want: "https://spdx.dev/Document"},
		{name: "no type", yaml: "- match: a/\n  keys: [a.pub]\n  attestations: [{keys: [a.pub]}]\n", err: "predicateType is required"},
		{name: "both type and predicateType", yaml: "- match: a/\n  keys: [a.pub]\n  attestations: [{type: spdx, predicateType: 'https://spdx.dev/Document'}]\n", err: "not both"},
		{name: "unknown name", yaml: "- match: a/\n  keys: [a.pub]\n  attestations: [{type: slsa}]\n", err: `type "slsa" is neither`},
		{name: "builderId on an SBOM", yaml: "- match: a/\n  keys: [a.pub]\n  attestations: [{type: spdx, builderId: b}]\n", err: "apply to SLSA provenance"},
		{name: "bad builderId", yaml: "- match: a/\n  keys: [a.pub]\n  attestations: [{type: slsaprovenance1, builderId: '('}]\n", err: "builderId"},
		{name: "no signer", yaml: "- match: a/\n  attestations: [{type: spdx}]\n", err: "give keys or keyless identities, here or on the rule"},
		{name: "keyless without a trusted root", yaml: "- match: a/\n  keys: [a.pub]\n  attestations: [{type: spdx, keyless: [{issuer: https://i, subject: s}]}]\n", err: "trusted root"},
		{name: "unknown field", yaml: "- match: a/\n  keys: [a.pub]\n  attestations: [{type: spdx, conditions: {}}]\n", err: "field conditions not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cfg trust.Config
			err := yaml.Unmarshal([]byte(tc.yaml), &cfg)
			var p *trust.Policy
			if err == nil {
				p, err = trust.New(&cfg, trust.Options{Dir: dir})
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if p != nil || (exitcode.Of(err) != exitcode.Usage && !strings.Contains(tc.err, "not found")) {
					t.Errorf("err = %v (exit %d), want exit 2", err, exitcode.Of(err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Rules[0].Attestations[0].PredicateType; got != tc.want {
				t.Errorf("predicate type %s, want %s", got, tc.want)
			}
		})
	}
}
