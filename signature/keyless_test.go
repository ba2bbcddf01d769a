package signature_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/forked/sigstore-go/pkg/root"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/internal/cosigntest"
	"github.com/ferryhq/ferry/signature"
)

const (
	testIssuer  = "https://token.actions.githubusercontent.com"
	testSubject = "builder@acme.example"
)

// loadRoot writes ks's trusted root to a file and loads it as ferry's
// --trusted-root does.
func loadRoot(t *testing.T, ks *cosigntest.Keyless) *root.TrustedRoot {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := ks.WriteTrustedRoot(path); err != nil {
		t.Fatal(err)
	}
	tr, err := signature.LoadTrustedRoot(path)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func newKeyless(t *testing.T) *cosigntest.Keyless {
	t.Helper()
	ks, err := cosigntest.NewKeyless()
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// tamperBundle flips a bit of the DSSE signature in a bundle.
func tamperBundle(t *testing.T, bundleJSON []byte) []byte {
	t.Helper()
	var b map[string]any
	if err := json.Unmarshal(bundleJSON, &b); err != nil {
		t.Fatal(err)
	}
	sig := b["dsseEnvelope"].(map[string]any)["signatures"].([]any)[0].(map[string]any)
	raw, err := base64.StdEncoding.DecodeString(sig["sig"].(string))
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 1
	sig["sig"] = base64.StdEncoding.EncodeToString(raw)
	out, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestVerifyImageKeyless(t *testing.T) {
	ctx := context.Background()
	ks, otherSigstore := newKeyless(t), newKeyless(t)
	trusted, otherRoot := loadRoot(t, ks), loadRoot(t, otherSigstore)
	exact := signature.Identity{Issuer: testIssuer, Subject: testSubject}
	for _, tc := range []struct {
		name       string
		signer     *cosigntest.Keyless
		predicate  string
		tamper     bool
		identities []signature.Identity
		root       *root.TrustedRoot
		wantErr    error
		detail     string
	}{
		{name: "exact identity", signer: ks, identities: []signature.Identity{exact}, root: trusted},
		{name: "subject regexp", signer: ks, identities: []signature.Identity{{Issuer: testIssuer, SubjectRegexp: `^builder@acme\.`}}, root: trusted},
		{name: "second identity matches", signer: ks, identities: []signature.Identity{{Issuer: testIssuer, Subject: "someone@else"}, exact}, root: trusted},
		{name: "subject mismatch", signer: ks, identities: []signature.Identity{{Issuer: testIssuer, Subject: "someone@else"}}, root: trusted, wantErr: signature.ErrInvalid, detail: "someone@else"},
		{name: "regexp mismatch", signer: ks, identities: []signature.Identity{{Issuer: testIssuer, SubjectRegexp: `^release@`}}, root: trusted, wantErr: signature.ErrInvalid},
		{name: "issuer mismatch", signer: ks, identities: []signature.Identity{{Issuer: "https://accounts.google.com", Subject: testSubject}}, root: trusted, wantErr: signature.ErrInvalid},
		{name: "wrong trusted root", signer: ks, identities: []signature.Identity{exact}, root: otherRoot, wantErr: signature.ErrInvalid},
		{name: "signed by another sigstore", signer: otherSigstore, identities: []signature.Identity{exact}, root: trusted, wantErr: signature.ErrInvalid},
		{name: "tampered signature", signer: ks, tamper: true, identities: []signature.Identity{exact}, root: trusted, wantErr: signature.ErrInvalid},
		{name: "an attestation is not a signature", signer: ks, predicate: "https://slsa.dev/provenance/v1", identities: []signature.Identity{exact}, root: trusted, wantErr: signature.ErrNoSignature},
	} {
		for _, layout := range []signature.Kind{signature.KindReferrer, signature.KindSig} {
			if layout == signature.KindSig && tc.predicate != "" {
				continue // the classic layout has no predicate
			}
			t.Run(string(layout)+"/"+tc.name, func(t *testing.T) {
				repo, ref, d := imageRepo(t, "acme/app")
				var sigManifest ocispec.Descriptor
				if layout == signature.KindSig {
					var err error
					sigManifest, err = tc.signer.SignImageClassic(ctx, repo, ref, d, testSubject, testIssuer)
					if err != nil {
						t.Fatal(err)
					}
					if tc.tamper {
						tamperClassicKeyless(t, repo, d)
					}
				} else {
					pred := tc.predicate
					if pred == "" {
						pred = cosigntest.SignPredicateType
					}
					b, err := tc.signer.SignImage(testSubject, testIssuer, d, pred)
					if err != nil {
						t.Fatal(err)
					}
					if tc.tamper {
						b = tamperBundle(t, b)
					}
					subject := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: d}
					sigManifest, err = cosigntest.PushBundleReferrer(ctx, repo, subject, b, pred)
					if err != nil {
						t.Fatal(err)
					}
				}
				v := &signature.Verifier{Identities: tc.identities, TrustedRoot: tc.root}
				got, err := v.VerifyImage(ctx, repo, d)
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) || !signature.IsMismatch(err) {
						t.Fatalf("VerifyImage = %v, want %v", err, tc.wantErr)
					}
					t.Logf("rejected: %v", err)
					if tc.detail != "" && !strings.Contains(err.Error(), tc.detail) {
						t.Errorf("error %q does not say %q", err, tc.detail)
					}
					return
				}
				if err != nil {
					t.Fatalf("VerifyImage: %v", err)
				}
				if len(got.Signatures) != 1 {
					t.Fatalf("verified %d signatures, want 1: %+v", len(got.Signatures), got.Signatures)
				}
				s := got.Signatures[0]
				if s.Kind != layout || s.Manifest.Digest != sigManifest.Digest {
					t.Errorf("signature = %+v, want %s %s", s, layout, sigManifest.Digest)
				}
				if s.Subject != testSubject || s.Issuer != testIssuer || s.Identity == nil || s.KeyFingerprint != "" {
					t.Errorf("signature identity = %+v", s)
				}
			})
		}
	}
}

// tamperClassicKeyless changes the signature annotation of every layer of
// d's .sig manifest.
func tamperClassicKeyless(t *testing.T, repo *remote.Repository, d digest.Digest) {
	t.Helper()
	var m ocispec.Manifest
	desc := fetchJSON(t, repo, signature.Tag(d), &m)
	for i, l := range m.Layers {
		m.Layers[i].Annotations[signature.AnnotationSignature] = flipBase64(t, l.Annotations[signature.AnnotationSignature])
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oras.TagBytes(context.Background(), repo, desc.MediaType, raw, signature.Tag(d)); err != nil {
		t.Fatal(err)
	}
}

// TestVerifierKeylessBadInput: identities without a trusted root, or
// without a subject, are the caller's mistake, not a mismatch.
func TestVerifierKeylessBadInput(t *testing.T) {
	repo, _, d := imageRepo(t, "acme/app")
	tr := loadRoot(t, newKeyless(t))
	for _, tc := range []struct {
		name string
		v    signature.Verifier
	}{
		{"nothing to verify with", signature.Verifier{}},
		{"no trusted root", signature.Verifier{Identities: []signature.Identity{{Issuer: testIssuer, Subject: testSubject}}}},
		{"nil trusted root", signature.Verifier{Identities: []signature.Identity{{Issuer: testIssuer, Subject: testSubject}}, TrustedRoot: (*root.TrustedRoot)(nil)}},
		{"no subject", signature.Verifier{Identities: []signature.Identity{{Issuer: testIssuer}}, TrustedRoot: tr}},
		{"no issuer", signature.Verifier{Identities: []signature.Identity{{Subject: testSubject}}, TrustedRoot: tr}},
		{"bad regexp", signature.Verifier{Identities: []signature.Identity{{Issuer: testIssuer, SubjectRegexp: "("}}, TrustedRoot: tr}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.v.VerifyImage(context.Background(), repo, d)
			if err == nil || signature.IsMismatch(err) {
				t.Fatalf("VerifyImage = %v, want a bad-input error", err)
			}
		})
	}
}

func TestLoadTrustedRoot(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, path string }{
		{"missing", filepath.Join(dir, "nope.json")},
		{"not a trusted root", filepath.Join("testdata", "not_trusted_root.json")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := signature.LoadTrustedRoot(tc.path); err == nil {
				t.Fatal("LoadTrustedRoot succeeded")
			}
		})
	}
}
