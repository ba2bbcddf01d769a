package dsse_test

import (
	"context"
	"crypto"
	"crypto/dsa" //nolint:staticcheck // x/crypto/ssh's NewPublicKey accepts *dsa.PublicKey
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"testing"

	upstream "github.com/secure-systems-lab/go-securesystemslib/dsse"
	"golang.org/x/crypto/ssh"

	"github.com/ferryhq/ferry/internal/forked/go-securesystemslib/dsse"
)

// sshKeyID is what upstream's SHA256KeyID computes, spelled out with the
// real x/crypto/ssh.
func sshKeyID(pub crypto.PublicKey) (string, error) {
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		return "", err
	}
	return ssh.FingerprintSHA256(k), nil
}

// publicKeys are keys of every kind x/crypto/ssh's NewPublicKey accepts or
// refuses, with odd values for the mpint encodings (small, high-bit,
// negative, zero).
func publicKeys(t *testing.T) map[string]crypto.PublicKey {
	t.Helper()
	keys := map[string]crypto.PublicKey{}
	for _, bits := range []int{1024, 2048, 3072} {
		k, err := rsa.GenerateKey(rand.Reader, bits)
		if err != nil {
			t.Fatal(err)
		}
		keys[fmt.Sprintf("rsa-%d", bits)] = &k.PublicKey
	}
	keys["rsa-e3"] = &rsa.PublicKey{N: big.NewInt(0xff0001), E: 3}
	keys["rsa-e-highbit"] = &rsa.PublicKey{N: big.NewInt(0x7f), E: 0x80}
	keys["rsa-negative"] = &rsa.PublicKey{N: big.NewInt(-0x80), E: -1}
	keys["rsa-negative-2"] = &rsa.PublicKey{N: big.NewInt(-0x81), E: -256}
	keys["rsa-zero"] = &rsa.PublicKey{N: new(big.Int), E: 0}
	for name, c := range map[string]elliptic.Curve{"p224": elliptic.P224(), "p256": elliptic.P256(), "p384": elliptic.P384(), "p521": elliptic.P521()} {
		k, err := ecdsa.GenerateKey(c, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		keys["ecdsa-"+name] = &k.PublicKey
	}
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keys["ed25519"] = edPub
	keys["ed25519-short"] = edPub[:31]
	keys["ed25519-empty"] = ed25519.PublicKey{}
	var params dsa.Parameters
	if err := dsa.GenerateParameters(&params, rand.Reader, dsa.L1024N160); err != nil {
		t.Fatal(err)
	}
	var dk dsa.PrivateKey
	dk.Parameters = params
	if err := dsa.GenerateKey(&dk, rand.Reader); err != nil {
		t.Fatal(err)
	}
	keys["dsa"] = &dk.PublicKey
	keys["nil"] = nil
	keys["string"] = "not a key"
	keys["ed25519-private"] = ed25519.NewKeyFromSeed(make([]byte, 32))
	keys["ecdsa-value"] = *keys["ecdsa-p256"].(*ecdsa.PublicKey)
	sshPub, err := ssh.NewPublicKey(edPub)
	if err != nil {
		t.Fatal(err)
	}
	keys["ssh.PublicKey"] = sshPub
	return keys
}

// TestSHA256KeyIDAsUpstream holds the copy's SHA256KeyID (x/crypto/ssh
// removed) to the real module's and to x/crypto/ssh: the same fingerprint
// or the same error.
func TestSHA256KeyIDAsUpstream(t *testing.T) {
	for name, pub := range publicKeys(t) {
		got, gotErr := dsse.SHA256KeyID(pub)
		want, wantErr := upstream.SHA256KeyID(pub)
		viaSSH, sshErr := sshKeyID(pub)
		if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("%s: copy %q, %v; upstream %q, %v", name, got, gotErr, want, wantErr)
		}
		if want != viaSSH || fmt.Sprint(wantErr) != fmt.Sprint(sshErr) {
			t.Errorf("%s: upstream %q, %v; x/crypto/ssh %q, %v", name, want, wantErr, viaSSH, sshErr)
		}
	}
}

// ecdsaVerifier is a DSSE signer and verifier over an ECDSA key, with a
// fixed key ID (empty: SHA256KeyID of the key is used).
type ecdsaVerifier struct {
	key   *ecdsa.PrivateKey
	keyID string
}

func (v *ecdsaVerifier) Sign(_ context.Context, data []byte) ([]byte, error) {
	h := sha256.Sum256(data)
	return ecdsa.SignASN1(rand.Reader, v.key, h[:])
}

func (v *ecdsaVerifier) Verify(_ context.Context, data, sig []byte) error {
	h := sha256.Sum256(data)
	if !ecdsa.VerifyASN1(&v.key.PublicKey, h[:], sig) {
		return errors.New("bad signature")
	}
	return nil
}

func (v *ecdsaVerifier) KeyID() (string, error) { return v.keyID, nil }

func (v *ecdsaVerifier) Public() crypto.PublicKey { return &v.key.PublicKey }

// TestEnvelopeAsUpstream signs with the real module and verifies with both
// (key IDs that match the SSH fingerprint, that do not, none; thresholds;
// bad base64; no signatures): the accepted keys, payloads and errors must
// be identical, and PAE and the envelope JSON the same bytes.
func TestEnvelopeAsUpstream(t *testing.T) {
	k1, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	fp1, err := upstream.SHA256KeyID(&k1.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	type env struct {
		name string
		e    *upstream.Envelope
	}
	var envs []env
	for _, signer := range []struct {
		name string
		s    []upstream.Signer
	}{
		{"no key ID", []upstream.Signer{&ecdsaVerifier{key: k1}}},
		{"fingerprint key ID", []upstream.Signer{&ecdsaVerifier{key: k1, keyID: fp1}}},
		{"other key ID", []upstream.Signer{&ecdsaVerifier{key: k1, keyID: "SHA256:other"}}},
		{"two signers", []upstream.Signer{&ecdsaVerifier{key: k1}, &ecdsaVerifier{key: k2, keyID: "k2"}}},
	} {
		s, err := upstream.NewEnvelopeSigner(signer.s...)
		if err != nil {
			t.Fatal(err)
		}
		e, err := s.SignPayload(ctx, "application/vnd.in-toto+json", []byte(`{"_type":"https://in-toto.io/Statement/v1"}`))
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env{signer.name, e})
	}
	envs = append(envs,
		env{"nil", nil},
		env{"no signatures", &upstream.Envelope{PayloadType: "x", Payload: "e30="}},
		env{"bad payload", &upstream.Envelope{PayloadType: "x", Payload: "!!", Signatures: []upstream.Signature{{Sig: "AA=="}}}},
		env{"bad signature base64", &upstream.Envelope{PayloadType: "x", Payload: "e30", Signatures: []upstream.Signature{{Sig: "!!"}}}},
		env{"url-safe payload", &upstream.Envelope{PayloadType: "x", Payload: "-_-_", Signatures: []upstream.Signature{{Sig: "AA"}}}},
	)
	verifierSets := map[string][]*ecdsaVerifier{
		"k1":              {{key: k1}},
		"k1 with key ID":  {{key: k1, keyID: "k1"}},
		"k2":              {{key: k2}},
		"k2 as k2":        {{key: k2, keyID: "k2"}},
		"k1 and k2":       {{key: k1}, {key: k2, keyID: "k2"}},
		"k1 twice":        {{key: k1}, {key: k1}},
		"fingerprint k1":  {{key: k1, keyID: fp1}},
		"other key ID k1": {{key: k1, keyID: "SHA256:other"}},
	}
	for _, e := range envs {
		for vname, vs := range verifierSets {
			for _, threshold := range []int{0, 1, 2} {
				var up []upstream.Verifier
				var cp []dsse.Verifier
				for _, v := range vs {
					up = append(up, v)
					cp = append(cp, v)
				}
				upEV, upErr := upstream.NewMultiEnvelopeVerifier(threshold, up...)
				cpEV, cpErr := dsse.NewMultiEnvelopeVerifier(threshold, cp...)
				if fmt.Sprint(upErr) != fmt.Sprint(cpErr) {
					t.Errorf("%s/%s/%d: NewMultiEnvelopeVerifier: copy %v, upstream %v", e.name, vname, threshold, cpErr, upErr)
				}
				if upErr != nil {
					continue
				}
				var cpEnv *dsse.Envelope
				if e.e != nil {
					cpEnv = &dsse.Envelope{PayloadType: e.e.PayloadType, Payload: e.e.Payload}
					for _, s := range e.e.Signatures {
						cpEnv.Signatures = append(cpEnv.Signatures, dsse.Signature{KeyID: s.KeyID, Sig: s.Sig})
					}
				}
				upKeys, upBody, upErr := upEV.VerifyAndDecode(ctx, e.e)
				cpKeys, cpBody, cpErr := cpEV.VerifyAndDecode(ctx, cpEnv)
				got := fmt.Sprintf("%d %q %v", len(cpKeys), cpBody, cpErr)
				want := fmt.Sprintf("%d %q %v", len(upKeys), upBody, upErr)
				for i := range cpKeys {
					got += fmt.Sprintf(" [%s %s %v]", cpKeys[i].KeyID, cpKeys[i].Sig.KeyID, cpKeys[i].Public == upKeys[i].Public)
					want += fmt.Sprintf(" [%s %s %v]", upKeys[i].KeyID, upKeys[i].Sig.KeyID, true)
				}
				if got != want {
					t.Errorf("%s/%s/%d: copy %s\nupstream %s", e.name, vname, threshold, got, want)
				}
			}
		}
		if e.e == nil {
			continue
		}
		upJSON, _ := json.Marshal(e.e)
		var cpEnv dsse.Envelope
		if err := json.Unmarshal(upJSON, &cpEnv); err != nil {
			t.Fatal(err)
		}
		cpJSON, _ := json.Marshal(&cpEnv)
		if string(cpJSON) != string(upJSON) {
			t.Errorf("%s: JSON copy %s, upstream %s", e.name, cpJSON, upJSON)
		}
		b1, err1 := cpEnv.DecodeB64Payload()
		b2, err2 := e.e.DecodeB64Payload()
		if string(b1) != string(b2) || fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Errorf("%s: DecodeB64Payload copy %q %v, upstream %q %v", e.name, b1, err1, b2, err2)
		}
		if got, want := dsse.PAE(e.e.PayloadType, b2), upstream.PAE(e.e.PayloadType, b2); string(got) != string(want) {
			t.Errorf("%s: PAE copy %q, upstream %q", e.name, got, want)
		}
	}
}
