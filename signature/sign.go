package signature

// Signing a file as `cosign sign-blob --key cosign.key` does, so that a
// lock ferry writes carries its signature (LOCK.sig) without a second tool.
//
// The key is the file `cosign generate-key-pair` writes (sigstore/cosign
// pkg/cosign/keys.go): PEM of type "ENCRYPTED SIGSTORE PRIVATE KEY" (older
// cosign: "ENCRYPTED COSIGN PRIVATE KEY"), whose body is the JSON of
// go-securesystemslib's encrypted package (encrypted/encrypted.go):
//
//	{"kdf": {"name": "scrypt", "params": {"N":…, "r":…, "p":…}, "salt": …},
//	 "cipher": {"name": "nacl/secretbox", "nonce": …}, "ciphertext": …}
//
// The secretbox key is scrypt(password, salt, N, r, p, 32); the plaintext
// is a PKCS #8 private key. The signature file is the base64 of the
// signature: ECDSA (ASN.1) over the SHA-256 of the file's bytes, RSA PKCS
// #1 v1.5 over its SHA-256, Ed25519 over the bytes themselves, as
// sigstore's signers sign with cosign's default SHA-256.

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/crypto/nacl/secretbox"
	"golang.org/x/crypto/scrypt"

	"github.com/ferryhq/ferry/errkind"
)

// PEM types of cosign's encrypted private keys (sigstore/cosign
// pkg/cosign/keys.go: SigstorePrivateKeyPemType, CosignPrivateKeyPemType).
const (
	SigstorePrivateKeyPEMType = "ENCRYPTED SIGSTORE PRIVATE KEY"
	CosignPrivateKeyPEMType   = "ENCRYPTED COSIGN PRIVATE KEY"
)

// PasswordEnv is the environment variable cosign reads a key's password
// from; ferry reads it too.
const PasswordEnv = "COSIGN_PASSWORD"

// maxKeyFile bounds a private key file: an encrypted RSA-8192 key is under
// 10 KiB.
const maxKeyFile = 64 << 10

// ScryptParams are scrypt's cost parameters.
type ScryptParams struct {
	N int `json:"N"`
	R int `json:"r"`
	P int `json:"p"`
}

// The KDF parameters go-securesystemslib accepts (encrypted.go:
// legacyParams, which cosign's generate-key-pair writes, standardParams and
// OWASPParams). Others are refused, as there: a tampered key file with a
// huge N would otherwise take all the memory.
var (
	ScryptLegacy   = ScryptParams{N: 1 << 15, R: 8, P: 1}
	ScryptStandard = ScryptParams{N: 1 << 16, R: 8, P: 1}
	ScryptOWASP    = ScryptParams{N: 1 << 17, R: 8, P: 1}
)

const (
	kdfScrypt       = "scrypt"
	cipherSecretBox = "nacl/secretbox"
	boxKeySize      = 32
	boxNonceSize    = 24
	saltSize        = 32
)

// encryptedKey is go-securesystemslib's encrypted "data" JSON.
type encryptedKey struct {
	KDF struct {
		Name   string       `json:"name"`
		Params ScryptParams `json:"params"`
		Salt   []byte       `json:"salt"`
	} `json:"kdf"`
	Cipher struct {
		Name  string `json:"name"`
		Nonce []byte `json:"nonce"`
	} `json:"cipher"`
	Ciphertext []byte `json:"ciphertext"`
}

// PrivateKey is a cosign signing key.
type PrivateKey struct {
	signer crypto.Signer
	// Source names where the key came from, for messages.
	Source string
}

// PublicPEM returns the key's public half as cosign.pub holds it (PEM
// "PUBLIC KEY", PKIX).
func (k *PrivateKey) PublicPEM() ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(k.signer.Public())
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// Public returns the key's public half as a verification key.
func (k *PrivateKey) Public() (*PublicKey, error) {
	b, err := k.PublicPEM()
	if err != nil {
		return nil, err
	}
	return ParsePublicKey(b)
}

// LoadPrivateKey reads and decrypts a cosign private key file (cosign.key)
// with password. A missing, malformed or undecryptable file is bad input
// (exit code 2); the password never appears in an error.
func LoadPrivateKey(path string, password []byte) (*PrivateKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, errkind.Markf(errkind.BadInput, "reading private key: %w", err)
	}
	if fi.Size() > maxKeyFile {
		return nil, errkind.Markf(errkind.BadInput, "%s is %d bytes, not a cosign private key", path, fi.Size())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errkind.Markf(errkind.BadInput, "reading private key: %w", err)
	}
	k, err := ParsePrivateKey(data, password)
	if err != nil {
		return nil, errkind.Markf(errkind.BadInput, "%s: %w", path, err)
	}
	k.Source = path
	return k, nil
}

// ParsePrivateKey decrypts a cosign private key, as cosign's
// loadPrivateKey does (pkg/cosign/keys.go): the first PEM block, of one of
// cosign's encrypted types, decrypted with password to a PKCS #8 ECDSA,
// RSA or Ed25519 key.
func ParsePrivateKey(pemBytes, password []byte) (*PrivateKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("not a PEM private key (want cosign.key, -----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----)")
	}
	if block.Type != SigstorePrivateKeyPEMType && block.Type != CosignPrivateKeyPEMType {
		return nil, fmt.Errorf("PEM type %q is not a cosign private key (want %q)", block.Type, SigstorePrivateKeyPEMType)
	}
	der, err := decrypt(block.Bytes, password)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("parsing the decrypted private key: %w", err)
	}
	switch s := key.(type) {
	case *ecdsa.PrivateKey:
		return &PrivateKey{signer: s}, nil
	case *rsa.PrivateKey:
		return &PrivateKey{signer: s}, nil
	case ed25519.PrivateKey:
		return &PrivateKey{signer: s}, nil
	}
	return nil, fmt.Errorf("unsupported private key type %T: cosign keys are ECDSA, RSA or Ed25519", key)
}

// decrypt opens go-securesystemslib's encrypted JSON (encrypted.Decrypt).
func decrypt(data, password []byte) ([]byte, error) {
	var e encryptedKey
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("the encrypted key is not cosign's JSON: %w", err)
	}
	if e.KDF.Name != kdfScrypt {
		return nil, fmt.Errorf("unsupported key derivation %q (want %q)", e.KDF.Name, kdfScrypt)
	}
	if e.Cipher.Name != cipherSecretBox {
		return nil, fmt.Errorf("unsupported cipher %q (want %q)", e.Cipher.Name, cipherSecretBox)
	}
	switch e.KDF.Params {
	case ScryptLegacy, ScryptStandard, ScryptOWASP:
	default:
		return nil, fmt.Errorf("unexpected scrypt parameters N=%d r=%d p=%d", e.KDF.Params.N, e.KDF.Params.R, e.KDF.Params.P)
	}
	if len(e.Cipher.Nonce) != boxNonceSize {
		return nil, fmt.Errorf("the cipher's nonce is %d bytes, want %d", len(e.Cipher.Nonce), boxNonceSize)
	}
	k, err := scrypt.Key(password, e.KDF.Salt, e.KDF.Params.N, e.KDF.Params.R, e.KDF.Params.P, boxKeySize)
	if err != nil {
		return nil, fmt.Errorf("deriving the key: %w", err)
	}
	var key [boxKeySize]byte
	var nonce [boxNonceSize]byte
	copy(key[:], k)
	copy(nonce[:], e.Cipher.Nonce)
	out, ok := secretbox.Open(nil, e.Ciphertext, &nonce, &key)
	if !ok {
		return nil, errors.New("decryption failed: wrong password (" + PasswordEnv + ") or a damaged key")
	}
	return out, nil
}

// EncryptPrivateKey writes key in cosign's encrypted PEM format ("ENCRYPTED
// SIGSTORE PRIVATE KEY", KDF params p), as `cosign generate-key-pair`
// does. ferry itself does not make keys; this is for tests and tooling
// that need a key cosign reads.
func EncryptPrivateKey(key crypto.Signer, password []byte, p ScryptParams) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	var e encryptedKey
	e.KDF.Name, e.KDF.Params = kdfScrypt, p
	e.KDF.Salt = make([]byte, saltSize)
	e.Cipher.Name = cipherSecretBox
	e.Cipher.Nonce = make([]byte, boxNonceSize)
	if _, err := io.ReadFull(rand.Reader, e.KDF.Salt); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(rand.Reader, e.Cipher.Nonce); err != nil {
		return nil, err
	}
	k, err := scrypt.Key(password, e.KDF.Salt, p.N, p.R, p.P, boxKeySize)
	if err != nil {
		return nil, err
	}
	var bk [boxKeySize]byte
	var nonce [boxNonceSize]byte
	copy(bk[:], k)
	copy(nonce[:], e.Cipher.Nonce)
	e.Ciphertext = secretbox.Seal(nil, der, &nonce, &bk)
	body, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: SigstorePrivateKeyPEMType, Bytes: body}), nil
}

// Sign returns the raw signature over message, as cosign's signers sign a
// blob: ECDSA ASN.1 and RSA PKCS #1 v1.5 over its SHA-256, Ed25519 over
// the message.
func (k *PrivateKey) Sign(message []byte) ([]byte, error) {
	switch s := k.signer.(type) {
	case ed25519.PrivateKey:
		return ed25519.Sign(s, message), nil
	case *ecdsa.PrivateKey:
		sum := sha256.Sum256(message)
		return ecdsa.SignASN1(rand.Reader, s, sum[:])
	case *rsa.PrivateKey:
		sum := sha256.Sum256(message)
		return rsa.SignPKCS1v15(rand.Reader, s, crypto.SHA256, sum[:])
	}
	return nil, fmt.Errorf("unsupported private key type %T", k.signer)
}

// SignBlob returns the content of a cosign blob signature file over data:
// the base64 of the signature, as `cosign sign-blob --output-signature`
// writes it (no newline).
func (k *PrivateKey) SignBlob(data []byte) ([]byte, error) {
	sig, err := k.Sign(data)
	if err != nil {
		return nil, err
	}
	return []byte(base64.StdEncoding.EncodeToString(sig)), nil
}

// SignFile signs data, the exact bytes of the file at path, and writes the
// signature to path+".sig" atomically (a temporary file renamed into
// place). The signature is checked with the key's public half before it is
// written.
func SignFile(k *PrivateKey, path string, data []byte) error {
	sig, err := k.SignBlob(data)
	if err != nil {
		return fmt.Errorf("signing %s: %w", path, err)
	}
	pub, err := k.Public()
	if err != nil {
		return fmt.Errorf("signing %s: %w", path, err)
	}
	if err := pub.Verify(data, DecodeBlobSignature(sig)); err != nil {
		return fmt.Errorf("signing %s: the signature does not verify: %w", path, err)
	}
	return writeAtomic(path+SigSuffix, sig)
}

// writeAtomic writes data to path through a synced temporary file in the
// same directory.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
