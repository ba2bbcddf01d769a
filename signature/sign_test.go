package signature

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/cosigntest"
)

// The keys here are written by EncryptPrivateKey in cosign's format with
// the real scrypt and secretbox; TestCosignInterop uses cosign itself.

func genKey(t *testing.T, alg string) crypto.Signer {
	t.Helper()
	var (
		k   crypto.Signer
		err error
	)
	switch alg {
	case "ecdsa-p256":
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "rsa-2048":
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ed25519":
		_, k, err = ed25519.GenerateKey(rand.Reader)
	}
	if err != nil || k == nil {
		t.Fatalf("generating %s: %v", alg, err)
	}
	return k
}

func pubPEM(t *testing.T, k crypto.Signer) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func TestSignFileVerifies(t *testing.T) {
	password := []byte("correct horse")
	for _, alg := range []string{"ecdsa-p256", "rsa-2048", "ed25519"} {
		t.Run(alg, func(t *testing.T) {
			dir := t.TempDir()
			k := genKey(t, alg)
			enc, err := EncryptPrivateKey(k, password, ScryptLegacy)
			if err != nil {
				t.Fatal(err)
			}
			keyPath := filepath.Join(dir, "cosign.key")
			if err := os.WriteFile(keyPath, enc, 0o600); err != nil {
				t.Fatal(err)
			}
			priv, err := LoadPrivateKey(keyPath, password)
			if err != nil {
				t.Fatalf("LoadPrivateKey: %v", err)
			}
			pub, err := ParsePublicKey(pubPEM(t, k))
			if err != nil {
				t.Fatal(err)
			}
			lockPath := filepath.Join(dir, "ferry.lock")
			data := []byte("apiVersion: ferry.dev/v1\nkind: Lock\n")
			if err := os.WriteFile(lockPath, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := SignFile(priv, lockPath, data); err != nil {
				t.Fatalf("SignFile: %v", err)
			}
			got, err := VerifyFile(pub, lockPath)
			if err != nil {
				t.Fatalf("VerifyFile of the signed file: %v", err)
			}
			if string(got) != string(data) {
				t.Fatalf("VerifyFile returned %q, want %q", got, data)
			}
			// The signature file is base64 with no newline, as sign-blob
			// --output-signature writes it.
			sig, err := os.ReadFile(lockPath + SigSuffix)
			if err != nil {
				t.Fatal(err)
			}
			if strings.ContainsAny(string(sig), "\n\r") {
				t.Fatalf("signature file has a newline: %q", sig)
			}
			// An edit after signing does not verify.
			if err := os.WriteFile(lockPath, append(data, '#'), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := VerifyFile(pub, lockPath); err == nil {
				t.Fatalf("VerifyFile of an edited file passed")
			}
		})
	}
}

func TestParsePrivateKeyRefuses(t *testing.T) {
	password := []byte("pw")
	k := genKey(t, "ecdsa-p256")
	good, err := EncryptPrivateKey(k, password, ScryptLegacy)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(good)
	var body map[string]any
	if err := json.Unmarshal(block.Bytes, &body); err != nil {
		t.Fatal(err)
	}
	rewrite := func(typ string, edit func(map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(block.Bytes, &m); err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(m)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b})
	}
	tests := []struct {
		name     string
		key      []byte
		password []byte
		want     string
	}{
		{"wrong password", good, []byte("nope"), "wrong password"},
		{"not PEM", []byte("hello"), password, "not a PEM"},
		{"public key", pubPEM(t, k), password, "not a cosign private key"},
		{"huge scrypt N", rewrite(SigstorePrivateKeyPEMType, func(m map[string]any) {
			m["kdf"].(map[string]any)["params"].(map[string]any)["N"] = 1 << 30
		}), password, "unexpected scrypt parameters"},
		{"other cipher", rewrite(SigstorePrivateKeyPEMType, func(m map[string]any) {
			m["cipher"].(map[string]any)["name"] = "aes-gcm"
		}), password, "unsupported cipher"},
		{"older cosign PEM type", rewrite(CosignPrivateKeyPEMType, nil), password, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePrivateKey(tt.key, tt.password)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("ParsePrivateKey: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParsePrivateKey: %v, want an error with %q", err, tt.want)
			}
			if strings.Contains(err.Error(), string(tt.password)) {
				t.Fatalf("error %q carries the password", err)
			}
		})
	}
}

// TestCosignInterop runs cosign (internal/cosigntest: in process, or the
// real CLI with FERRY_INTEROP=1):
// a key written by cosign generate-key-pair decrypts, and cosign
// verify-blob accepts ferry's signature over a file.
func TestCosignInterop(t *testing.T) {
	c := cosigntest.V2(t)
	keyPath, pubPath := c.GenerateKeyPair(t)
	priv, err := LoadPrivateKey(keyPath, []byte(cosigntest.Password))
	if err != nil {
		t.Fatalf("decrypting cosign's key: %v", err)
	}
	pubPEM, err := os.ReadFile(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	own, err := priv.PublicPEM()
	if err != nil {
		t.Fatal(err)
	}
	if string(own) != string(pubPEM) {
		t.Fatalf("the decrypted key's public half is not cosign.pub:\n%s\n%s", own, pubPEM)
	}
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "ferry.lock")
	data := []byte("apiVersion: ferry.dev/v1alpha1\nkind: Lock\n")
	if err := os.WriteFile(lockPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SignFile(priv, lockPath, data); err != nil {
		t.Fatal(err)
	}
	sigPath := filepath.Join(dir, "ferry.lock.sig")
	if err := c.VerifyBlob(t, pubPath, sigPath, lockPath); err != nil {
		t.Fatalf("cosign verify-blob refused ferry's signature: %v", err)
	}
	// cosign refuses the signature once the file changes.
	if err := os.WriteFile(lockPath, append(data, '#'), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyBlob(t, pubPath, sigPath, lockPath); err == nil {
		t.Fatal("cosign verify-blob accepted a signature over an edited file")
	}
}
