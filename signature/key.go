// Package signature verifies cosign signatures with the Go standard library
// alone: blob signatures as `cosign sign-blob` writes them (a lock's
// LOCK.sig), and container image signatures as `cosign sign` stores them
// beside an image, in a manifest tagged sha256-HEX.sig. ferry verifies; it
// never signs.
//
// Keys are cosign's public keys (cosign.pub): PEM "PUBLIC KEY" (PKIX), or
// "RSA PUBLIC KEY" (PKCS #1), as sigstore's cryptoutils reads them. A
// signature verifies as sigstore's verifiers do with cosign's default
// SHA-256: ECDSA over the message's SHA-256 (ASN.1 DER; P-384 and P-521 keys
// also over SHA-384 and SHA-512, which newer cosign picks for them), RSA
// PKCS #1 v1.5 or PSS over SHA-256, and Ed25519 over the message itself or,
// as cosign signs when it uploads to a transparency log, Ed25519ph over its
// SHA-512.
package signature

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ferryhq/ferry/exitcode"
)

// Errors a check reports: the signature and what it should sign disagree.
// Anything else (a registry that cannot be reached, an unreadable file) is
// a failure to check, not a disagreement. Use IsMismatch to tell them
// apart.
var (
	// ErrNoSignature: there is no signature where cosign puts it.
	ErrNoSignature = errors.New("no signature")
	// ErrInvalid: a signature is there but does not verify, is malformed,
	// or signs something else.
	ErrInvalid = errors.New("signature does not verify")
)

// IsMismatch reports whether err says a signature is missing or invalid,
// as opposed to a failure to look.
func IsMismatch(err error) bool {
	return errors.Is(err, ErrNoSignature) || errors.Is(err, ErrInvalid)
}

// mismatch is an error that is one of the sentinel kinds while saying
// what happened in its own words.
type mismatch struct {
	kind error
	msg  string
}

func (e *mismatch) Error() string        { return e.msg }
func (e *mismatch) Is(target error) bool { return target == e.kind }

func invalidf(format string, args ...any) error {
	return &mismatch{kind: ErrInvalid, msg: fmt.Sprintf(format, args...)}
}

func missingf(format string, args ...any) error {
	return &mismatch{kind: ErrNoSignature, msg: fmt.Sprintf(format, args...)}
}

// PublicKey is a cosign verification key.
type PublicKey struct {
	key crypto.PublicKey
	// Source names where the key came from, for messages.
	Source string
}

// LoadPublicKey reads a cosign public key file (cosign.pub). A missing,
// unreadable or malformed file is bad input (exit code 2).
func LoadPublicKey(path string) (*PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, exitcode.BadInput("reading public key: %w", err)
	}
	k, err := ParsePublicKey(data)
	if err != nil {
		return nil, exitcode.BadInput("%s: %w", path, err)
	}
	k.Source = path
	return k, nil
}

// ParsePublicKey parses a PEM public key as cosign does: the first PEM
// block, of type "PUBLIC KEY" (PKIX) or "RSA PUBLIC KEY" (PKCS #1), holding
// an ECDSA, RSA or Ed25519 key.
func ParsePublicKey(pemBytes []byte) (*PublicKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("not a PEM public key (want cosign.pub, -----BEGIN PUBLIC KEY-----)")
	}
	var (
		pub crypto.PublicKey
		err error
	)
	switch {
	case block.Type == "PUBLIC KEY":
		pub, err = x509.ParsePKIXPublicKey(block.Bytes)
	case block.Type == "RSA PUBLIC KEY":
		pub, err = x509.ParsePKCS1PublicKey(block.Bytes)
	case strings.Contains(block.Type, "PRIVATE KEY"):
		return nil, fmt.Errorf("is a private key (%s): ferry verifies only; pass the public key, cosign.pub", block.Type)
	default:
		return nil, fmt.Errorf("unknown public key PEM type %q: pass the public key, cosign.pub", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("parsing public key: %w", err)
	}
	switch pub.(type) {
	case *ecdsa.PublicKey, *rsa.PublicKey, ed25519.PublicKey:
		return &PublicKey{key: pub}, nil
	}
	return nil, fmt.Errorf("unsupported public key type %T: cosign keys are ECDSA, RSA or Ed25519", pub)
}

// Algorithm describes the key, for messages: "ECDSA P-256", "RSA 3072",
// "Ed25519".
func (k *PublicKey) Algorithm() string {
	switch pub := k.key.(type) {
	case *ecdsa.PublicKey:
		return "ECDSA " + pub.Curve.Params().Name
	case *rsa.PublicKey:
		return fmt.Sprintf("RSA %d", pub.N.BitLen())
	case ed25519.PublicKey:
		return "Ed25519"
	}
	return fmt.Sprintf("%T", k.key)
}

// Verify checks the raw signature sig over message. A signature that does
// not verify is ErrInvalid.
func (k *PublicKey) Verify(message, sig []byte) error {
	if len(sig) == 0 {
		return invalidf("the signature is empty")
	}
	ok := false
	switch pub := k.key.(type) {
	case *ecdsa.PublicKey:
		for _, h := range ecdsaHashes(pub.Curve) {
			if ecdsa.VerifyASN1(pub, digestOf(h, message), sig) {
				ok = true
				break
			}
		}
	case *rsa.PublicKey:
		sum := sha256.Sum256(message)
		ok = rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) == nil ||
			rsa.VerifyPSS(pub, crypto.SHA256, sum[:], sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto}) == nil
	case ed25519.PublicKey:
		sum := sha512.Sum512(message)
		ok = ed25519.Verify(pub, message, sig) ||
			ed25519.VerifyWithOptions(pub, sum[:], sig, &ed25519.Options{Hash: crypto.SHA512}) == nil
	}
	if !ok {
		return invalidf("signature does not verify with the %s key %s", k.Algorithm(), k.name())
	}
	return nil
}

func (k *PublicKey) name() string {
	if k.Source == "" {
		return "given"
	}
	return k.Source
}

// ecdsaHashes are the digests an ECDSA signature is accepted over: cosign's
// default SHA-256 for every curve, and the curve's own size, which newer
// cosign signs P-384 and P-521 keys with.
func ecdsaHashes(c elliptic.Curve) []crypto.Hash {
	switch c.Params().BitSize {
	case 384:
		return []crypto.Hash{crypto.SHA256, crypto.SHA384}
	case 521:
		return []crypto.Hash{crypto.SHA256, crypto.SHA512}
	}
	return []crypto.Hash{crypto.SHA256}
}

func digestOf(h crypto.Hash, message []byte) []byte {
	switch h {
	case crypto.SHA384:
		s := sha512.Sum384(message)
		return s[:]
	case crypto.SHA512:
		s := sha512.Sum512(message)
		return s[:]
	}
	s := sha256.Sum256(message)
	return s[:]
}

// DecodeBlobSignature reads the content of a signature file as `cosign
// verify-blob --signature` does: base64 (as `cosign sign-blob` writes it,
// with or without the newline its standard output adds), else the raw
// signature bytes (`--b64=false`).
func DecodeBlobSignature(data []byte) []byte {
	// The standard decoder skips \r and \n.
	if raw, err := base64.StdEncoding.DecodeString(string(data)); err == nil {
		return raw
	}
	return data
}
