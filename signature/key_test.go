package signature_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/signature"
)

// signers returns one cosign signer per key kind and signature scheme
// ferry accepts, by name.
func signers(t *testing.T) map[string]*fixture.Cosign {
	t.Helper()
	names, list, err := fixture.CosignSigners()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]*fixture.Cosign, len(names))
	for i, n := range names {
		out[n] = list[i]
	}
	return out
}

func mustECDSA(t *testing.T) *fixture.Cosign {
	t.Helper()
	c, err := fixture.NewCosignECDSA()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func publicKey(t *testing.T, c *fixture.Cosign) *signature.PublicKey {
	t.Helper()
	b, err := c.PublicKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	k, err := signature.ParsePublicKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestVerifyEveryKeyKind(t *testing.T) {
	message := []byte("apiVersion: ferry.dev/v1alpha1\nkind: Lock\n")
	other := mustECDSA(t)
	for name, c := range signers(t) {
		t.Run(name, func(t *testing.T) {
			k := publicKey(t, c)
			sig, err := c.Sign(message)
			if err != nil {
				t.Fatal(err)
			}
			if err := k.Verify(message, sig); err != nil {
				t.Errorf("a good signature: %v", err)
			}
			if err := k.Verify(append([]byte("x"), message...), sig); !errors.Is(err, signature.ErrInvalid) {
				t.Errorf("another message: %v, want ErrInvalid", err)
			}
			if err := publicKey(t, other).Verify(message, sig); !errors.Is(err, signature.ErrInvalid) {
				t.Errorf("another key: %v, want ErrInvalid", err)
			}
			if err := k.Verify(message, nil); !errors.Is(err, signature.ErrInvalid) {
				t.Errorf("no signature: %v, want ErrInvalid", err)
			}
		})
	}
}

func TestParsePublicKey(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p256 := mustECDSA(t)
	pkix, err := p256.PublicKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	p256DER, err := x509.MarshalPKIXPublicKey(p256.Key.Public())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		pem     []byte
		algo    string
		wantErr string
	}{
		{name: "PKIX ECDSA, as cosign generate-key-pair writes", pem: pkix, algo: "ECDSA P-256"},
		{name: "PKCS1 RSA", pem: pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey)}), algo: "RSA 2048"},
		{name: "private key", pem: pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED SIGSTORE PRIVATE KEY", Bytes: []byte("{}")}), wantErr: "private key"},
		{name: "certificate", pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p256DER}), wantErr: "unknown public key PEM type"},
		{name: "not PEM", pem: []byte("ssh-ed25519 AAAA"), wantErr: "not a PEM public key"},
		{name: "bad DER", pem: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1, 2, 3}}), wantErr: "parsing public key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := signature.ParsePublicKey(tc.pem)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := k.Algorithm(); got != tc.algo {
				t.Errorf("Algorithm() = %q, want %q", got, tc.algo)
			}
		})
	}
}

func TestLoadPublicKeyBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.pub")
	if err := os.WriteFile(bad, []byte("nonsense"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.pub"), bad} {
		_, err := signature.LoadPublicKey(path)
		if code := exitcode.Of(err); code != exitcode.Usage {
			t.Errorf("LoadPublicKey(%s): exit %d (%v), want %d", path, code, err, exitcode.Usage)
		}
	}
}

func TestDecodeBlobSignature(t *testing.T) {
	c := mustECDSA(t)
	k := publicKey(t, c)
	blob := []byte("lock bytes")
	raw, err := c.Sign(blob)
	if err != nil {
		t.Fatal(err)
	}
	b64, err := c.SignBlob(blob)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"--output-signature (base64, no newline)", b64},
		{"standard output redirected (base64 and a newline)", append(append([]byte{}, b64...), '\n')},
		{"--b64=false (raw bytes)", raw},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := k.Verify(blob, signature.DecodeBlobSignature(tc.file)); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestVerifyFile(t *testing.T) {
	c := mustECDSA(t)
	k := publicKey(t, c)
	dir := t.TempDir()
	path := filepath.Join(dir, "ferry.lock")
	content := []byte("apiVersion: ferry.dev/v1alpha1\nkind: Lock\n")
	write := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(content)

	if _, err := signature.VerifyFile(k, path); !errors.Is(err, signature.ErrNoSignature) || !strings.Contains(err.Error(), "ferry.lock.sig is missing") {
		t.Errorf("unsigned: %v, want ErrNoSignature naming ferry.lock.sig", err)
	}
	if err := c.SignFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := signature.VerifyFile(k, path)
	if err != nil {
		t.Fatalf("signed: %v", err)
	}
	if string(got) != string(content) {
		t.Errorf("VerifyFile returned %q, want the file's bytes", got)
	}
	// One byte more, even a trailing newline, is another file.
	write(append(append([]byte{}, content...), '\n'))
	if _, err := signature.VerifyFile(k, path); !errors.Is(err, signature.ErrInvalid) || !signature.IsMismatch(err) {
		t.Errorf("changed after signing: %v, want ErrInvalid", err)
	}
	if _, err := signature.VerifyFile(k, filepath.Join(dir, "nope.lock")); err == nil || signature.IsMismatch(err) {
		t.Errorf("missing file: %v, want a plain I/O error", err)
	}
}

// TestLoadPublicKeyKMSReference: a KMS key reference cannot be resolved
// offline; it is bad input naming how to export the key, not a file error.
func TestLoadPublicKeyKMSReference(t *testing.T) {
	for _, ref := range []string{"awskms:///arn:aws:kms:us-east-1:1:key/k", "gcpkms://projects/p/locations/l/keyRings/r/cryptoKeys/k", "azurekms://v.vault.azure.net/k", "hashivault://k", "k8s://ns/secret", "pkcs11:token=t"} {
		t.Run(ref, func(t *testing.T) {
			_, err := signature.LoadPublicKey(ref)
			if err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "cosign public-key --key") {
				t.Fatalf("LoadPublicKey(%q) = %v, want bad input naming cosign public-key", ref, err)
			}
		})
	}
}
