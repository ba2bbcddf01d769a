package signature

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// fuzzSigners returns cosign signers of every key type cosign makes, in
// fixture.CosignSigners' order (the third is RSA).
func fuzzSigners(tb testing.TB) []*fixture.Cosign {
	tb.Helper()
	_, signers, err := fixture.CosignSigners()
	if err != nil {
		tb.Fatal(err)
	}
	return signers
}

// FuzzParsePublicKey checks that a key ParsePublicKey accepts is one of
// cosign's kinds, survives a round trip through PKIX PEM, and refuses a
// signature of garbage as a mismatch, never as another error.
func FuzzParsePublicKey(f *testing.F) {
	for _, s := range fuzzSigners(f) {
		p, err := s.PublicKeyPEM()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p)
	}
	rsaKey := fuzzSigners(f)[2].Key.(*rsa.PrivateKey)
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey)}))
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte{1, 2, 3}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ParsePublicKey(data)
		if err != nil {
			return
		}
		if a := k.Algorithm(); a == "" || strings.HasPrefix(a, "*") {
			t.Fatalf("accepted a key of unknown algorithm %q", a)
		}
		der, err := x509.MarshalPKIXPublicKey(k.key)
		if err != nil {
			t.Fatalf("an accepted key does not marshal: %v", err)
		}
		k2, err := ParsePublicKey(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
		if err != nil {
			t.Fatalf("an accepted key, marshalled, does not parse: %v", err)
		}
		if eq, ok := k.key.(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(k2.key) {
			t.Fatalf("round trip changed the key: %T", k.key)
		}
		if err := k.Verify([]byte("message"), []byte("not a signature")); !IsMismatch(err) {
			t.Fatalf("Verify of garbage = %v, want a mismatch", err)
		}
	})
}

// FuzzVerifyBlob checks DecodeBlobSignature, which reads base64 or raw
// bytes, and Verify over what it decodes: what it returns is the input or
// the input's base64 decoding; a signature file cosign writes for the
// message verifies, with or without a final newline; and any failure is a
// mismatch.
func FuzzVerifyBlob(f *testing.F) {
	signers := fuzzSigners(f)
	keys := make([]*PublicKey, len(signers))
	for i, s := range signers {
		p, err := s.PublicKeyPEM()
		if err != nil {
			f.Fatal(err)
		}
		if keys[i], err = ParsePublicKey(p); err != nil {
			f.Fatal(err)
		}
	}
	for i, s := range signers {
		msg := []byte(fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: Lock\ninputs: %d\n", i))
		sig, err := s.SignBlob(msg)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(msg, sig, uint8(i), false)
		f.Add(msg, []byte("\n"), uint8(i), true)
	}
	f.Fuzz(func(t *testing.T, msg, sigFile []byte, key uint8, sign bool) {
		k := keys[int(key)%len(keys)]
		// A real signature followed by nothing but line ends must verify.
		genuine := sign && strings.Trim(string(sigFile), "\r\n") == ""
		if sign {
			// Replace the signature file by a real one, as cosign writes
			// it, so the verifying path is fuzzed too.
			s, err := signers[int(key)%len(keys)].SignBlob(msg)
			if err != nil {
				t.Fatal(err)
			}
			sigFile = append(s, sigFile...)
		}
		raw := DecodeBlobSignature(sigFile)
		stripped := strings.NewReplacer("\r", "", "\n", "").Replace(string(sigFile))
		// Like cosign's, the decoding is not strict: unused bits of the
		// last quantum ("001=") may be set, so only the rest re-encodes
		// the same.
		if enc := base64.StdEncoding.EncodeToString(raw); !bytes.Equal(raw, sigFile) &&
			(len(enc) != len(stripped) || enc[:max(len(enc)-4, 0)] != stripped[:max(len(stripped)-4, 0)]) {
			t.Fatalf("DecodeBlobSignature(%q) = %x: neither the input nor its base64 decoding", sigFile, raw)
		}
		err := k.Verify(msg, raw)
		if err != nil && !IsMismatch(err) {
			t.Fatalf("Verify = %v, want nil or a mismatch", err)
		}
		if genuine && err != nil {
			t.Fatalf("a signature made by the key does not verify: %v", err)
		}
	})
}

// FuzzVerifyImagePayload signs fuzzed payloads as `cosign sign` stores
// them, in a real registry, and checks that VerifyImage accepts exactly
// the payloads whose critical.image.docker-manifest-digest names the
// image, and refuses the others as mismatches. "DIGEST" in a payload is
// replaced by the image's digest, so accepted payloads are reached.
func FuzzVerifyImagePayload(f *testing.F) {
	ctx := context.Background()
	reg := registrytest.New(f)
	c := registrytest.Client(f)
	repo := registrytest.Repository(f, c, reg.Host+"/acme/app")
	signer, err := fixture.NewCosignECDSA()
	if err != nil {
		f.Fatal(err)
	}
	p, err := signer.PublicKeyPEM()
	if err != nil {
		f.Fatal(err)
	}
	key, err := ParsePublicKey(p)
	if err != nil {
		f.Fatal(err)
	}
	real, err := fixture.CosignPayload(reg.Host+"/acme/app", digest.FromString("x"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(bytes.ReplaceAll(real, []byte(digest.FromString("x").String()), []byte("DIGEST")))
	f.Add(real)
	f.Add([]byte(`{"critical":{"image":{"docker-manifest-digest":"DIGEST"}},"optional":{"a":[1,{"b":null}]}}`))
	f.Add([]byte(`{"Critical":{"Image":{"Docker-Manifest-Digest":"DIGEST"}}}`))
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, payload []byte) {
		if len(payload) > maxPayload {
			return
		}
		d := digest.FromString(fmt.Sprintf("image %d", n.Add(1)))
		payload = bytes.ReplaceAll(payload, []byte("DIGEST"), []byte(d.String()))
		if _, err := signer.SignImagePayload(ctx, repo, d, payload); err != nil {
			t.Fatal(err)
		}
		v, err := VerifyImage(ctx, repo, d, key)
		var ss SimpleSigning
		want := json.Unmarshal(payload, &ss) == nil && ss.Critical.Image.DockerManifestDigest == d.String()
		switch {
		case want && err != nil:
			t.Fatalf("a signed payload naming the image does not verify: %v\n%s", err, payload)
		case !want && err == nil:
			t.Fatalf("a signed payload not naming the image verifies: %+v\n%s", v, payload)
		case err != nil && !IsMismatch(err):
			t.Fatalf("VerifyImage = %v, want a mismatch", err)
		case err == nil && v.Payload.Critical.Image.DockerManifestDigest != d.String():
			t.Fatalf("verified payload names %s, not %s", v.Payload.Critical.Image.DockerManifestDigest, d)
		}
	})
}
